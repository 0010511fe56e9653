// team shutdown approve [--request ID] | reject --reason TEXT [--request ID] | confirm
//               [--request ID] | status [NAME]          (SPEC 7.1, the agent's side)
#include <CLI/CLI.hpp>

#include "base/time.hpp"
#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "cli/input.hpp"
#include "team/shutdown.hpp"

namespace team::cli {

namespace {

int print_request(Context& ctx, const ShutdownRequest& r, const std::string& human) {
    if (ctx.out().json()) {
        nlohmann::json doc = to_json(r);
        doc["success"] = true;
        ctx.out().print_json(doc);
    } else {
        ctx.out().line(human);
    }
    return 0;
}

Shutdowns shutdowns(Context& ctx) {
    return Shutdowns(ctx.store(), ctx.clock(), ctx.tmux());
}

void add_approve(CLI::App& parent) {
    auto id = std::make_shared<std::optional<std::string>>();
    auto* cmd = add_command(
        parent, "approve", "accept the shutdown request addressed to you", [id](Context& ctx) {
            TeamRecord team = ctx.team();
            auto r = shutdowns(ctx).approve(team, ctx.caller(team), *id);
            return print_request(ctx, r,
                                 "approved shutdown request " + r.id_string() +
                                     "; finish your current step, then run 'team shutdown "
                                     "confirm' (or exit)");
        });
    optional_value(cmd, "--request", *id, "the request (default: your newest open one)")
        ->type_name("ID");
    cmd->footer(
        "The leader's inbox gets shutdown_approved. You stay shutting_down (no new task can be\n"
        "claimed) until you confirm or exit.\nExample: team shutdown approve");
}

void add_reject(CLI::App& parent) {
    struct Options {
        std::string reason;
        std::optional<std::string> id;
    };
    auto o = std::make_shared<Options>();
    auto* cmd = add_command(
        parent, "reject", "refuse the shutdown request addressed to you, saying why",
        [o](Context& ctx) {
            TeamRecord team = ctx.team();
            auto r = shutdowns(ctx).reject(team, ctx.caller(team), text_argument(o->reason), o->id);
            std::string human =
                "rejected shutdown request " + r.id_string() + "; you are active again";
            if (r.force_at) {
                human += " (its deadline still holds: force-killed at " + iso8601(*r.force_at) +
                         " unless you confirm before)";
            }
            return print_request(ctx, r, human);
        });
    cmd->add_option("--reason", o->reason, "why, for the leader ('-': stdin)")
        ->type_name("TEXT")
        ->required();
    optional_value(cmd, "--request", o->id, "the request (default: your newest open one)")
        ->type_name("ID");
    cmd->footer(
        "The leader's inbox gets shutdown_rejected with your reason, and you are active again.\n"
        "An approval cannot be taken back. A --force-after deadline the leader set still holds.\n"
        "Example: team shutdown reject --reason 'in the middle of task 4, done in 2 min'");
}

void add_confirm(CLI::App& parent) {
    auto id = std::make_shared<std::optional<std::string>>();
    auto* cmd = add_command(
        parent, "confirm", "you are done: end now (tasks handed back, pane closed)",
        [id](Context& ctx) {
            TeamRecord team = ctx.team();
            auto r = shutdowns(ctx).confirm(team, ctx.caller(team), *id);
            return print_request(ctx, r,
                                 r.closed_at ? r.agent + " has ended (" + str(r.phase) + ")"
                                             : "confirmed shutdown request " + r.id_string() +
                                                   "; " + r.agent + " is ending");
        });
    optional_value(cmd, "--request", *id, "the request (default: your newest open one)")
        ->type_name("ID");
    cmd->footer(
        "Run from your own pane, it returns at once and your pane's supervisor completes the\n"
        "shutdown (your processes get SIGTERM, SIGKILL after the request's grace; your tasks are\n"
        "handed back; the leader's inbox gets shutdown_confirmed; the pane closes). Confirming\n"
        "without approving first is allowed. Exiting after an approval confirms too.\n"
        "Example: team shutdown confirm");
}

void add_status(CLI::App& parent) {
    auto name = std::make_shared<std::optional<std::string>>();
    auto* cmd = add_command(
        parent, "status", "the shutdown request of an agent and its phase", [name](Context& ctx) {
            TeamRecord team = ctx.team();
            auto rows = shutdowns(ctx).status(team, ctx.caller(team), *name);
            if (ctx.out().json()) {
                nlohmann::json doc = nlohmann::json::array();
                for (const auto& r : rows) doc.push_back(to_json(r));
                // One agent asked: its request; the leader's overview: the list.
                ctx.out().print_json(*name || !ctx.caller(team).is_leader ? doc.front() : doc);
                return 0;
            }
            if (rows.empty()) {
                ctx.out().line("no open shutdown requests in team " + team.name);
                return 0;
            }
            Table table({"REQUEST", "AGENT", "METHOD", "PHASE", "REQUESTED", "DEADLINE", "REASON"});
            EpochMs now = ctx.clock().now();
            for (const auto& r : rows) {
                std::string reason = r.reject_reason ? "rejected: " + *r.reject_reason : r.reason;
                table.add({r.id_string(), r.agent, str(r.method),
                           r.closed_at && r.phase != ShutdownPhase::rejected
                               ? str(r.phase) + " (ended)"
                               : str(r.phase),
                           relative_time(r.requested_at, now),
                           r.force_at ? relative_time(*r.force_at, now) : "-", cell(reason)});
            }
            table.print(ctx.out());
            return 0;
        });
    optional_value(cmd, "NAME", *name, "the agent (default: you; the leader: every open request)");
    cmd->footer(
        "Phases: requested -> approved -> confirmed, or requested -> rejected; force_killed when\n"
        "force ended it. Exit 3 when the agent has never had a request.\n"
        "Examples:\n"
        "  team shutdown status            (an agent: its own request; the leader: all open)\n"
        "  team shutdown status worker-2 --json");
}

}  // namespace

void add_shutdown_command(CLI::App& app) {
    auto* shutdown =
        app.add_subcommand("shutdown", "the agent's side of a graceful shutdown: answer, confirm");
    shutdown->require_subcommand(1);
    add_approve(*shutdown);
    add_reject(*shutdown);
    add_confirm(*shutdown);
    add_status(*shutdown);
    shutdown->footer(
        "An agent polls its inbox (team inbox --type shutdown_request --unread --wait 30s) and\n"
        "answers the request addressed to it. Only that agent may approve, reject or confirm.");
}

}  // namespace team::cli
