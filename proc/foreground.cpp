#include "proc/foreground.hpp"

#include <signal.h>
#include <unistd.h>

#include <filesystem>

#include "base/text.hpp"

extern char** environ;

namespace team::proc {

int ForegroundResult::exit_code() const {
    if (timed_out) return 124;
    if (status.signal) return 128 + *status.signal;
    return status.exit_code.value_or(1);
}

ForegroundResult run_foreground(const ForegroundRun& run,
                                const std::function<void(std::string_view)>& echo) {
    LaunchSpec spec;
    spec.argv = run.argv;
    spec.cwd = std::filesystem::current_path().string();
    for (char** e = environ; *e != nullptr; ++e) spec.env.emplace_back(*e);
    spec.timeout = run.timeout;
    spec.timeout_signal = run.signal;
    spec.grace = run.grace;
    spec.null_stdin = false;
    // On a terminal the command gets it (as the foreground group), so it can read from it and
    // Ctrl-C reaches it; the terminal comes back to us when it ends.
    bool tty = ::isatty(STDIN_FILENO) && ::tcgetpgrp(STDIN_FILENO) == ::getpgrp();
    spec.foreground_tty = tty;

    Supervisor supervisor;
    supervisor.start(spec);
    ForegroundResult result;
    std::string kept;
    RunOutcome outcome = supervisor.run([&](std::string_view chunk) {
        if (echo) echo(chunk);
        kept.append(chunk);
        // Keep at most twice the limit in memory; the exact cut is made at the end.
        if (kept.size() > 2 * run.output_limit + 4) {
            kept.erase(0, kept.size() - run.output_limit - 4);
            result.truncated = true;
        }
    });
    if (tty) {
        ::signal(SIGTTOU, SIG_IGN);
        ::tcsetpgrp(STDIN_FILENO, ::getpgrp());
        ::signal(SIGTTOU, SIG_DFL);
    }
    result.status = outcome.status;
    result.timed_out = outcome.timed_out;
    if (kept.size() > run.output_limit) {
        result.output = std::string(utf8_tail(kept, run.output_limit));
        result.truncated = true;
    } else {
        result.output = std::move(kept);
    }
    return result;
}

}  // namespace team::proc
