// team run [--timeout DUR] [--output-limit BYTES] [--signal SIG] [--grace DUR] -- CMD [ARGS...]
#include <CLI/CLI.hpp>
#include <cstdio>

#include "base/duration.hpp"
#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "cli/input.hpp"
#include "proc/foreground.hpp"
#include "proc/signals.hpp"

namespace team::cli {

void add_run_command(CLI::App& app) {
    struct Options {
        std::string signal = "SIGTERM", grace = "5s";
        std::optional<std::string> timeout;
        std::int64_t output_limit = 1 << 20;
        std::vector<std::string> argv;
    };
    auto o = std::make_shared<Options>();
    auto* cmd = add_command(
        app, "run", "run CMD in the foreground, killing its whole tree at --timeout",
        [o](Context& ctx) {
            proc::ForegroundRun run;
            run.argv = o->argv;
            if (o->timeout) run.timeout = parse_duration(*o->timeout, "--timeout");
            run.signal = proc::parse_signal(o->signal, "--signal", true);
            run.grace = parse_duration(o->grace, "--grace");
            run.output_limit = static_cast<std::size_t>(o->output_limit);
            bool json = ctx.out().json();
            auto result = proc::run_foreground(run, [json](std::string_view chunk) {
                if (json) return;
                std::fwrite(chunk.data(), 1, chunk.size(), stdout);
                std::fflush(stdout);
            });
            if (json) {
                ctx.out().print_json(
                    {{"exitStatus",
                      {{"exitCode", result.status.exit_code
                                        ? nlohmann::json(*result.status.exit_code)
                                        : nullptr},
                       {"signal", result.status.signal
                                      ? nlohmann::json(proc::signal_name(*result.status.signal))
                                      : nullptr}}},
                     {"timedOut", result.timed_out},
                     {"output", result.output},
                     {"truncated", result.truncated}});
            } else if (result.timed_out) {
                std::string note = "team: timed out after " + *o->timeout + "\n";
                std::fwrite(note.data(), 1, note.size(), stderr);
            }
            return result.exit_code();
        });
    optional_value(cmd, "--timeout", o->timeout,
                   "kill the command's whole tree after this long (exit 124)")
        ->type_name("DUR");
    cmd->add_option("--output-limit", o->output_limit,
                    "bytes of output kept for --json (the end; default 1 MiB)")
        ->type_name("BYTES")
        ->check(whole_number(1));
    cmd->add_option("--signal", o->signal, "the signal sent at the timeout (default SIGTERM)")
        ->type_name("SIG");
    cmd->add_option("--grace", o->grace, "how long after the signal before SIGKILL (default 5s)")
        ->type_name("DUR");
    command_argument(cmd, o->argv);
    cmd->footer(
        "Output is passed through as it comes; with --json it is returned in the result.\n"
        "Exit code: the command's own, 128+N when killed by signal N, 124 when timed out.\n"
        "Example: team run --timeout 30s -- npm test");
}

}  // namespace team::cli
