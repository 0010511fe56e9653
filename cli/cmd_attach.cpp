// team attach [NAME]
#include <unistd.h>

#include <CLI/CLI.hpp>

#include "base/error.hpp"
#include "cli/commands.hpp"
#include "cli/op_command.hpp"
#include "ops/table.hpp"

namespace team::cli {

void add_attach_command(CLI::App& app) {
    auto* cmd = add_operation(
        app, ops::attach_op,
        [](Context& ctx, const ops::Result& r) {
            ctx.become_tmux_client(r.doc["session"].get<std::string>(),
                                   r.doc["paneId"].get<std::string>());
        },
        {},
        [](const Context&, nlohmann::json&) {
            // Only a terminal can attach; asked before anything is looked up.
            if (!::isatty(STDIN_FILENO) || !::isatty(STDOUT_FILENO)) {
                throw refused(
                    "team attach needs a terminal; use 'team logs NAME' to read a pane's output");
            }
        });
    cmd->footer(
        "Detach again with the tmux prefix key then d (C-b d).\nExample: team attach worker-1");
}

}  // namespace team::cli
