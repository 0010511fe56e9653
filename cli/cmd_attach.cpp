// team attach [NAME]
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>

#include "base/error.hpp"
#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "team/agents.hpp"
#include "tmux/server.hpp"

namespace team::cli {

void add_attach_command(CLI::App& app) {
    auto name = std::make_shared<std::string>();
    auto* cmd = add_command(
        app, "attach", "attach this terminal to the team's tmux session",
        [name](Context& ctx) -> int {
            if (!::isatty(STDIN_FILENO) || !::isatty(STDOUT_FILENO)) {
                throw refused(
                    "team attach needs a terminal; use 'team logs NAME' to read a pane's output");
            }
            TeamRecord team = ctx.team();
            Agents agents(ctx.store(), ctx.clock(), ctx.tmux());
            auto live = agents.list(team, false);
            if (live.empty())
                throw refused("team " + quote(team.name) + " has no live agent to attach to");
            std::string pane = live.front().pane_id.value_or("");
            if (!name->empty()) pane = agents.find(team, *name).pane_id.value_or("");
            std::string exe = tmux::tmux_binary();
            if (exe.empty()) throw failed("tmux is not installed");
            std::vector<std::string> argv{"tmux"};
            for (const auto& a : tmux::TmuxServer::socket_args(ctx.store().home()))
                argv.push_back(a);
            argv.insert(argv.end(),
                        {"-f", tmux::TmuxServer::ensure_config(ctx.store().home()).string()});
            if (!pane.empty()) argv.insert(argv.end(), {"select-pane", "-t", pane, ";"});
            argv.insert(argv.end(), {"attach-session", "-t", "=" + team.name + ":"});
            std::vector<char*> cargv;
            for (auto& a : argv) cargv.push_back(a.data());
            cargv.push_back(nullptr);
            ::unsetenv("TMUX");  // attaching from inside another tmux is fine: it is another server
            ::execv(exe.c_str(), cargv.data());
            throw failed("cannot run tmux");
        });
    cmd->add_option("NAME", *name, "the agent whose pane is selected (default: the first)");
    cmd->footer(
        "Detach again with the tmux prefix key then d (C-b d).\nExample: team attach worker-1");
}

}  // namespace team::cli
