// `team run`: a command in the foreground under a Supervisor, its output passed through as it
// comes and its end kept for the result, killed (signal, grace, SIGKILL) at the timeout.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proc/supervisor.hpp"

namespace team::shells {

struct ForegroundRun {
    std::vector<std::string> argv;
    std::optional<std::chrono::milliseconds> timeout;
    int signal = 15;  // SIGTERM
    std::chrono::milliseconds grace{5000};
    std::size_t output_limit = 1 << 20;  // bytes of output kept for the result (the end)
};

struct ForegroundResult {
    proc::ExitStatus status;
    bool timed_out = false;
    std::string output;  // the last output_limit bytes, cut on a UTF-8 boundary
    bool truncated = false;
    // The exit code `team run` itself returns: the command's, 128+n for a signal, 124 when
    // timed out.
    int exit_code() const;
};

// Runs in the current directory and environment. `echo` (may be empty) gets each chunk of
// output as it arrives. Throws `failed` when the command cannot be started.
ForegroundResult run_foreground(const ForegroundRun& run,
                                const std::function<void(std::string_view)>& echo);

}  // namespace team::shells
