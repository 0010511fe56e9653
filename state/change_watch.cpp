#include "state/change_watch.hpp"

#include <dirent.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "base/error.hpp"
#include "state/pg_listen.hpp"
#include "state/store.hpp"

namespace team {

namespace {
constexpr const char* kMarker = "team.db.changed";
constexpr const char* kWakeDir = "wake";
constexpr long long kReconnectMs = 200;
}  // namespace

namespace {

// Writes a byte to a waiter's FIFO. Full: a wake is pending already. A waiter that closed its
// FIFO since we opened it makes the write fail with EPIPE and raise SIGPIPE, which would kill
// this process after its commit and before it reports it (the load proof saw a send die so):
// SIGPIPE is blocked for the write, and one it raised is taken off before it is unblocked.
void wake(int fd) {
    sigset_t pipe_only, previous;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe_only, &previous);
    char byte = 1;
    if (::write(fd, &byte, 1) < 0 && errno == EPIPE) {
        timespec now{0, 0};
        while (::sigtimedwait(&pipe_only, nullptr, &now) < 0 && errno == EINTR) {
        }
    }
    ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

}  // namespace

void announce_change(const std::filesystem::path& home) {
    // Every waiting reader of this home has a FIFO in <home>/wake: a byte in each wakes them.
    if (DIR* dir = ::opendir((home / kWakeDir).c_str())) {
        while (dirent* entry = ::readdir(dir)) {
            if (std::strncmp(entry->d_name, "w-", 2) != 0) continue;  // not yet (or not) a waiter
            int fd = ::openat(::dirfd(dir), entry->d_name,
                              O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
            if (fd < 0) {
                // No one has it open: its waiter died without removing it.
                if (errno == ENXIO) ::unlinkat(::dirfd(dir), entry->d_name, 0);
                continue;
            }
            wake(fd);
            ::close(fd);
        }
        ::closedir(dir);
    }
    // And the marker, for a watcher that could not make a FIFO and watches it with inotify.
    auto path = home / kMarker;
    if (::utimensat(AT_FDCWD, path.c_str(), nullptr, 0) == 0) return;
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

// A FIFO of this process's in <home>/wake, open for reading and writing (so it never reports a
// hang-up when a writer closes), made under a temporary name and renamed once open, so that a
// writer never finds it unopened and removes it as a dead waiter's. Returns -1 when FIFOs cannot
// be made here.
int open_wake_fifo(const std::filesystem::path& home, std::filesystem::path& fifo) {
    static std::atomic<unsigned> counter{0};
    auto dir = home / kWakeDir;
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return -1;
    std::string id = std::to_string(::getpid()) + "-" + std::to_string(counter++);
    auto made = dir / ("tmp-" + id);
    ::unlink(made.c_str());  // a leftover of an earlier process with this pid
    if (::mkfifo(made.c_str(), 0600) != 0) return -1;
    int fd = ::open(made.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
    fifo = dir / ("w-" + id);
    if (fd < 0 || ::rename(made.c_str(), fifo.c_str()) != 0) {
        if (fd >= 0) ::close(fd);
        ::unlink(made.c_str());
        fifo.clear();
        return -1;
    }
    return fd;
}

namespace {

// A SQLite home's wake-ups: this process's FIFO in it, else an inotify watch of the home.
int watch_home(const std::filesystem::path& home, std::filesystem::path& fifo) {
    int fd = open_wake_fifo(home, fifo);
    return fd >= 0 ? fd : watch_dir(home, IN_ATTRIB | IN_CREATE | IN_MOVED_TO);
}

PgListener::Channel channel_of(ChangeWatch::Wake wake) {
    return wake == ChangeWatch::Wake::messages ? PgListener::Channel::messages
                                               : PgListener::Channel::changes;
}

// The epoll set that holds a listener's socket (watch_listener_socket).
int listener_set() {
    int fd = ::epoll_create1(EPOLL_CLOEXEC);
    if (fd < 0) throw failed(std::string("cannot watch the store: ") + std::strerror(errno));
    return fd;
}

}  // namespace

ChangeWatch::ChangeWatch(const std::filesystem::path& home, Wake wake) : name_(kMarker) {
    if (std::string url = resolve_store_url(home); !url.empty()) {
        pg_ = std::make_unique<PgListener>(url, channel_of(wake));
        fd_ = listener_set();
        watch_listener_socket();
        return;
    }
    fd_ = watch_home(home, fifo_);
}

ChangeWatch::ChangeWatch(Store& store, Wake wake) : name_(kMarker) {
    if (store.engine() == Db::Engine::sqlite) {
        fd_ = watch_home(store.home(), fifo_);
        return;
    }
    pg_ = std::make_unique<PgListener>(store.db(), channel_of(wake));
    fd_ = listener_set();
    watch_listener_socket();
}

ChangeWatch::ChangeWatch(const std::filesystem::path& dir, const std::string& name)
    : fd_(watch_dir(dir, IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_DELETE)), name_(name) {}

void ChangeWatch::watch_listener_socket() {
    // A closed socket leaves the set by itself, and a new connection's socket may have the
    // same number: each connection is added once, by its generation.
    if (pg_->generation() == pg_generation_) return;
    pg_generation_ = pg_->generation();
    int socket = pg_->socket();
    if (pg_socket_ >= 0) ::epoll_ctl(fd_, EPOLL_CTL_DEL, pg_socket_, nullptr);
    pg_socket_ = -1;
    if (socket < 0) return;
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = socket;
    if (::epoll_ctl(fd_, EPOLL_CTL_ADD, socket, &event) == 0) pg_socket_ = socket;
}

ChangeWatch::~ChangeWatch() {
    if (!fifo_.empty()) ::unlink(fifo_.c_str());
    if (fd_ >= 0) ::close(fd_);
}

bool ChangeWatch::drain() {
    if (pg_) {
        epoll_event events[4];
        while (::epoll_wait(fd_, events, 4, 0) > 0) {
            if (pg_->drain()) {
                watch_listener_socket();
                return true;
            }
            if (!pg_->connected()) break;
        }
        watch_listener_socket();
        return false;
    }
    if (!fifo_.empty()) {
        bool woken = false;
        char buf[256];
        while (::read(fd_, buf, sizeof buf) > 0) woken = true;
        return woken;
    }
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
    // The thread's cancel descriptor and, in a wait the caller asked for, its wind-down one
    // (base/cancel.hpp), polled last, never consumed: once readable, every later wait of the
    // request ends too.
    size_t watched = fds.size();
    int cancel_fd = thread_cancel_fd();
    if (cancel_fd >= 0) fds.push_back({cancel_fd, POLLIN, 0});
    int wind_down_fd = thread_asked_wait_fd();
    if (wind_down_fd >= 0) fds.push_back({wind_down_fd, POLLIN, 0});
    // A listener on the store's own connection: what came while its owner ran statements is in
    // libpq's queue already, where no poll sees it.
    if (pg_ && pg_->shared() && pg_->connected() && pg_->drain()) {
        watch_listener_socket();
        return true;
    }
    for (;;) {
        auto left = duration_cast<milliseconds>(deadline - steady_clock::now()).count();
        if (left < 0) left = 0;
        // Round up so a sub-millisecond remainder does not become a busy loop. A store listener
        // whose connection is lost tries to get it back every kReconnectMs.
        long long cap = pg_ && !pg_->connected() ? kReconnectMs : 60'000;
        int rc =
            ::poll(fds.data(), fds.size(), static_cast<int>(std::min<long long>(left + 1, cap)));
        if (rc < 0 && errno == EINTR) continue;
        if (rc > 0) {
            for (size_t i = watched; i < fds.size(); ++i) {
                if (fds[i].revents != 0) throw WaitCancelled(fds[i].fd == wind_down_fd);
            }
            for (size_t i = 1; i < watched; ++i) {
                if (fds[i].revents != 0) return true;
            }
            if (drain()) return true;
            continue;
        }
        if (pg_ && !pg_->connected() && pg_->drain()) {
            watch_listener_socket();
            return true;  // back: re-read what may have been missed
        }
        if (steady_clock::now() >= deadline) return false;
    }
}

}  // namespace team
