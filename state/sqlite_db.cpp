#include "state/sqlite_db.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Exception.h>
#include <SQLiteCpp/Statement.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>

#include "base/error.hpp"
#include "state/change_watch.hpp"
#include "state/schema.hpp"

namespace team {

namespace fs = std::filesystem;

namespace {

// SQLite creates the database with the umask's permissions; make the file first, 0600, so it
// (and the -wal and -shm files, which copy its mode) are private whatever the umask.
// Returns false when the database exists but cannot be written (a read-only home): it is then
// opened read-only, so that reads work and writes fail with SQLite's clear "read-only" error.
bool create_private_file(const fs::path& path) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        int error = errno;
        if ((error == EACCES || error == EROFS || error == EPERM) &&
            ::access(path.c_str(), R_OK) == 0) {
            return false;
        }
        throw failed("cannot open the database " + quote(path.string()) + ": " +
                     std::strerror(error));
    }
    ::close(fd);
    return true;
}

// Serialises first-time set-up (WAL mode, migrations) between processes that open a new home
// at the same moment. Only taken when the schema is not current, so it costs nothing later.
class InitLock {
  public:
    explicit InitLock(const fs::path& path)
        : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600)) {
        if (fd_ < 0 || ::flock(fd_, LOCK_EX) != 0) {
            throw failed("cannot lock " + quote(path.string()) + ": " + std::strerror(errno));
        }
    }
    ~InitLock() { ::close(fd_); }
    InitLock(const InitLock&) = delete;
    InitLock& operator=(const InitLock&) = delete;

  private:
    int fd_;
};

// The VFS every store connection uses: SQLite's own ("unix"), except that an existing WAL file
// is opened without SQLITE_OPEN_CREATE. SQLite takes any WAL opened with that flag for a new
// file and fsyncs its directory at the first commit, an fsync more per command, since every
// command is a new connection. The WAL of a home stays (connections do not delete it on close),
// and its directory entry was synced when it was first made, so the extra fsync buys nothing.
// A new WAL is still opened with the flag and its directory synced.
int open_keeping_wal(sqlite3_vfs* vfs, const char* name, sqlite3_file* file, int flags,
                     int* out_flags) {
    auto* base = static_cast<sqlite3_vfs*>(sqlite3_vfs_find("unix"));
    (void)vfs;
    if ((flags & SQLITE_OPEN_WAL) && name && ::access(name, F_OK) == 0) {
        int rc = base->xOpen(base, name, file, flags & ~SQLITE_OPEN_CREATE, out_flags);
        if (rc == SQLITE_OK) return rc;  // else it went meanwhile: create it as SQLite would
    }
    return base->xOpen(base, name, file, flags, out_flags);
}

const char* store_vfs() {
    static const char* name = [] {
        static sqlite3_vfs vfs = *sqlite3_vfs_find("unix");
        vfs.zName = "team-unix";
        vfs.pNext = nullptr;
        vfs.xOpen = open_keeping_wal;
        sqlite3_vfs_register(&vfs, 0);
        return vfs.zName;
    }();
    return name;
}

}  // namespace

namespace {

std::string busy_message() {
    return "the store is busy: another team command held it for more than " +
           std::to_string(kSqliteBusyTimeoutMs / 1000) + "s; try again";
}

enum class Flock { held, timed_out, unavailable };

// Waits for a flock (`how`: LOCK_EX or LOCK_SH) on fd for at most timeout_ms. A timer of this
// thread (SIGALRM to it alone) interrupts a wait that lasts too long; any other signal that
// interrupts it only makes it wait again. `unavailable`: flock or the timer cannot be used here.
Flock flock_within(int fd, int timeout_ms, int how) {
    if (::flock(fd, how | LOCK_NB) == 0) return Flock::held;
    if (errno != EWOULDBLOCK) return Flock::unavailable;
    // The handler is installed once for the process and never taken back: threads of one
    // process (the MCP server's calls) may wait here at once, and one restoring the default
    // while another's timer is armed would let that alarm kill the process. A no-op handler
    // changes nothing else (exec resets it for every child).
    static std::once_flag installed;
    std::call_once(installed, [] {
        struct sigaction quiet {};
        quiet.sa_handler = [](int) {};
        sigemptyset(&quiet.sa_mask);
        quiet.sa_flags = 0;  // no SA_RESTART: the alarm must interrupt flock
        ::sigaction(SIGALRM, &quiet, nullptr);
    });
    sigevent ev{};
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = SIGALRM;
    ev._sigev_un._tid = static_cast<pid_t>(::gettid());
    timer_t timer{};
    if (::timer_create(CLOCK_MONOTONIC, &ev, &timer) != 0) return Flock::unavailable;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    Flock turn = Flock::timed_out;
    for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(
                        deadline - std::chrono::steady_clock::now())
                        .count();
        if (left <= 0) break;
        itimerspec when{};
        when.it_value.tv_sec = static_cast<time_t>(left / 1'000'000'000);
        when.it_value.tv_nsec = static_cast<long>(left % 1'000'000'000);
        ::timer_settime(timer, 0, &when, nullptr);
        if (::flock(fd, how) == 0) {
            turn = Flock::held;
            break;
        }
        if (errno != EINTR) {
            turn = Flock::unavailable;
            break;
        }
    }
    ::timer_delete(timer);
    return turn;
}

}  // namespace

namespace {

// The one translation of SQLite's errors into the store's kinds. `db`: the database's path.
StoreError store_error(const SQLite::Exception& e, const std::string& db) {
    std::string store = "the store " + quote(db);
    using Kind = StoreError::Kind;
    switch (e.getErrorCode()) {
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
            return StoreError(Kind::busy, busy_message());
        case SQLITE_READONLY:
        case SQLITE_PERM:
            return StoreError(Kind::read_only, "cannot write " + store +
                                                   ": the home is read-only; nothing was changed");
        case SQLITE_CANTOPEN:
            return StoreError(
                Kind::cannot_open,
                "cannot write " + store +
                    ": it cannot be opened (is the home read-only?); nothing was changed");
        case SQLITE_FULL:
            return StoreError(Kind::full,
                              "cannot write " + store + ": the disk is full; nothing was changed");
        case SQLITE_CORRUPT:
        case SQLITE_NOTADB:
            return StoreError(Kind::damaged, store + " is damaged or not a team database");
        case SQLITE_CONSTRAINT:
            return StoreError(Kind::constraint, e.what());
        default:
            return StoreError(Kind::other, e.what());
    }
}

class SqliteStatement final : public StatementImpl {
  public:
    SqliteStatement(SQLite::Database& db, std::string_view sql, const std::string& path)
        : path_(path), statement_(open(db, sql)) {}

    void bind_int64(int index, std::int64_t value) override {
        guard([&] { statement_.bind(index, static_cast<int64_t>(value)); });
    }
    void bind_double(int index, double value) override {
        guard([&] { statement_.bind(index, value); });
    }
    void bind_text(int index, std::string_view value) override {
        guard([&] { statement_.bind(index, std::string(value)); });
    }
    void bind_null(int index) override {
        guard([&] { statement_.bind(index); });
    }
    bool step() override {
        return guard([&] { return statement_.executeStep(); });
    }
    int exec() override {
        return guard([&] { return statement_.exec(); });
    }
    void reset() override {
        guard([&] { statement_.reset(); });
    }
    int column_count() const override { return statement_.getColumnCount(); }
    bool is_null(int index) const override {
        return guard([&] { return statement_.getColumn(index).isNull(); });
    }
    std::int64_t int64(int index) const override {
        return guard(
            [&] { return static_cast<std::int64_t>(statement_.getColumn(index).getInt64()); });
    }
    double real(int index) const override {
        return guard([&] { return statement_.getColumn(index).getDouble(); });
    }
    std::string text(int index) const override {
        return guard([&] { return statement_.getColumn(index).getString(); });
    }

  private:
    SQLite::Statement open(SQLite::Database& db, std::string_view sql) {
        try {
            return SQLite::Statement(db, std::string(sql));
        } catch (const SQLite::Exception& e) {
            throw store_error(e, path_);
        }
    }
    template <class Fn>
    auto guard(Fn&& fn) const -> decltype(fn()) {
        try {
            return fn();
        } catch (const SQLite::Exception& e) {
            throw store_error(e, path_);
        }
    }

    const std::string& path_;
    mutable SQLite::Statement statement_;
};

class SqliteDb final : public Db {
  public:
    explicit SqliteDb(const fs::path& home);
    ~SqliteDb() override {
        if (write_lock_fd_ >= 0) ::close(write_lock_fd_);
    }

    Engine engine() const override { return Engine::sqlite; }
    std::unique_ptr<StatementImpl> prepare(std::string_view sql) override {
        return std::make_unique<SqliteStatement>(*db_, sql, path_);
    }
    void exec(const std::string& sql) override {
        try {
            db_->exec(sql);
        } catch (const SQLite::Exception& e) {
            throw store_error(e, path_);
        }
    }

    // The writers' turn, then BEGIN IMMEDIATE; a shared turn is the whole turn here (one
    // writer at a time). What a write says it changes (Db::writes) is dropped unread: every
    // commit wakes every watch of the home.
    void begin_write(Turn) override {
        forget_changes();
        take_turn();
        try {
            db_->exec("BEGIN IMMEDIATE");
        } catch (const SQLite::Exception& e) {
            end_turn();
            throw store_error(e, path_);
        }
    }
    void commit_write() override {
        try {
            db_->exec("COMMIT");
        } catch (const SQLite::Exception& e) {
            throw store_error(e, path_);  // the caller rolls back
        }
        end_turn();
        forget_changes();
        announce_change(home_);
    }
    void rollback_write() noexcept override {
        if (sqlite3_get_autocommit(db_->getHandle()) == 0) {
            sqlite3_exec(db_->getHandle(), "ROLLBACK", nullptr, nullptr, nullptr);
        }
        end_turn();
        forget_changes();
    }

    bool await_writer() {
        int fd = write_lock_fd();
        if (fd < 0 || flock_within(fd, kSqliteBusyTimeoutMs, LOCK_SH) != Flock::held) return false;
        ::flock(fd, LOCK_UN);
        return true;
    }

  private:
    // A writer's turn: an exclusive flock on <home>/team.db.write.lock, held from before BEGIN
    // IMMEDIATE to the commit. SQLite's busy handler sleeps and polls (up to 100 ms between
    // tries), so under many writers a waiter keeps finding the lock taken by newcomers and can
    // starve past the busy timeout (64 processes: a few "store is busy" in 5,000 commands); a
    // blocked flock is woken at every release. The turn only orders writers: SQLite's lock
    // still guards the data, so when the lock file cannot be opened (a read-only or full home)
    // the write goes on without a turn and SQLite reports what is wrong.
    void take_turn() {
        int fd = write_lock_fd();
        if (fd < 0) return;  // no turn: SQLite's lock alone
        switch (flock_within(fd, kSqliteBusyTimeoutMs, LOCK_EX)) {
            case Flock::held:
                turn_fd_ = fd;
                return;
            case Flock::timed_out:
                throw StoreError(StoreError::Kind::busy, busy_message());
            case Flock::unavailable:
                return;  // go on with SQLite's lock alone
        }
    }
    void end_turn() noexcept {
        if (turn_fd_ >= 0) ::flock(turn_fd_, LOCK_UN);
        turn_fd_ = -1;
    }
    // The lock file of the writers' turn, opened on first use; -1 when it cannot be.
    int write_lock_fd() {
        if (write_lock_fd_ == -2) {
            fs::path path = home_ / "team.db.write.lock";
            write_lock_fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        }
        return write_lock_fd_;
    }

    fs::path home_;
    std::string path_;
    std::unique_ptr<SQLite::Database> db_;
    int write_lock_fd_ = -2;  // -2: not opened yet; -1: cannot be opened
    int turn_fd_ = -1;        // the turn's descriptor while a write holds it
};

SqliteDb::SqliteDb(const fs::path& home) : home_(home), path_((home / "team.db").string()) {
    fs::path path = home / "team.db";
    bool writable = create_private_file(path);
    try {
        db_ = std::make_unique<SQLite::Database>(
            path.string(), writable ? SQLite::OPEN_READWRITE : SQLite::OPEN_READONLY, 0,
            store_vfs());
        // Every command is a new process, and the first connection of a process rebuilds the
        // WAL index by reading the whole WAL, so the WAL must stay short. SQLite's own
        // autocheckpoint does not keep it short across processes (the rebuilt index forgets
        // what was already checkpointed, so the WAL is never restarted and grows without end);
        // our hook truncates it instead once it holds more than kSqliteWalMaxFrames frames. A
        // checkpoint on every close would cost an fsync per command.
        sqlite3_db_config(db_->getHandle(), SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
        sqlite3_wal_hook(
            db_->getHandle(),
            [](void*, sqlite3* db, const char* name, int frames) {
                if (frames > kSqliteWalMaxFrames) {
                    sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_TRUNCATE, nullptr,
                                              nullptr);
                }
                return SQLITE_OK;
            },
            nullptr);
        // synchronous FULL: a commit is on disk when it returns (SPEC 2: nothing reported done
        // is lost).
        db_->exec("PRAGMA busy_timeout = " + std::to_string(kSqliteBusyTimeoutMs) +
                  "; PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL");
        int version = schema_version(*db_);
        if (version == kSchemaVersion) return;
        if (version > kSchemaVersion) migrate(*db_);  // throws, touching nothing
        InitLock lock(home / "team.db.init.lock");
        if (schema_version(*db_) == kSchemaVersion) return;
        db_->exec("PRAGMA journal_mode = WAL");
        migrate(*db_);
    } catch (const SQLite::Exception& e) {
        throw store_error(e, path_);
    }
}

}  // namespace

std::unique_ptr<Db> open_sqlite(const fs::path& home) {
    return std::make_unique<SqliteDb>(home);
}

bool sqlite_await_writer(Db& db) {
    return static_cast<SqliteDb&>(db).await_writer();
}

}  // namespace team
