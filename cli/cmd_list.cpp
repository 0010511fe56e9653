// team list [--all]
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/context.hpp"

namespace team::cli {

void add_list_command(CLI::App& app) {
    auto all = std::make_shared<bool>(false);
    auto* cmd = add_command(
        app, "list", "all teams: name, live agents/total, open tasks, created",
        [all](Context& ctx) {
            std::vector<TeamRecord> teams;
            if (ctx.has_store()) teams = ctx.teams().list(*all);
            if (ctx.out().json()) {
                nlohmann::json doc = nlohmann::json::array();
                for (const auto& t : teams) doc.push_back(to_json(t));
                ctx.out().print_json(doc);
                return 0;
            }
            if (teams.empty()) {
                ctx.out().line("no teams; create one with 'team create NAME'");
                return 0;
            }
            Table table({"NAME", "AGENTS", "OPEN TASKS", "STATUS", "CREATED", "DESCRIPTION"});
            auto now = ctx.clock().now();
            for (const auto& t : teams) {
                table.add({t.name,
                           std::to_string(t.live_agents) + "/" + std::to_string(t.total_agents),
                           std::to_string(t.open_tasks),
                           t.status == TeamState::active ? ctx.out().green(str(t.status))
                                                         : ctx.out().dim(str(t.status)),
                           relative_time(t.created_at, now), cell(t.description)});
            }
            table.print(ctx.out());
            return 0;
        });
    cmd->add_flag("--all", *all, "also list dissolved teams");
    cmd->footer("Example: team list --json");
}

}  // namespace team::cli
