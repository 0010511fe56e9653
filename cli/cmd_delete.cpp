// team delete NAME
#include <CLI/CLI.hpp>

#include "base/error.hpp"
#include "cli/commands.hpp"
#include "cli/op_command.hpp"
#include "ops/table.hpp"

namespace team::cli {

void add_delete_command(CLI::App& app) {
    auto* cmd = add_operation(app, ops::delete_team_op, [](Context& ctx, const ops::Result& r) {
        ctx.out().line("deleted team " + quote(r.doc["name"].get<std::string>()));
    });
    cmd->footer(
        "Only the leader may delete a team. A team with live agents is refused: stop them\n"
        "first with 'team teardown NAME'.\nExample: team delete web");
}

}  // namespace team::cli
