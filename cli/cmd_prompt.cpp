// team prompt NAME TEXT [--no-enter]
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/op_command.hpp"
#include "ops/table.hpp"

namespace team::cli {

void add_prompt_command(CLI::App& app) {
    auto* cmd = add_operation(app, ops::prompt_agent_op, [](Context& ctx, const ops::Result& r) {
        ctx.out().line("typed " + r.doc["bytes"].dump() + " bytes into " +
                       r.doc["agentId"].get<std::string>() + " (" +
                       r.doc["paneId"].get<std::string>() + ")");
    });
    cmd->footer(
        "A terminal in line mode takes at most 4095 characters per line.\n"
        "Example: team prompt worker-1 'run the tests; then fix what fails'");
}

}  // namespace team::cli
