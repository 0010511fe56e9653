#include "shells/foreground.hpp"

#include <signal.h>
#include <unistd.h>

#include <filesystem>

#include "base/text.hpp"

extern char** environ;

namespace team::shells {

using proc::exit_code_of;
using proc::LaunchSpec;
using proc::RunOutcome;
using proc::Supervisor;
using proc::take_terminal_back;
using proc::terminal_is_ours;

int ForegroundResult::exit_code() const {
    return exit_code_of(status, timed_out);
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
    bool tty = terminal_is_ours();
    spec.foreground_tty = tty;

    Supervisor supervisor;
    supervisor.start(spec);
    ForegroundResult result;
    std::string kept;
    RunOutcome outcome = supervisor.run([&](std::string_view chunk) {
        if (echo) echo(chunk);
        keep_tail(kept, chunk, run.output_limit, result.truncated);
    });
    if (tty) take_terminal_back();
    result.status = outcome.status;
    result.timed_out = outcome.timed_out;
    cut_tail(kept, run.output_limit, result.truncated);
    result.output = std::move(kept);
    return result;
}

}  // namespace team::shells
