#include "state/store.hpp"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <unistd.h>

#include <SQLiteCpp/Exception.h>

#include <cerrno>
#include <cstring>

#include "base/error.hpp"
#include "state/schema.hpp"

namespace team {

namespace fs = std::filesystem;

namespace {

// SQLite creates the database with the umask's permissions; make the file first, 0600, so it
// (and the -wal and -shm files, which copy its mode) are private whatever the umask.
void create_private_file(const fs::path& path) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        throw failed("cannot open the database " + quote(path.string()) + ": " +
                     std::strerror(errno));
    }
    ::close(fd);
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
    create_private_file(path);
    db_ = std::make_unique<SQLite::Database>(path.string(), SQLite::OPEN_READWRITE, 0, store_vfs());
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

void rethrow_store_error(const std::exception& e) {
    if (auto* error = dynamic_cast<const Error*>(&e)) throw *error;
    if (auto* sql = dynamic_cast<const SQLite::Exception*>(&e)) {
        switch (sql->getErrorCode()) {
            case SQLITE_BUSY:
            case SQLITE_LOCKED:
                throw failed("the store is busy: another team command held it for more than " +
                             std::to_string(Store::kBusyTimeoutMs / 1000) + "s; try again");
            case SQLITE_READONLY:
            case SQLITE_CANTOPEN:
            case SQLITE_PERM:
                throw failed(std::string("cannot write the store (is the home read-only?): ") +
                             sql->what());
            case SQLITE_FULL:
                throw failed("the disk is full: nothing was changed");
            case SQLITE_CORRUPT:
            case SQLITE_NOTADB:
                throw failed(std::string("the store is damaged or not a team database: ") +
                             sql->what());
            default:
                throw failed(std::string("store error: ") + sql->what());
        }
    }
    throw failed(e.what());
}

}  // namespace team
