#include "state/store.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include <SQLiteCpp/Exception.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>

#include "base/error.hpp"
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

Store::Store(const fs::path& home) : home_(home) {
    fs::path path = db_path();
    bool writable = create_private_file(path);
    db_ = std::make_unique<SQLite::Database>(
        path.string(), writable ? SQLite::OPEN_READWRITE : SQLite::OPEN_READONLY, 0, store_vfs());
    // Every command is a new process, and the first connection of a process rebuilds the WAL
    // index by reading the whole WAL, so the WAL must stay short. SQLite's own autocheckpoint
    // does not keep it short across processes (the rebuilt index forgets what was already
    // checkpointed, so the WAL is never restarted and grows without end); our hook truncates
    // it instead once it holds more than kWalMaxFrames frames. A checkpoint on every close
    // would cost an fsync per command.
    sqlite3_db_config(db_->getHandle(), SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
    sqlite3_wal_hook(
        db_->getHandle(),
        [](void*, sqlite3* db, const char* name, int frames) {
            if (frames > kWalMaxFrames) {
                sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_TRUNCATE, nullptr, nullptr);
            }
            return SQLITE_OK;
        },
        nullptr);
    // synchronous FULL: a commit is on disk when it returns (SPEC 2: nothing reported done is
    // lost).
    db_->exec("PRAGMA busy_timeout = " + std::to_string(kBusyTimeoutMs) +
              "; PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL");
    int version = schema_version(*db_);
    if (version == kSchemaVersion) return;
    if (version > kSchemaVersion) migrate(*db_);  // throws, touching nothing
    InitLock lock(home_ / "team.db.init.lock");
    if (schema_version(*db_) == kSchemaVersion) return;
    db_->exec("PRAGMA journal_mode = WAL");
    migrate(*db_);
}

Store::~Store() {
    if (write_lock_fd_ >= 0) ::close(write_lock_fd_);
}

namespace {

std::string busy_message() {
    return "the store is busy: another team command held it for more than " +
           std::to_string(Store::kBusyTimeoutMs / 1000) + "s; try again";
}

enum class Turn { held, timed_out, unavailable };

// Waits for a flock (`how`: LOCK_EX or LOCK_SH) on fd for at most timeout_ms. A timer of this
// thread (SIGALRM to it alone) interrupts a wait that lasts too long; any other signal that
// interrupts it only makes it wait again. `unavailable`: flock or the timer cannot be used here.
Turn flock_within(int fd, int timeout_ms, int how) {
    if (::flock(fd, how | LOCK_NB) == 0) return Turn::held;
    if (errno != EWOULDBLOCK) return Turn::unavailable;
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
    if (::timer_create(CLOCK_MONOTONIC, &ev, &timer) != 0) return Turn::unavailable;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    Turn turn = Turn::timed_out;
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
            turn = Turn::held;
            break;
        }
        if (errno != EINTR) {
            turn = Turn::unavailable;
            break;
        }
    }
    ::timer_delete(timer);
    return turn;
}

}  // namespace

int Store::write_lock_fd() {
    if (write_lock_fd_ == -2) {
        fs::path path = home_ / "team.db.write.lock";
        write_lock_fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    }
    return write_lock_fd_;
}

bool Store::await_writer() {
    int fd = write_lock_fd();
    if (fd < 0 || flock_within(fd, kBusyTimeoutMs, LOCK_SH) != Turn::held) return false;
    ::flock(fd, LOCK_UN);
    return true;
}

Store::WriteTurn::WriteTurn(Store& store) {
    int fd = store.write_lock_fd();
    if (fd < 0) return;  // no turn: SQLite's lock alone (see store.hpp)
    switch (flock_within(fd, kBusyTimeoutMs, LOCK_EX)) {
        case Turn::held:
            fd_ = fd;
            return;
        case Turn::timed_out:
            throw failed(busy_message());
        case Turn::unavailable:
            return;  // go on with SQLite's lock alone
    }
}

void Store::WriteTurn::end() {
    if (fd_ >= 0) ::flock(fd_, LOCK_UN);
    fd_ = -1;
}

namespace {

// The one translation of SQLite's errors into the project's words, for a write inside the store
// (`db` known) and for the top-level handler (`db` empty). Nothing for an error that is no
// condition of the store (a constraint, a bug): the caller decides.
std::optional<Error> store_condition(const SQLite::Exception& e, const std::string& db) {
    std::string store = db.empty() ? std::string("the store") : "the store " + quote(db);
    switch (e.getErrorCode()) {
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
            return failed(busy_message());
        case SQLITE_READONLY:
        case SQLITE_PERM:
            return failed("cannot write " + store + ": the home is read-only; nothing was changed");
        case SQLITE_CANTOPEN:
            return failed("cannot write " + store +
                          ": it cannot be opened (is the home read-only?); nothing was changed");
        case SQLITE_FULL:
            return failed("cannot write " + store + ": the disk is full; nothing was changed");
        case SQLITE_CORRUPT:
        case SQLITE_NOTADB:
            return failed(store + " is damaged or not a team database");
        default:
            return std::nullopt;
    }
}

}  // namespace

void Store::explain_write_error(const SQLite::Exception& e) const {
    if (auto error = store_condition(e, db_path().string())) throw *error;
}

void rethrow_store_error(const std::exception& e) {
    if (auto* error = dynamic_cast<const Error*>(&e)) throw *error;
    if (auto* sql = dynamic_cast<const SQLite::Exception*>(&e)) {
        if (auto error = store_condition(*sql, "")) throw *error;
        throw failed(std::string("store error: ") + sql->what());
    }
    throw failed(e.what());
}

}  // namespace team
