// A child process of the ACP client (the agent, or a terminal of the test implementation): in
// its own process group (so SPEC 7's tree kills reach it whole), with pipes for its stdio and a
// marker in its environment (the last resort of the hunt for what escaped the group).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace team::acp {

struct ChildSpec {
    std::vector<std::string> argv;  // argv[0] looked up in PATH
    std::filesystem::path cwd;
    std::vector<std::string> env;  // "K=V" entries set over this process's environment
    bool pipe_stdin = true;        // a pipe for stdin, or /dev/null
    bool merge_stderr = false;     // stderr into the stdout pipe, or a pipe of its own
};

struct Child {
    pid_t pid = -1;                   // also its process group's id
    std::uint64_t start_time = 0;     // for pid identity (proc/process_table)
    int in = -1, out = -1, err = -1;  // our ends (-1 when absent); the caller closes them
};

// How a process ended.
struct ExitStatus {
    std::optional<int> exit_code;
    std::optional<int> signal;
};

// Starts the child. Throws team::Error (failed) when it cannot be started, with exec's reason
// ("cannot run 'x': No such file or directory").
Child start_child(const ChildSpec& spec);

// Waits for the child to end and reaps it; nothing when `deadline` passes first.
std::optional<ExitStatus> wait_child(pid_t pid,
                                     std::optional<std::chrono::steady_clock::time_point> deadline);

// Ends the child's whole tree (its process group, its descendants, and every process carrying
// `marker` when one is given): SIGTERM, `grace`, then SIGKILL until nothing is left.
void end_child_tree(const Child& child, const std::string& marker, std::chrono::milliseconds grace);

}  // namespace team::acp
