// team delete NAME
#include <CLI/CLI.hpp>

#include "base/error.hpp"
#include "base/names.hpp"
#include "cli/commands.hpp"
#include "cli/context.hpp"

namespace team::cli {

void add_delete_command(CLI::App& app) {
    auto name = std::make_shared<std::string>();
    auto* cmd =
        add_command(app, "delete", "remove a team that has no live agent, with all its records",
                    [name](Context& ctx) {
                        TeamRecord team = ctx.team(*name);
                        ctx.teams().remove(team, ctx.caller(team));
                        if (ctx.out().json()) {
                            ctx.out().print_json({{"success", true}, {"name", team.name}});
                        } else {
                            ctx.out().line("deleted team " + quote(team.name));
                        }
                        return 0;
                    });
    cmd->add_option("NAME", *name, "the team to delete")->required();
    cmd->footer(
        "Only the leader may delete a team. A team with live agents is refused: stop them\n"
        "first with 'team teardown NAME'.\nExample: team delete web");
}

}  // namespace team::cli
