// team run [--timeout DUR] [--output-limit BYTES] [--signal SIG] [--grace DUR] -- CMD [ARGS...]
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.hpp"
#include "cli/op_command.hpp"
#include "ops/table.hpp"

namespace team::cli {

namespace {

void write_to(std::FILE* stream, std::string_view bytes) {
    std::fwrite(bytes.data(), 1, bytes.size(), stream);
    std::fflush(stream);
}

// The output was passed through as it came; only a timeout is left to say.
void print_human(Context&, const ops::Result& r) {
    if (r.doc["timedOut"] == true) {
        write_to(stderr, "team: timed out after " + r.view["timeout"].get<std::string>() + "\n");
    }
}

// The command's output, as it comes (not with --json: it is in the result).
void print_output(Context& ctx, const nlohmann::json& event) {
    if (ctx.out().json()) return;
    write_to(stdout, event["output"].get_ref<const std::string&>());
}

}  // namespace

void add_run_command(CLI::App& app) {
    auto* cmd = add_operation(app, ops::run_op, print_human, print_output);
    cmd->footer(
        "Output is passed through as it comes; with --json it is returned in the result.\n"
        "Exit code: the command's own, 128+N when killed by signal N, 124 when timed out.\n"
        "Example: team run --timeout 30s -- npm test");
}

}  // namespace team::cli
