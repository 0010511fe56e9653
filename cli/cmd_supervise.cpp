// team __supervise --home DIR --ready-fd N ID: the detached supervisor of one background shell.
// Hidden: started by `team shell start`, never by a person.
#include <CLI/CLI.hpp>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "ops/supervisors.hpp"

namespace team::cli {

void add_supervise_command(CLI::App& app) {
    struct Options {
        std::string id;
        int ready_fd = -1;
    };
    auto o = std::make_shared<Options>();
    auto* cmd = add_command(app, "__supervise", "", [o](Context& ctx) {
        return ops::supervise_shell(ctx, o->id, o->ready_fd);
    });
    cmd->group("");  // hidden from help
    cmd->add_option("--ready-fd", o->ready_fd);
    cmd->add_option("ID", o->id)->required();

    // team __agent --home DIR ID: the supervisor inside an agent's pane (ops/supervisors.hpp).
    // --spawner PID: the spawn (or resume) that opened the pane, whose record it must be.
    auto agent_id = std::make_shared<std::int64_t>(0);
    auto spawner = std::make_shared<std::int64_t>(0);
    auto* agent = add_command(app, "__agent", "", [agent_id, spawner](Context& ctx) {
        return ops::supervise_agent(
            ctx, *agent_id, *spawner > 0 ? std::optional<std::int64_t>(*spawner) : std::nullopt);
    });
    agent->group("");
    agent->add_option("ID", *agent_id)->required();
    agent->add_option("--spawner", *spawner);

    // team __acp --home DIR ID: the host of an ACP agent, run by its pane supervisor in place
    // of the agent's command (team/acp_host.hpp).
    auto acp_id = std::make_shared<std::int64_t>(0);
    auto* acp = add_command(app, "__acp", "",
                            [acp_id](Context& ctx) { return ops::host_acp_agent(ctx, *acp_id); });
    acp->group("");
    acp->add_option("ID", *acp_id)->required();

    // team __watch --home DIR ID: the watcher of an agent's worktree, started by its pane
    // supervisor (team/worktree_watch.hpp).
    auto watch_id = std::make_shared<std::int64_t>(0);
    auto* watch = add_command(app, "__watch", "", [watch_id](Context& ctx) {
        return ops::watch_worktree(ctx, *watch_id);
    });
    watch->group("");
    watch->add_option("ID", *watch_id)->required();

    // team __report --home DIR NAME@TEAM KIND EVENT [JSON]: an agent's hook reporting what it
    // does (team/hook_reports.hpp), wired by its preset.
    struct ReportOptions {
        std::string agent, kind, event;
        std::optional<std::string> payload;
    };
    auto r = std::make_shared<ReportOptions>();
    auto* report = add_command(app, "__report", "", [r](Context& ctx) {
        return ops::report_hook(ctx, r->agent, r->kind, r->event, r->payload);
    });
    report->group("");
    report->add_option("AGENT", r->agent)->required();
    report->add_option("KIND", r->kind)->required();
    report->add_option("EVENT", r->event)->required();
    report->add_option("JSON", r->payload);

    // team __screen --home DIR ID: an agent's pane output, piped by tmux (team/screen_watch.hpp).
    auto screen_id = std::make_shared<std::int64_t>(0);
    auto* screen = add_command(app, "__screen", "", [screen_id](Context& ctx) {
        return ops::watch_screen(ctx, *screen_id);
    });
    screen->group("");
    screen->add_option("ID", *screen_id)->required();

    // team __usage --home DIR ID: an agent's spending sampled and its limits held
    // (team/usage.hpp), started by its pane supervisor.
    auto usage_id = std::make_shared<std::int64_t>(0);
    auto* usage = add_command(
        app, "__usage", "", [usage_id](Context& ctx) { return ops::watch_usage(ctx, *usage_id); });
    usage->group("");
    usage->add_option("ID", *usage_id)->required();

    // team __claude-state --home DIR ID PID CONFIG_DIR: Claude Code's state file watched for an
    // agent (team/claude_state_watch.hpp), started by its pane supervisor.
    struct ClaudeStateOptions {
        std::int64_t id = 0, pid = 0;
        std::string dir;
    };
    auto c = std::make_shared<ClaudeStateOptions>();
    auto* claude_state = add_command(app, "__claude-state", "", [c](Context& ctx) {
        return ops::watch_claude_state(ctx, c->id, c->pid, c->dir);
    });
    claude_state->group("");
    claude_state->add_option("ID", c->id)->required();
    claude_state->add_option("PID", c->pid)->required();
    claude_state->add_option("DIR", c->dir)->required();

    // team __notify --home DIR CMD MS: runs the home's notify command for the event on stdin,
    // for at most MS milliseconds (team/notify.hpp).
    struct NotifyOptions {
        std::string command;
        long long bound_ms = 10'000;
    };
    auto n = std::make_shared<NotifyOptions>();
    auto* notify = add_command(app, "__notify", "", [n](Context& ctx) {
        return ops::run_notify(ctx, n->command, n->bound_ms);
    });
    notify->group("");
    notify->add_option("CMD", n->command)->required();
    notify->add_option("MS", n->bound_ms);

    // team __link --home DIR --ssh DEST --team-path PATH NAME: the home's link to a host
    // (hosts/link.hpp), started by the first command that needs it.
    struct LinkOptions {
        std::string name, ssh, team_path = "team";
        int ready_fd = 3;
    };
    auto l = std::make_shared<LinkOptions>();
    auto* link = add_command(app, "__link", "", [l](Context& ctx) {
        return ops::run_link(ctx, l->name, l->ssh, l->team_path, version(), l->ready_fd);
    });
    link->group("");
    link->add_option("--ssh", l->ssh)->required();
    link->add_option("--team-path", l->team_path);
    link->add_option("NAME", l->name)->required();

    // team __keeper --home DIR: the keeper of this home's lease when it is a host
    // (hosts/keeper.hpp), started by the spawn of its first agent.
    auto* keeper =
        add_command(app, "__keeper", "", [](Context& ctx) { return ops::run_keeper(ctx, 3); });
    keeper->group("");

    // team __channel: the far end of a link, run by ssh on the host (ops/remote.hpp).
    auto* channel =
        add_command(app, "__channel", "", [](Context&) { return ops::run_channel(version()); });
    channel->group("");
}

}  // namespace team::cli
