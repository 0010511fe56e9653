// team agents [--all]
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "tasks/tasks.hpp"
#include "team/agents.hpp"

namespace team::cli {

void add_agents_command(CLI::App& app) {
    auto all = std::make_shared<bool>(false);
    auto* cmd = add_command(
        app, "agents", "the team's live agents: name, status, pane, pid, colour, open tasks, age",
        [all](Context& ctx) {
            TeamRecord team = ctx.team();
            Agents agents(ctx.store(), ctx.clock(), ctx.tmux());
            auto list = agents.list(team, *all);
            if (ctx.out().json()) {
                nlohmann::json doc = nlohmann::json::array();
                for (const auto& a : list) doc.push_back(to_json(a));
                ctx.out().print_json(doc);
                return 0;
            }
            if (list.empty()) {
                ctx.out().line(*all ? "no agents" : "no live agents (--all shows terminated ones)");
                return 0;
            }
            auto now = ctx.clock().now();
            auto open = tasks::open_by_owner(ctx.store().db(), team.id);
            Table table({"NAME", "STATUS", "PANE", "PID", "COLOR", "TASKS", "AGE", "EXIT"});
            for (const auto& a : list) {
                std::string exit;
                if (a.exit_reason) {
                    exit = *a.exit_reason;
                    if (a.exit_code) exit += " (" + std::to_string(*a.exit_code) + ")";
                    if (a.signal) exit += " (" + *a.signal + ")";
                }
                table.add({a.name,
                           a.live() ? ctx.out().green(str(a.status)) : ctx.out().dim(str(a.status)),
                           a.pane_id.value_or("-"), a.pid ? std::to_string(*a.pid) : "-",
                           a.color.value_or("-"),
                           a.live() && open.count(a.name) ? std::to_string(open[a.name]) : "-",
                           relative_time(a.created_at, now), exit});
            }
            table.print(ctx.out());
            return 0;
        });
    cmd->add_flag("--all", *all, "also list terminated agents");
    cmd->footer(
        "Every agent is first checked against its process and tmux: one whose process has ended\n"
        "is shown terminated, with how it ended.\nExample: team agents --json");
}

}  // namespace team::cli
