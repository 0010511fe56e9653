// What the kernel says about processes, read from /proc: parent, group, session, state and start
// time, and the trees they form. The start time (field 22 of /proc/PID/stat, in clock ticks
// since boot) together with the pid identifies one process for its whole life: a pid that is
// reused later comes with another start time.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace team::proc {

struct ProcessInfo {
    pid_t pid = 0;
    pid_t ppid = 0;
    pid_t pgid = 0;
    pid_t sid = 0;
    char state = '?';  // R, S, D, T, t, Z, X...
    std::uint64_t start_time = 0;

    bool is_zombie() const { return state == 'Z' || state == 'X'; }
};

// One process, or nothing when it does not exist (any more).
std::optional<ProcessInfo> read_process(pid_t pid);

// The start time of `pid`, or nothing when it does not exist.
std::optional<std::uint64_t> start_time_of(pid_t pid);

// Every process visible in /proc.
std::vector<ProcessInfo> scan_processes();

// The descendants of `root` in `all` (not root itself), parents before children.
std::vector<ProcessInfo> descendants(pid_t root, const std::vector<ProcessInfo>& all);

// Whether the environment of `pid` holds exactly the entry `entry` ("KEY=value").
bool environ_has(pid_t pid, const std::string& entry);
// The same, on an environment already read (`environ_of`).
bool environ_has(const std::string& environ, const std::string& entry);
// The environment of `pid` as /proc has it (NUL-separated); empty when unreadable.
std::string environ_of(pid_t pid);
// The arguments of `pid` as /proc has them (NUL-separated); empty when unreadable.
std::string cmdline_of(pid_t pid);

}  // namespace team::proc
