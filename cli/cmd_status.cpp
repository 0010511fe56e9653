// team status [NAME]
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "team/agents.hpp"
#include "team/shutdown.hpp"
#include "tmux/server.hpp"

namespace team::cli {

namespace {

void print_human(const Context& ctx, const TeamStatus& s,
                 const std::vector<ShutdownRequest>& shutdowns) {
    const auto& out = ctx.out();
    auto now = ctx.clock().now();
    const auto& t = s.team;
    out.line(out.bold("team") + "       " + t.name + "  (" + str(t.status) + ")");
    if (!t.description.empty()) out.line(out.bold("about") + "      " + cell(t.description, 200));
    out.line(out.bold("leader") + "     " + t.leader_id());
    out.line(out.bold("cwd") + "        " + t.cwd);
    out.line(out.bold("created") + "    " + relative_time(t.created_at, now));
    out.line(out.bold("agents") + "     " + std::to_string(t.live_agents) + " live, " +
             std::to_string(t.total_agents) + " in all");
    auto count = [&](const char* status) {
        auto it = s.tasks.find(status);
        return std::to_string(it == s.tasks.end() ? 0 : it->second);
    };
    out.line(out.bold("tasks") + "      " + count("pending") + " pending, " + count("in_progress") +
             " in progress, " + count("completed") + " completed");
    if (!shutdowns.empty()) {
        std::string open;
        for (const auto& r : shutdowns) {
            open += (open.empty() ? "" : ", ") + r.agent + " " + str(r.phase) + " (request " +
                    r.id_string() + ")";
        }
        out.line(out.bold("shutdowns") + "  " + open);
    }
    if (s.agents.empty()) return;
    out.line("");
    Table table({"NAME", "STATUS", "ROLE", "PANE", "PID", "AGE"});
    for (const auto& a : s.agents) {
        table.add({a.name, str(a.status), cell(a.role, 20), a.pane_id.value_or("-"),
                   a.pid ? std::to_string(*a.pid) : "-", relative_time(a.created_at, now)});
    }
    table.print(out);
}

}  // namespace

void add_status_command(CLI::App& app) {
    auto name = std::make_shared<std::string>();
    auto* cmd = add_command(app, "status",
                            "the team, its leader, its live agents (checked against tmux and the "
                            "OS), its task counts, open shutdown requests and its tmux server",
                            [name](Context& ctx) {
                                TeamRecord team =
                                    ctx.team(name->empty() ? std::nullopt : std::optional(*name));
                                // Agents are checked against tmux and the OS before they are shown.
                                Agents(ctx.store(), ctx.clock(), ctx.tmux()).reconcile(team);
                                team = ctx.teams().find(team.name);
                                TeamStatus s = ctx.teams().status(team);
                                auto shutdowns = open_requests(ctx.store().db(), team.id);
                                auto socket = tmux::TmuxServer::socket_args(ctx.store().home());
                                bool running = tmux::TmuxServer::server_alive(ctx.store().home());
                                if (ctx.out().json()) {
                                    nlohmann::json doc = to_json(s.team);
                                    doc["agents"] = nlohmann::json::array();
                                    for (const auto& a : s.agents)
                                        doc["agents"].push_back(to_json(a));
                                    doc["tasks"] = s.tasks;
                                    doc["shutdownRequests"] = nlohmann::json::array();
                                    for (const auto& r : shutdowns)
                                        doc["shutdownRequests"].push_back(to_json(r));
                                    doc["tmux"] = {{"socket", socket[1]}, {"running", running}};
                                    ctx.out().print_json(doc);
                                } else {
                                    print_human(ctx, s, shutdowns);
                                    ctx.out().line(ctx.out().bold("tmux") + "       " + socket[1] +
                                                   (running ? " (running)" : " (not running)"));
                                }
                                return 0;
                            });
    cmd->add_option("NAME", *name, "the team (default: --team, TEAM_NAME, or the only live team)");
    cmd->footer("Example: team status web --json");
}

}  // namespace team::cli
