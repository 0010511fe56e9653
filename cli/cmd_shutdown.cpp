// team shutdown approve [--request ID] | reject --reason TEXT [--request ID] | confirm
//               [--request ID] | status [NAME]          (SPEC 7.1, the agent's side)
#include <CLI/CLI.hpp>

#include "base/states.hpp"
#include "base/time.hpp"
#include "cli/commands.hpp"
#include "cli/op_command.hpp"
#include "ops/table.hpp"

namespace team::cli {

namespace {

std::string field(const nlohmann::json& doc, const char* key) {
    return doc[key].get<std::string>();
}

void add_approve(CLI::App& parent) {
    auto* cmd =
        add_operation(parent, ops::approve_shutdown_op, [](Context& ctx, const ops::Result& r) {
            ctx.out().line("approved shutdown request " + field(r.doc, "requestId") +
                           "; finish your current step, then run 'team shutdown confirm' (or "
                           "exit)");
        });
    cmd->footer(
        "The leader's inbox gets shutdown_approved. You stay shutting_down (no new task can be\n"
        "claimed) until you confirm or exit.\nExample: team shutdown approve");
}

void add_reject(CLI::App& parent) {
    auto* cmd =
        add_operation(parent, ops::reject_shutdown_op, [](Context& ctx, const ops::Result& r) {
            std::string human =
                "rejected shutdown request " + field(r.doc, "requestId") + "; you are active again";
            if (r.doc["forceAt"].is_string()) {
                human += " (its deadline still holds: force-killed at " + field(r.doc, "forceAt") +
                         " unless you confirm before)";
            }
            ctx.out().line(human);
        });
    cmd->footer(
        "The leader's inbox gets shutdown_rejected with your reason, and you are active again.\n"
        "An approval cannot be taken back. A --force-after deadline the leader set still holds.\n"
        "Example: team shutdown reject --reason 'in the middle of task 4, done in 2 min'");
}

void add_confirm(CLI::App& parent) {
    auto* cmd =
        add_operation(parent, ops::confirm_shutdown_op, [](Context& ctx, const ops::Result& r) {
            std::string agent = field(r.doc, "agentId");
            ctx.out().line(r.doc["closedAt"].is_string()
                               ? agent + " has ended (" + field(r.doc, "phase") + ")"
                               : "confirmed shutdown request " + field(r.doc, "requestId") + "; " +
                                     agent + " is ending");
        });
    cmd->footer(
        "Run from your own pane, it returns at once and your pane's supervisor completes the\n"
        "shutdown (your processes get SIGTERM, SIGKILL after the request's grace; your tasks are\n"
        "handed back; the leader's inbox gets shutdown_confirmed; the pane closes). Confirming\n"
        "without approving first is allowed. Exiting after an approval confirms too.\n"
        "Example: team shutdown confirm");
}

void add_status(CLI::App& parent) {
    auto* cmd =
        add_operation(parent, ops::shutdown_status_op, [](Context& ctx, const ops::Result& r) {
            nlohmann::json rows = r.doc.is_array() ? r.doc : nlohmann::json::array({r.doc});
            if (rows.empty()) {
                ctx.out().line("no open shutdown requests in team " + ctx.team().name);
                return;
            }
            Table table({"REQUEST", "AGENT", "METHOD", "PHASE", "REQUESTED", "DEADLINE", "REASON"});
            EpochMs now = ctx.clock().now();
            for (const auto& q : rows) {
                std::string phase = field(q, "phase");
                std::string reason = q["rejectReason"].is_string()
                                         ? "rejected: " + field(q, "rejectReason")
                                         : field(q, "reason");
                bool ended = q["closedAt"].is_string() &&
                             parse_state<ShutdownPhase>(phase) != ShutdownPhase::rejected;
                table.add({field(q, "requestId"), field(q, "agentId"), field(q, "method"),
                           ended ? phase + " (ended)" : phase,
                           relative_time(parse_iso8601(field(q, "requestedAt")), now),
                           q["forceAt"].is_string()
                               ? relative_time(parse_iso8601(field(q, "forceAt")), now)
                               : "-",
                           cell(reason)});
            }
            table.print(ctx.out());
        });
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
