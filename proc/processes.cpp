#include "proc/processes.hpp"

namespace team::proc {

std::optional<Pidfd> SystemProcesses::live(std::optional<std::int64_t> pid,
                                           std::optional<std::int64_t> start_time) {
    return Pidfd::live(pid, start_time);
}

std::optional<Pidfd> SystemProcesses::open(pid_t pid) {
    return Pidfd::open(pid, 0);
}

std::optional<std::uint64_t> SystemProcesses::start_time(pid_t pid) {
    return start_time_of(pid);
}

std::vector<ProcessInfo> SystemProcesses::find_trees(const std::vector<TreeTarget>& targets) {
    return proc::find_trees(targets);
}

TerminateOutcome SystemProcesses::terminate_trees(const std::vector<TreeTarget>& targets, int sig,
                                                  std::chrono::milliseconds grace, bool force) {
    return proc::terminate_trees(targets, sig, grace, force);
}

Processes& system_processes() {
    static SystemProcesses processes;
    return processes;
}

}  // namespace team::proc
