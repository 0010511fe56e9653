// team logs NAME [-n LINES] [--follow]
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.hpp"
#include "cli/op_command.hpp"
#include "ops/table.hpp"

namespace team::cli {

namespace {

void write_raw(const std::string& text) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
}

}  // namespace

void add_logs_command(CLI::App& app) {
    auto* cmd = add_operation(
        app, ops::agent_logs_op,
        [](Context&, const ops::Result& r) {
            if (r.doc.is_object()) write_raw(r.doc["output"].get<std::string>());
        },
        [](Context& ctx, const nlohmann::json& event) {
            // --follow: each chunk as it comes, raw (--json: a line {"output": chunk} each).
            if (ctx.out().json()) {
                ctx.out().print_json(event);
            } else {
                write_raw(event["output"].get<std::string>());
            }
        });
    cmd->footer(
        "The log is the raw pane output, terminal escapes included, as the pane showed it.\n"
        "Example: team logs worker-1 -n 50");
}

}  // namespace team::cli
