#include "state/team_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/error.hpp"
#include "state/db.hpp"
#include "state/store.hpp"

namespace team {

namespace fs = std::filesystem;

namespace {

int open_lock_file(const fs::path& home, const std::string& team) {
    fs::path dir = home / "locks";
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
        throw failed("cannot create " + quote(dir.string()) + ": " + std::strerror(errno));
    }
    fs::path file = TeamLock::path(home, team);
    int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) throw failed("cannot open " + quote(file.string()) + ": " + std::strerror(errno));
    return fd;
}

}  // namespace

fs::path TeamLock::path(const fs::path& home, const std::string& team) {
    return home / "locks" / (team + ".lock");
}

TeamLock::TeamLock(const fs::path& home, const std::string& team)
    : fd_(open_lock_file(home, team)) {
    while (::flock(fd_, LOCK_EX) != 0) {
        if (errno == EINTR) continue;
        int saved = errno;
        ::close(fd_);
        throw failed("cannot lock team " + quote(team) + ": " + std::strerror(saved));
    }
}

TeamLock::TeamLock(Store& store, const std::string& team) {
    if (store.engine() != Db::Engine::postgresql) {
        *this = TeamLock(store.home(), team);
        return;
    }
    // No lock timeout for this wait (a teardown may hold the team for as long as its agents take
    // to stop), as flock has none.
    store.db().exec("SET lock_timeout = 0");
    Statement lock(store.db(), "SELECT pg_advisory_lock(hashtextextended('team:' || ?, 0))");
    lock.bind(1, team);
    lock.executeStep();
    db_ = &store.db();
    team_ = team;
}

TeamLock::TeamLock(TeamLock&& other) noexcept
    : fd_(other.fd_), db_(other.db_), team_(std::move(other.team_)) {
    other.fd_ = -1;
    other.db_ = nullptr;
}

TeamLock& TeamLock::operator=(TeamLock&& other) noexcept {
    std::swap(fd_, other.fd_);
    std::swap(db_, other.db_);
    std::swap(team_, other.team_);
    return *this;
}

TeamLock::~TeamLock() {
    if (fd_ >= 0) ::close(fd_);
    if (db_) {
        // A lost connection has dropped the lock already.
        try {
            Statement unlock(*db_, "SELECT pg_advisory_unlock(hashtextextended('team:' || ?, 0))");
            unlock.bind(1, team_);
            unlock.executeStep();
        } catch (const std::exception&) {
        }
    }
}

}  // namespace team
