#include <SQLiteCpp/SQLiteCpp.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <thread>

#include "base/error.hpp"
#include "state/home.hpp"
#include "state/sqlite_db.hpp"
#include "state/store.hpp"
#include "tests/support/fork.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/probe.hpp"
#include "tests/support/process.hpp"

using namespace team;
using team::test::TempDir;

namespace {
int mode_of(const std::filesystem::path& p) {
    struct stat st {};
    REQUIRE(::stat(p.c_str(), &st) == 0);
    return st.st_mode & 07777;
}
}  // namespace

TEST_CASE("a new home is 0700 and its database 0600, whatever the umask", "[store]") {
    TempDir tmp;
    auto home = tmp.path() / "a" / "b" / "home";
    mode_t old = ::umask(0);
    ensure_home(home);
    {
        Store store(home);
        store.write([&] { store.db().exec("CREATE TABLE t (x)"); });
    }
    ::umask(old);
    CHECK(mode_of(home) == 0700);
    CHECK(mode_of(tmp.path() / "a") == 0700);
    CHECK(mode_of(home / "team.db") == 0600);
    for (const char* extra : {"team.db-wal", "team.db-shm"}) {
        if (std::filesystem::exists(home / extra)) CHECK(mode_of(home / extra) == 0600);
    }
}

TEST_CASE("a home that is a file is a clear error", "[store]") {
    TempDir tmp;
    auto file = tmp.path() / "file";
    { std::ofstream(file) << "x"; }
    CHECK_THROWS_WITH(ensure_home(file), Catch::Contains("is not a directory"));
}

TEST_CASE("every connection has WAL, a busy timeout, foreign keys and full sync", "[store]") {
    TempDir tmp;
    Store store(tmp.path());
    auto& db = store.db();
    CHECK(team::test::exec_and_get(db, "PRAGMA journal_mode").getString() == "wal");
    CHECK(team::test::exec_and_get(db, "PRAGMA busy_timeout").getInt() == Store::kBusyTimeoutMs);
    CHECK(team::test::exec_and_get(db, "PRAGMA foreign_keys").getInt() == 1);
    CHECK(team::test::exec_and_get(db, "PRAGMA synchronous").getInt() == 2);  // FULL
}

TEST_CASE("a write that throws leaves nothing behind", "[store]") {
    TempDir tmp;
    Store store(tmp.path());
    store.write([&] { store.db().exec("CREATE TABLE t (x INTEGER)"); });
    CHECK_THROWS_AS(store.write([&] {
        store.db().exec("INSERT INTO t VALUES (1)");
        throw refused("no");
    }),
                    Error);
    CHECK(team::test::exec_and_get(store.db(), "SELECT count(*) FROM t").getInt() == 0);
    CHECK(store.write(
              [&] { return team::Statement(store.db(), "INSERT INTO t VALUES (2)").exec(); }) == 1);
    CHECK(team::test::exec_and_get(store.db(), "SELECT count(*) FROM t").getInt() == 1);
}

TEST_CASE("read-check-writes from many processes lose no update and never see 'locked'",
          "[store][concurrency]") {
    TempDir tmp;
    {
        Store store(tmp.path());
        store.db().exec("CREATE TABLE counter (n INTEGER); INSERT INTO counter VALUES (0)");
    }
    constexpr int kProcesses = 8, kIncrements = 50;
    auto codes = team::test::run_in_children(kProcesses, [&](int) {
        Store store(tmp.path());
        for (int i = 0; i < kIncrements; ++i) {
            store.write([&] {
                int n = team::test::exec_and_get(store.db(), "SELECT n FROM counter").getInt();
                team::Statement up(store.db(), "UPDATE counter SET n = ?");
                up.bind(1, n + 1);
                up.exec();
            });
        }
        return 0;
    });
    for (int code : codes) CHECK(code == 0);
    Store store(tmp.path());
    CHECK(team::test::exec_and_get(store.db(), "SELECT n FROM counter").getInt() ==
          kProcesses * kIncrements);
}

TEST_CASE("a writer waits for its turn behind another process's and then commits",
          "[store][concurrency]") {
    TempDir tmp;
    {
        Store store(tmp.path());
        store.db().exec("CREATE TABLE t (n INTEGER)");
    }
    // Another process holds the writers' turn for a moment, as a writer in its transaction.
    int fd =
        ::open((tmp.path() / "team.db.write.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    REQUIRE(fd >= 0);
    REQUIRE(::flock(fd, LOCK_EX) == 0);
    pid_t child = ::fork();
    if (child == 0) {
        ::close(fd);  // the parent's lock must end with the parent's close
        try {
            Store store(tmp.path());
            store.write([&] { store.db().exec("INSERT INTO t VALUES (1)"); });
            ::_exit(0);
        } catch (...) {
            ::_exit(1);
        }
    }
    // It waits for the turn (the kernel lists it as a waiter on the lock).
    REQUIRE(team::test::eventually([&] { return team::test::waiting_for_lock(child); }));
    auto rows = [&] {
        SQLite::Database db((tmp.path() / "team.db").string(), SQLite::OPEN_READONLY);
        return team::test::exec_and_get(db, "SELECT count(*) FROM t").getInt();
    };
    CHECK(rows() == 0);  // still waiting for its turn
    ::close(fd);         // the turn is free
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    CHECK(rows() == 1);
}

namespace {
// A child that, inside its write, tells the parent (one byte on `told`) and then takes `slow`
// before committing, or is killed there (`die`).
pid_t writer_that_tells(const std::filesystem::path& home, int told, std::chrono::milliseconds slow,
                        bool die) {
    pid_t child = ::fork();
    if (child != 0) return child;
    try {
        Store store(home);
        store.write([&] {
            store.db().exec("INSERT INTO t VALUES (1)");
            (void)!::write(told, "x", 1);
            std::this_thread::sleep_for(slow);
            if (die) ::raise(SIGKILL);
        });
        ::_exit(0);
    } catch (...) {
        ::_exit(1);
    }
}
}  // namespace

TEST_CASE("await_writer returns once the write under way has committed, however slow",
          "[store][concurrency]") {
    // A command wakes a supervisor inside its write; the supervisor must read after that
    // commit (issue 8: a fixed one-second wait missed a commit slowed on a loaded machine).
    TempDir tmp;
    {
        Store store(tmp.path());
        store.db().exec("CREATE TABLE t (n INTEGER)");
    }
    // No connection is open across a fork: the parent's opens after it.
    auto rows = [&] {
        SQLite::Database db((tmp.path() / "team.db").string(), SQLite::OPEN_READONLY);
        return team::test::exec_and_get(db, "SELECT count(*) FROM t").getInt();
    };
    int pipe_fds[2];
    REQUIRE(::pipe(pipe_fds) == 0);

    SECTION("committed after 1.5 s") {
        pid_t child =
            writer_that_tells(tmp.path(), pipe_fds[1], std::chrono::milliseconds(1500), false);
        char c;
        REQUIRE(::read(pipe_fds[0], &c, 1) == 1);  // the writer holds its turn now
        CHECK(rows() == 0);
        Store store(tmp.path());
        CHECK(store.await_writer());
        CHECK(rows() == 1);
        int status = 0;
        REQUIRE(::waitpid(child, &status, 0) == child);
        CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    }
    SECTION("killed before its commit: it returns, and nothing was written") {
        pid_t child =
            writer_that_tells(tmp.path(), pipe_fds[1], std::chrono::milliseconds(300), true);
        char c;
        REQUIRE(::read(pipe_fds[0], &c, 1) == 1);
        Store store(tmp.path());
        CHECK(store.await_writer());
        int status = 0;
        REQUIRE(::waitpid(child, &status, 0) == child);
        CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
        CHECK(rows() == 0);
        // The store is writable again at once.
        store.write([&] { store.db().exec("INSERT INTO t VALUES (2)"); });
        CHECK(rows() == 1);
    }
    SECTION("no write under way: it returns at once") {
        Store store(tmp.path());
        CHECK(store.await_writer());
        CHECK(rows() == 0);
    }
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
}

TEST_CASE("64 processes writing at once all get their turn within the busy timeout",
          "[store][concurrency]") {
    // SQLite's busy handler alone starved some waiters past the 10 s busy timeout at this load
    // (the load proof saw "store is busy" once or more in every 30 s run); the writers' turn
    // wakes a waiter at every release.
    TempDir tmp;
    {
        Store store(tmp.path());
        store.db().exec("CREATE TABLE t (n INTEGER)");
    }
    constexpr int kProcesses = 64;
    constexpr int kWrites = 20;
    auto codes = team::test::run_in_children(kProcesses, [&](int i) {
        for (int k = 0; k < kWrites; ++k) {
            Store store(tmp.path());  // a new connection each time, as a command has
            store.write([&] {
                team::Statement insert(store.db(), "INSERT INTO t VALUES (?)");
                insert.bind(1, i * 1000 + k);
                insert.exec();
            });
        }
        return 0;
    });
    for (int code : codes) CHECK(code == 0);
    Store store(tmp.path());
    CHECK(team::test::exec_and_get(store.db(), "SELECT count(DISTINCT n) FROM t").getInt() ==
          kProcesses * kWrites);
}

TEST_CASE("many processes opening a new home at once all succeed", "[store][concurrency]") {
    TempDir tmp;
    auto codes = team::test::run_in_children(8, [&](int i) {
        Store store(tmp.path());
        store.write([&] {
            team::Statement insert(store.db(),
                                   "INSERT INTO teams (name, cwd, leader, created_at) "
                                   "VALUES (?, '/', 'leader', 0)");
            insert.bind(1, "t" + std::to_string(i));
            insert.exec();
        });
        return 0;
    });
    for (int code : codes) CHECK(code == 0);
    Store store(tmp.path());
    CHECK(team::test::exec_and_get(store.db(), "SELECT count(*) FROM teams").getInt() == 8);
}

TEST_CASE("SQLite errors become clear errors of SPEC 1.4", "[store]") {
    auto as_error = [](const std::exception& e) {
        try {
            rethrow_store_error(e);
        } catch (const Error& error) {
            return error;
        }
        FAIL("not rethrown");
        return Error(ErrorCode::failed, "");
    };
    TempDir tmp;
    Store store(tmp.path());
    try {
        store.db().exec("SELECT * FROM no_such_table");
        FAIL("no error");
    } catch (const StoreError& e) {
        auto error = as_error(e);
        CHECK(error.code() == ErrorCode::failed);
        CHECK_THAT(error.what(), Catch::Contains("no_such_table"));
    }
    CHECK(as_error(refused("kept")).code() == ErrorCode::refused);
}

TEST_CASE("the WAL stays short across many short-lived connections", "[store]") {
    // Each command is a new process whose first connection reads the whole WAL: it must not grow.
    TempDir tmp;
    { Store(tmp.path()).db().exec("CREATE TABLE t (x TEXT)"); }
    for (int i = 0; i < 300; ++i) {
        Store store(tmp.path());  // a new first connection, as in a new process
        store.write([&] { store.db().exec("INSERT INTO t VALUES (randomblob(3000))"); });
    }
    auto wal = tmp.path() / "team.db-wal";
    auto frame = 4096 + 24;
    auto size = std::filesystem::exists(wal) ? std::filesystem::file_size(wal) : 0;
    CHECK(size <= static_cast<std::uintmax_t>((kSqliteWalMaxFrames + 8) * frame));
    Store store(tmp.path());
    CHECK(team::test::exec_and_get(store.db(), "SELECT count(*) FROM t").getInt() == 300);
}

// The store's VFS opens an existing WAL without SQLITE_OPEN_CREATE (so SQLite does not fsync the
// home at every command's first commit); a WAL that is not there must still be made, and what
// was committed before must be read either way.
TEST_CASE("writes work whether the WAL file is there or was removed", "[store]") {
    TempDir tmp;
    ensure_home(tmp.path());
    auto wal = tmp.path() / "team.db-wal";
    {
        Store store(tmp.path());
        store.write([&] { store.db().exec("CREATE TABLE t (x); INSERT INTO t VALUES (1)"); });
    }
    REQUIRE(std::filesystem::exists(wal));  // connections keep it on close
    {
        Store store(tmp.path());  // an existing WAL
        store.write([&] { store.db().exec("INSERT INTO t VALUES (2)"); });
        store.db().exec("PRAGMA wal_checkpoint(TRUNCATE)");
    }
    std::filesystem::remove(wal);
    std::filesystem::remove(tmp.path() / "team.db-shm");
    {
        Store store(tmp.path());  // no WAL: made again
        store.write([&] { store.db().exec("INSERT INTO t VALUES (3)"); });
        CHECK(std::filesystem::exists(wal));
    }
    Store store(tmp.path());
    CHECK(team::test::exec_and_get(store.db(), "SELECT group_concat(x) FROM t").getString() ==
          "1,2,3");
    CHECK(mode_of(wal) == 0600);
}
