// team kill-agent NAME [--force] [--reason TEXT] [--wait] [--timeout DUR] [--force-after DUR]
//                      [--grace DUR] [--reassign-to NAME]
#include <CLI/CLI.hpp>

#include "base/duration.hpp"
#include "base/error.hpp"
#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "cli/input.hpp"
#include "team/shutdown.hpp"

namespace team::cli {

namespace {

struct Options {
    std::string name, reason;
    bool force = false, wait = false;
    std::optional<std::string> timeout, force_after, grace, reassign_to;
};

std::string task_list(const std::vector<std::string>& ids) {
    std::string s;
    for (const auto& id : ids) s += (s.empty() ? "" : ", ") + id;
    return s;
}

void print_human(const Output& out, const KillResult& r) {
    std::string tasks =
        r.reassigned.empty() ? "" : "; tasks handed back: " + task_list(r.reassigned);
    if (r.phase == ShutdownPhase::requested && !r.exit_reason) {
        out.line("asked " + r.agent_id + " to shut down (request " + r.request_id +
                 "); its answer reaches your inbox. Follow it with: team shutdown status " +
                 r.agent_id.substr(0, r.agent_id.find('@')));
    } else if (r.phase == ShutdownPhase::confirmed) {
        out.line(r.agent_id + " confirmed the shutdown and has ended" + tasks);
    } else if (r.phase == ShutdownPhase::force_killed) {
        out.line("force-killed " + r.agent_id + tasks);
    } else {
        out.line(r.agent_id + " has ended (" + r.exit_reason.value_or("exited") +
                 ") before answering request " + r.request_id + tasks);
    }
}

int run(Context& ctx, const Options& o) {
    KillResult result;
    result.agent_id = o.name;
    result.method = o.force ? ShutdownMethod::force : ShutdownMethod::graceful;
    try {
        KillOptions k;
        k.name = o.name;
        k.force = o.force;
        k.reason = text_argument(o.reason);
        k.wait = o.wait;
        if (o.timeout) k.timeout = parse_duration(*o.timeout, "--timeout");
        if (o.force_after) k.force_after = parse_duration(*o.force_after, "--force-after");
        if (o.grace) k.grace = parse_duration(*o.grace, "--grace");
        k.reassign_to = o.reassign_to;  // given empty: a bad name, not "the pool"
        TeamRecord team = ctx.team();
        result = Shutdowns(ctx.store(), ctx.clock(), ctx.tmux()).kill(team, ctx.caller(team), k);
    } catch (const Error& e) {
        if (!ctx.out().json()) throw;
        // The result keeps its shape on every error (SPEC 1.4).
        nlohmann::json doc = to_json(result);
        doc["success"] = false;
        doc["phase"] = nullptr;
        doc["requestId"] = nullptr;
        doc["error"] = e.what();
        doc["code"] = code_name(e.code());
        ctx.out().print_json(doc);
        return exit_code(e.code());
    }
    if (ctx.out().json()) {
        ctx.out().print_json(to_json(result));
        return result.exit_code;
    }
    if (!result.success) {
        ErrorCode code = result.exit_code == 124 ? ErrorCode::timeout
                         : result.exit_code == 4 ? ErrorCode::refused
                                                 : ErrorCode::failed;
        throw Error(code, result.error.value_or("the kill failed"));
    }
    print_human(ctx.out(), result);
    return 0;
}

}  // namespace

void add_kill_command(CLI::App& app) {
    auto o = std::make_shared<Options>();
    auto* cmd = add_command(
        app, "kill-agent",
        "leader only: stop an agent, gracefully (a shutdown request it answers) or --force",
        [o](Context& ctx) { return run(ctx, *o); });
    cmd->add_option("NAME", o->name, "the agent to stop")->required();
    cmd->add_flag("--force", o->force,
                  "end its whole process tree now: SIGTERM (with SIGCONT), SIGKILL after --grace");
    cmd->add_option("--reason", o->reason, "why, for the agent and the activity log ('-': stdin)")
        ->type_name("TEXT");
    cmd->add_flag("--wait", o->wait,
                  "block until the agent confirmed (and has ended), rejected (exit 4) or was "
                  "force-killed");
    optional_value(cmd, "--timeout", o->timeout,
                   "with --wait (implied): exit 124 when DUR runs out, phase as it stands")
        ->type_name("DUR");
    optional_value(cmd, "--force-after", o->force_after,
                   "a deadline: not confirmed by then, it is force-killed by its pane's "
                   "supervisor, even if this command is gone")
        ->type_name("DUR");
    optional_value(cmd, "--grace", o->grace,
                   "how long its processes get between SIGTERM and SIGKILL (default 5s)")
        ->type_name("DUR");
    optional_value(cmd, "--reassign-to", o->reassign_to,
                   "give its unfinished tasks to this member (still pending) instead of the pool")
        ->type_name("NAME");
    cmd->footer(
        "Graceful (default): stores a shutdown request, puts shutdown_request in the agent's\n"
        "inbox, sets it shutting_down and returns at once (phase requested). The agent answers\n"
        "with 'team shutdown approve' or 'reject --reason'; 'team shutdown confirm' or its exit\n"
        "then ends it: its tree ends, its pane closes, its tasks go back to the pool.\n"
        "--force ends it now, whatever its state; when it returns success, no process of the\n"
        "agent is left. An agent already shutting down can only be stopped with --force.\n"
        "Examples:\n"
        "  team kill-agent worker-2 --reason 'done for today' --wait --timeout 2m\n"
        "  team kill-agent worker-2 --force-after 5m\n"
        "  team kill-agent worker-2 --force --grace 2s --reassign-to worker-3");
}

}  // namespace team::cli
