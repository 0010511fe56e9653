// ChangeWatch: a reader of the store wakes when another process commits, never misses a commit
// made after the watch was set up, and leaves nothing behind (its FIFO goes with it, and a FIFO
// left by a reader that died is removed by the next commit).
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "state/change_watch.hpp"
#include "state/home.hpp"
#include "state/store.hpp"
#include "tests/support/process.hpp"

using namespace team;
using team::test::TempDir;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> wake_entries(const fs::path& home) {
    std::vector<std::string> out;
    if (!fs::exists(home / "wake")) return out;
    for (const auto& e : fs::directory_iterator(home / "wake")) out.push_back(e.path().filename());
    return out;
}

// A child process that commits once to the store of `home` after `delay_ms`.
pid_t commit_later(const fs::path& home, int delay_ms) {
    pid_t pid = ::fork();
    if (pid == 0) {
        ::usleep(static_cast<useconds_t>(delay_ms) * 1000);
        try {
            Store store(home);
            store.write([&] { store.db().exec("INSERT INTO t VALUES (1)"); });
        } catch (...) {
            ::_exit(1);
        }
        ::_exit(0);
    }
    return pid;
}

int exit_status(pid_t pid) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

struct Home {
    TempDir tmp;
    fs::path path = tmp.path() / "home";
    Home() {
        ensure_home(path);
        Store store(path);
        store.write([&] { store.db().exec("CREATE TABLE t (x)"); });
    }
};

}  // namespace

TEST_CASE("a watch wakes when another process commits, and times out without one",
          "[change_watch]") {
    Home home;
    ChangeWatch watch(home.path);
    CHECK_FALSE(watch.wait_until(Clock::now() + std::chrono::milliseconds(50)));
    pid_t child = commit_later(home.path, 50);
    bool woken = false;
    auto deadline = Clock::now() + std::chrono::seconds(20);
    while (!woken && Clock::now() < deadline) woken = watch.wait_until(deadline);
    CHECK(woken);
    CHECK(exit_status(child) == 0);
}

TEST_CASE("a commit made after the watch but before the wait is not missed", "[change_watch]") {
    Home home;
    ChangeWatch watch(home.path);
    pid_t child = commit_later(home.path, 0);
    REQUIRE(exit_status(child) == 0);  // committed before anyone waits
    CHECK(watch.wait_until(Clock::now() + std::chrono::seconds(20)));
    // The wake was consumed: the next wait sleeps until the deadline.
    CHECK_FALSE(watch.wait_until(Clock::now() + std::chrono::milliseconds(30)));
}

TEST_CASE("a watch's FIFO goes with it, and a dead reader's FIFO goes at the next commit",
          "[change_watch]") {
    Home home;
    {
        ChangeWatch watch(home.path);
        auto entries = wake_entries(home.path);
        REQUIRE(entries.size() == 1);
        CHECK(entries[0].rfind("w-", 0) == 0);
        struct stat st {};
        REQUIRE(::stat((home.path / "wake" / entries[0]).c_str(), &st) == 0);
        CHECK(S_ISFIFO(st.st_mode));
        CHECK((st.st_mode & 0777) == 0600);
    }
    CHECK(wake_entries(home.path).empty());

    // A reader killed while it waits leaves its FIFO; the next commit removes it, and wakes a
    // live reader all the same.
    int ready[2];
    REQUIRE(::pipe(ready) == 0);
    pid_t reader = ::fork();
    if (reader == 0) {
        ChangeWatch watch(home.path);
        (void)!::write(ready[1], "x", 1);
        ::pause();
        ::_exit(0);
    }
    char c;
    REQUIRE(::read(ready[0], &c, 1) == 1);
    ::kill(reader, SIGKILL);
    ::waitpid(reader, nullptr, 0);
    ::close(ready[0]);
    ::close(ready[1]);
    REQUIRE(wake_entries(home.path).size() == 1);

    ChangeWatch live(home.path);
    REQUIRE(wake_entries(home.path).size() == 2);
    announce_change(home.path);
    CHECK(wake_entries(home.path).size() == 1);  // the live one only
    CHECK(live.wait_until(Clock::now() + std::chrono::seconds(20)));
}

TEST_CASE("where no FIFO can be made, a watch falls back to inotify and still wakes",
          "[change_watch]") {
    Home home;
    { std::ofstream(home.path / "wake") << "not a directory"; }
    ChangeWatch watch(home.path);
    pid_t child = commit_later(home.path, 20);
    bool woken = false;
    auto deadline = Clock::now() + std::chrono::seconds(20);
    while (!woken && Clock::now() < deadline) woken = watch.wait_until(deadline);
    CHECK(woken);
    CHECK(exit_status(child) == 0);
}
