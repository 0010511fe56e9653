#include "proc/pidfd.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>

#include "proc/process_table.hpp"

namespace team::proc {

std::optional<Pidfd> Pidfd::open(pid_t pid, std::uint64_t start_time) {
    if (pid <= 0) return std::nullopt;
    int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    if (fd < 0) {
        // ESRCH: no such process. EINVAL: the pid is now a thread of another process (ours was
        // a process). Anything else (EMFILE, ENOSYS...) says nothing about the process: taking
        // it for "gone" would record a live agent as lost and hand its tasks to another.
        if (errno == ESRCH || errno == EINVAL) return std::nullopt;
        throw std::system_error(errno, std::generic_category(),
                                "cannot watch process " + std::to_string(pid) + ": pidfd_open");
    }
    // Checked after opening: the pidfd now pins one process, so if the start time read now
    // matches, the pidfd refers to the process we recorded and always will.
    if (start_time != 0) {
        auto actual = start_time_of(pid);
        if (!actual || *actual != start_time) {
            ::close(fd);
            return std::nullopt;
        }
    }
    return Pidfd(fd, pid);
}

std::optional<Pidfd> Pidfd::live(std::optional<std::int64_t> pid,
                                 std::optional<std::int64_t> start_time) {
    if (!pid) return std::nullopt;
    auto fd = open(static_cast<pid_t>(*pid), static_cast<std::uint64_t>(start_time.value_or(0)));
    if (fd && fd->exited()) return std::nullopt;
    return fd;
}

Pidfd::~Pidfd() {
    if (fd_ >= 0) ::close(fd_);
}

Pidfd::Pidfd(Pidfd&& other) noexcept : fd_(other.fd_), pid_(other.pid_) {
    other.fd_ = -1;
}

Pidfd& Pidfd::operator=(Pidfd&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = other.fd_;
        pid_ = other.pid_;
        other.fd_ = -1;
    }
    return *this;
}

bool Pidfd::signal(int sig) const {
    return ::syscall(SYS_pidfd_send_signal, fd_, sig, nullptr, 0) == 0;
}

bool Pidfd::exited() const {
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;
}

bool wait_all_exited(const std::vector<Pidfd>& fds,
                     std::chrono::steady_clock::time_point deadline) {
    using namespace std::chrono;
    std::vector<pollfd> waiting;
    for (const auto& p : fds) waiting.push_back({p.fd(), POLLIN, 0});
    while (!waiting.empty()) {
        auto left = duration_cast<milliseconds>(deadline - steady_clock::now()).count();
        if (left < 0) return false;
        int rc = ::poll(waiting.data(), waiting.size(),
                        static_cast<int>(std::min<long long>(left + 1, 60'000)));
        if (rc < 0 && errno != EINTR) return false;
        std::erase_if(waiting, [](const pollfd& p) { return p.revents != 0; });
        if (rc == 0 && steady_clock::now() >= deadline) return waiting.empty();
    }
    return true;
}

}  // namespace team::proc
