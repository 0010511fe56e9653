#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <optional>

#include "state/team_lock.hpp"
#include "tests/support/process.hpp"

using namespace team;
using team::test::TempDir;

namespace {

// Forks a child that takes the lock, tells us through a pipe, optionally starts `sleep` (which
// must not inherit the lock), then waits to be killed. Returns {child, sleeper} pids.
std::pair<pid_t, pid_t> child_holding_lock(const std::filesystem::path& home, bool with_sleeper) {
    int ready[2];
    REQUIRE(::pipe(ready) == 0);
    pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        TeamLock lock(home, "web");
        pid_t sleeper = 0;
        if (with_sleeper) {
            sleeper = ::fork();
            if (sleeper == 0) {
                ::execl("/bin/sleep", "sleep", "30", static_cast<char*>(nullptr));
                ::_exit(127);
            }
        }
        (void)!::write(ready[1], &sleeper, sizeof sleeper);
        ::pause();
        ::_exit(0);
    }
    ::close(ready[1]);
    pid_t sleeper = 0;
    REQUIRE(::read(ready[0], &sleeper, sizeof sleeper) == sizeof sleeper);
    ::close(ready[0]);
    return {child, sleeper};
}

}  // namespace

// Whether the team's lock could be had at once: the flock TeamLock takes, tried without blocking
// on a description of our own (flock locks belong to open file descriptions, so one held by a
// TeamLock of this process counts as held too).
static bool lockable(const std::filesystem::path& home, const std::string& team) {
    ::mkdir((home / "locks").c_str(), 0700);
    int fd = ::open(TeamLock::path(home, team).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    REQUIRE(fd >= 0);
    bool free = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
    ::close(fd);
    return free;
}

TEST_CASE("the team lock excludes other processes", "[lock]") {
    TempDir tmp;
    auto [child, sleeper] = child_holding_lock(tmp.path(), false);
    CHECK_FALSE(lockable(tmp.path(), "web"));
    CHECK(lockable(tmp.path(), "api"));  // other teams are not blocked
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
}

TEST_CASE("a lock held by a SIGKILLed process blocks no one", "[lock]") {
    TempDir tmp;
    auto [child, sleeper] = child_holding_lock(tmp.path(), true);
    CHECK_FALSE(lockable(tmp.path(), "web"));
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    // The sleeper the holder started is still alive, but must not have inherited the lock.
    CHECK(::kill(sleeper, 0) == 0);
    auto start = std::chrono::steady_clock::now();
    TeamLock lock(tmp.path(), "web");  // blocking acquire returns at once
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
    ::kill(sleeper, SIGKILL);
    // The sleeper was our grandchild; it was reparented, so it is reaped elsewhere.
}

TEST_CASE("the lock is released when its holder goes out of scope", "[lock]") {
    TempDir tmp;
    {
        std::optional<TeamLock> lock;
        lock.emplace(tmp.path(), "web");
        auto moved = std::move(*lock);
        lock.reset();  // a moved-from lock must not release the moved one
        pid_t pid = ::fork();
        if (pid == 0) ::_exit(lockable(tmp.path(), "web") ? 1 : 0);
        int status = 0;
        ::waitpid(pid, &status, 0);
        CHECK(WEXITSTATUS(status) == 0);  // still held by `moved`
    }
    CHECK(lockable(tmp.path(), "web"));
}
