#include "state/change_watch.hpp"

#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "base/error.hpp"

namespace team {

namespace {
constexpr const char* kMarker = "team.db.changed";
}  // namespace

void announce_change(const std::filesystem::path& home) {
    auto path = home / kMarker;
    if (::utimensat(AT_FDCWD, path.c_str(), nullptr, 0) == 0) return;
    // First change of this home: create the marker (its creation wakes watchers too).
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0) ::close(fd);
}

namespace {

int watch_dir(const std::filesystem::path& dir, uint32_t mask) {
    int fd = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    if (fd < 0) throw failed(std::string("cannot watch the store: ") + std::strerror(errno));
    if (::inotify_add_watch(fd, dir.c_str(), mask) < 0) {
        int saved = errno;
        ::close(fd);
        throw failed("cannot watch " + quote(dir.string()) + ": " + std::strerror(saved));
    }
    return fd;
}

}  // namespace

ChangeWatch::ChangeWatch(const std::filesystem::path& home)
    : fd_(watch_dir(home, IN_ATTRIB | IN_CREATE | IN_MOVED_TO)), name_(kMarker) {}

ChangeWatch::ChangeWatch(const std::filesystem::path& dir, const std::string& name)
    : fd_(watch_dir(dir, IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_DELETE)), name_(name) {}

ChangeWatch::~ChangeWatch() {
    if (fd_ >= 0) ::close(fd_);
}

bool ChangeWatch::drain() {
    // One wake-up per burst of events is enough; events of other files do not count.
    bool changed = false;
    alignas(inotify_event) char buf[4096];
    ssize_t n;
    while ((n = ::read(fd_, buf, sizeof buf)) > 0) {
        for (char* p = buf; p < buf + n;) {
            auto* event = reinterpret_cast<inotify_event*>(p);
            if (event->len > 0 && name_ == event->name) changed = true;
            if (event->mask & IN_Q_OVERFLOW) changed = true;
            p += sizeof(inotify_event) + event->len;
        }
    }
    return changed;
}

bool ChangeWatch::wait_until(std::chrono::steady_clock::time_point deadline) {
    return wait_until(deadline, {});
}

bool ChangeWatch::wait_until(std::chrono::steady_clock::time_point deadline,
                             const std::vector<int>& others) {
    using namespace std::chrono;
    std::vector<pollfd> fds{{fd_, POLLIN, 0}};
    for (int fd : others) fds.push_back({fd, POLLIN, 0});
    for (;;) {
        auto left = duration_cast<milliseconds>(deadline - steady_clock::now()).count();
        if (left < 0) left = 0;
        // Round up so a sub-millisecond remainder does not become a busy loop.
        int rc =
            ::poll(fds.data(), fds.size(), static_cast<int>(std::min<long long>(left + 1, 60'000)));
        if (rc < 0 && errno == EINTR) continue;
        if (rc > 0) {
            for (size_t i = 1; i < fds.size(); ++i) {
                if (fds[i].revents != 0) return true;
            }
            if (drain()) return true;
            continue;
        }
        if (steady_clock::now() >= deadline) return false;
    }
}

}  // namespace team
