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

ChangeWatch::ChangeWatch(const std::filesystem::path& home) {
    fd_ = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    if (fd_ < 0) throw failed(std::string("cannot watch the store: ") + std::strerror(errno));
    if (::inotify_add_watch(fd_, home.c_str(), IN_ATTRIB | IN_CREATE | IN_MOVED_TO) < 0) {
        int saved = errno;
        ::close(fd_);
        throw failed("cannot watch " + quote(home.string()) + ": " + std::strerror(saved));
    }
}

ChangeWatch::~ChangeWatch() {
    if (fd_ >= 0) ::close(fd_);
}

bool ChangeWatch::wait_until(std::chrono::steady_clock::time_point deadline) {
    using namespace std::chrono;
    for (;;) {
        auto left = duration_cast<milliseconds>(deadline - steady_clock::now()).count();
        if (left < 0) left = 0;
        pollfd p{fd_, POLLIN, 0};
        // Round up so a sub-millisecond remainder does not become a busy loop.
        int rc = ::poll(&p, 1, static_cast<int>(std::min<long long>(left + 1, 60'000)));
        if (rc < 0 && errno == EINTR) continue;
        if (rc > 0) {
            // Drain every pending event: one wake-up per burst of commits is enough. Events
            // for other files of the home (logs, sockets) do not count.
            bool changed = false;
            alignas(inotify_event) char buf[4096];
            ssize_t n;
            while ((n = ::read(fd_, buf, sizeof buf)) > 0) {
                for (char* p = buf; p < buf + n;) {
                    auto* event = reinterpret_cast<inotify_event*>(p);
                    if (event->len > 0 && std::strcmp(event->name, kMarker) == 0) changed = true;
                    if (event->mask & IN_Q_OVERFLOW) changed = true;
                    p += sizeof(inotify_event) + event->len;
                }
            }
            if (changed) return true;
            continue;
        }
        if (steady_clock::now() >= deadline) return false;
    }
}

}  // namespace team
