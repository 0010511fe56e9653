#include "state/team_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/error.hpp"

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

TeamLock::TeamLock(TeamLock&& other) noexcept : fd_(other.fd_) {
    other.fd_ = -1;
}

TeamLock::~TeamLock() {
    if (fd_ >= 0) ::close(fd_);
}

}  // namespace team
