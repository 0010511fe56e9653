#include "git/repo_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "base/error.hpp"

namespace team::git {

namespace fs = std::filesystem;

fs::path RepoLock::path(const fs::path& home, const fs::path& common_dir) {
    // FNV-1a: stable across builds and processes (std::hash is not promised to be).
    std::uint64_t h = 14695981039346656037ull;
    for (unsigned char c : fs::weakly_canonical(common_dir).string()) {
        h ^= c;
        h *= 1099511628211ull;
    }
    char name[40];
    std::snprintf(name, sizeof name, "git-%016llx.lock", static_cast<unsigned long long>(h));
    return home / "locks" / name;
}

RepoLock::RepoLock(const fs::path& home, const fs::path& common_dir) {
    fs::path dir = home / "locks";
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
        throw failed("cannot create " + quote(dir.string()) + ": " + std::strerror(errno));
    }
    fs::path file = path(home, common_dir);
    fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ < 0) throw failed("cannot open " + quote(file.string()) + ": " + std::strerror(errno));
    while (::flock(fd_, LOCK_EX) != 0) {
        if (errno == EINTR) continue;
        int saved = errno;
        ::close(fd_);
        throw failed("cannot lock the repository " + quote(common_dir.string()) + ": " +
                     std::strerror(saved));
    }
}

RepoLock::RepoLock(RepoLock&& other) noexcept : fd_(other.fd_) {
    other.fd_ = -1;
}

RepoLock::~RepoLock() {
    if (fd_ >= 0) ::close(fd_);
}

}  // namespace team::git
