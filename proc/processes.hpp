// The processes seam: what the domain asks of the operating system about processes, behind an
// interface, in the manner of ninja's DiskInterface and CommandRunner. The system's answers come
// from /proc, pidfds and signals (proc/pidfd, proc/terminate); tests give a fake
// (tests/support/fake_processes.hpp) whose processes live and die as the test says, so spawn,
// reconcile, kill-agent and teardown can be tested in milliseconds, with no process started.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "proc/pidfd.hpp"
#include "proc/process_table.hpp"
#include "proc/terminate.hpp"

namespace team::proc {

class Processes {
  public:
    virtual ~Processes() = default;

    // The live process a record names by pid and start time (nullable, as the store keeps
    // them): a handle to signal it and to wait for its end; nothing when it is gone.
    virtual std::optional<Pidfd> live(std::optional<std::int64_t> pid,
                                      std::optional<std::int64_t> start_time) = 0;
    // A process just started, watched without a start-time check (its pid cannot have been
    // reused yet); nothing when it is already gone.
    virtual std::optional<Pidfd> open(pid_t pid) = 0;
    // The start time of `pid` (proc/process_table), nothing when it does not exist.
    virtual std::optional<std::uint64_t> start_time(pid_t pid) = 0;
    // The live processes of these trees, now (proc/terminate).
    virtual std::vector<ProcessInfo> find_trees(const std::vector<TreeTarget>& targets) = 0;
    // Ends these trees: `sig`, `grace`, then SIGKILL when `force` (proc/terminate).
    virtual TerminateOutcome terminate_trees(const std::vector<TreeTarget>& targets, int sig,
                                             std::chrono::milliseconds grace, bool force) = 0;

    bool alive(std::optional<std::int64_t> pid, std::optional<std::int64_t> start_time) {
        return live(pid, start_time).has_value();
    }
    std::vector<ProcessInfo> find_tree(const TreeTarget& target) { return find_trees({target}); }
    TerminateOutcome terminate_tree(const TreeTarget& target, int sig,
                                    std::chrono::milliseconds grace, bool force) {
        return terminate_trees({target}, sig, grace, force);
    }
};

// The operating system's processes.
class SystemProcesses final : public Processes {
  public:
    std::optional<Pidfd> live(std::optional<std::int64_t> pid,
                              std::optional<std::int64_t> start_time) override;
    std::optional<Pidfd> open(pid_t pid) override;
    std::optional<std::uint64_t> start_time(pid_t pid) override;
    std::vector<ProcessInfo> find_trees(const std::vector<TreeTarget>& targets) override;
    TerminateOutcome terminate_trees(const std::vector<TreeTarget>& targets, int sig,
                                     std::chrono::milliseconds grace, bool force) override;
};

// The one SystemProcesses of this process.
Processes& system_processes();

}  // namespace team::proc
