// team spawn NAME [--role ROLE] [--cwd DIR] [--env K=V]... [--color COLOR] -- CMD [ARGS...]
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "cli/input.hpp"
#include "team/agents.hpp"

namespace team::cli {

void add_spawn_command(CLI::App& app) {
    struct Options {
        std::string name, role, cwd, color;
        std::vector<std::string> env, argv;
    };
    auto o = std::make_shared<Options>();
    auto* cmd = add_command(
        app, "spawn", "leader only: start CMD as a new agent in a pane of the team's tmux session",
        [o](Context& ctx) {
            TeamRecord team = ctx.team();
            SpawnRequest request;
            request.name = o->name;
            request.role = o->role;
            if (!o->cwd.empty()) request.cwd = o->cwd;
            request.env = o->env;
            if (!o->color.empty()) request.color = o->color;
            request.argv = o->argv;
            Agents agents(ctx.store(), ctx.clock(), ctx.tmux());
            AgentRecord a = agents.spawn(team, ctx.caller(team), request);
            if (ctx.out().json()) {
                ctx.out().print_json({{"agentId", a.id_string()},
                                      {"name", a.name},
                                      {"paneId", a.pane_id ? nlohmann::json(*a.pane_id) : nullptr},
                                      {"pid", a.pid ? nlohmann::json(*a.pid) : nullptr},
                                      {"color", a.color ? nlohmann::json(*a.color) : nullptr}});
            } else {
                ctx.out().line("spawned " + a.id_string() + " in pane " + a.pane_id.value_or("?") +
                               " (pid " + std::to_string(a.pid.value_or(0)) + ", " +
                               a.color.value_or("") + ")");
            }
            return 0;
        });
    cmd->add_option("NAME", o->name, "the agent's name: letters, digits, '_' and '-', at most 64")
        ->required();
    cmd->add_option("--role", o->role, "what the agent does (free text)")->type_name("ROLE");
    cmd->add_option("--cwd", o->cwd, "where CMD starts (default: the team's directory)")
        ->type_name("DIR");
    verbatim(cmd->add_option("--env", o->env, "an environment variable for CMD (repeatable)"))
        ->type_name("K=V");
    cmd->add_option("--color", o->color,
                    "blue, green, yellow, magenta, cyan, red, orange, purple, pink or teal "
                    "(default: the first free one)")
        ->type_name("COLOR");
    command_argument(cmd, o->argv);
    cmd->footer(
        "The pane's environment has TEAM_HOME, TEAM_NAME, TEAM_AGENT_ID, TEAM_AGENT_NAME and\n"
        "TEAM_AGENT_COLOR, plus every --env. Put -- before CMD when its arguments start with '-'.\n"
        "Example: team spawn worker-1 --role 'backend' -- claude --dangerously-skip-permissions");
}

}  // namespace team::cli
