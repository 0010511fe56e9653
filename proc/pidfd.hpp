// A process handle that cannot be fooled by pid reuse (FIELD-NOTES "Killing"): pidfd_open(2) the
// pid, then check that the process behind it has the start time we recorded. Signals go through
// the pidfd, and poll(2) on it wakes the instant the process ends.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

namespace team::proc {

class Pidfd {
  public:
    // The process `pid` if it exists and started at `start_time`; nothing if it is gone or the
    // pid now belongs to another process. A start_time of 0 skips the check (for a child we
    // have just forked and not yet waited for, whose pid cannot have been reused). Throws
    // std::system_error when the process cannot be watched (out of descriptors, no pidfd
    // support): that says nothing of whether it lives.
    static std::optional<Pidfd> open(pid_t pid, std::uint64_t start_time);

    // The live process a record names by its pid and start time, as the store keeps them
    // (nullable integers): nothing when the record names none, when that process is gone or its
    // pid was reused, or when it has ended and is a zombie nobody reaped. Throws as open() does.
    static std::optional<Pidfd> live(std::optional<std::int64_t> pid,
                                     std::optional<std::int64_t> start_time);

    // Takes a descriptor that becomes readable when the process ends and that the handle
    // closes: a fake's eventfd (tests/support/fake_processes.hpp). Its signal() reaches nothing.
    static Pidfd adopt(int fd, pid_t pid) { return Pidfd(fd, pid); }

    ~Pidfd();
    Pidfd(Pidfd&& other) noexcept;
    Pidfd& operator=(Pidfd&& other) noexcept;
    Pidfd(const Pidfd&) = delete;
    Pidfd& operator=(const Pidfd&) = delete;

    pid_t pid() const { return pid_; }
    int fd() const { return fd_; }

    // Sends `sig`. False when the process has already ended (not an error: it is gone).
    bool signal(int sig) const;
    // Whether the process has ended (it may still be a zombie waiting to be reaped).
    bool exited() const;

  private:
    Pidfd(int fd, pid_t pid) : fd_(fd), pid_(pid) {}
    int fd_ = -1;
    pid_t pid_ = 0;
};

// Waits until every process in `fds` has ended or `deadline` passes, waking at each exit.
// Returns true when all have ended.
bool wait_all_exited(const std::vector<Pidfd>& fds, std::chrono::steady_clock::time_point deadline);

}  // namespace team::proc
