// team spawn NAME [--role ROLE] [--cwd DIR] [--env K=V]... [--color COLOR] -- CMD [ARGS...]
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/op_command.hpp"
#include "ops/table.hpp"

namespace team::cli {

namespace {

void print_human(Context& ctx, const ops::Result& r) {
    const auto& d = r.doc;
    ctx.out().line("spawned " + d["agentId"].get<std::string>() + " in pane " +
                   (d["paneId"].is_string() ? d["paneId"].get<std::string>() : "?") + " (pid " +
                   d["pid"].dump() + ", " +
                   (d["color"].is_string() ? d["color"].get<std::string>() : "") + ")");
    if (d.contains("worktree") && d["worktree"].is_object()) {
        const auto& w = d["worktree"];
        ctx.out().line("  worktree " + w["path"].get<std::string>() + " on branch " +
                       w["branch"].get<std::string>() + " from " +
                       (w["baseName"].get<std::string>().empty()
                            ? w["base"].get<std::string>().substr(0, 12)
                            : w["baseName"].get<std::string>()));
    }
}

}  // namespace

void add_spawn_command(CLI::App& app) {
    auto* cmd = add_operation(app, ops::spawn_agent_op, print_human);
    cmd->footer(
        "The pane's environment has TEAM_HOME, TEAM_NAME, TEAM_AGENT_ID, TEAM_AGENT_NAME and\n"
        "TEAM_AGENT_COLOR, plus every --env. Put -- before CMD when its arguments start with '-'.\n"
        "Example: team spawn worker-1 --role 'backend' -- claude --dangerously-skip-permissions");
}

}  // namespace team::cli
