// team kill-agent NAME [--force] [--reason TEXT] [--wait] [--timeout DUR] [--force-after DUR]
//                      [--grace DUR] [--reassign-to NAME]
#include <CLI/CLI.hpp>

#include "base/error.hpp"
#include "base/states.hpp"
#include "cli/commands.hpp"
#include "cli/op_command.hpp"
#include "ops/table.hpp"

namespace team::cli {

namespace {

std::string task_list(const nlohmann::json& ids) {
    std::string s;
    for (const auto& id : ids) s += (s.empty() ? "" : ", ") + id.get<std::string>();
    return s;
}

void print_human(const Context& ctx, const ops::Result& result) {
    const auto& r = result.doc;
    if (r["success"] != true) {
        ErrorCode code = result.exit_code == 124 ? ErrorCode::timeout
                         : result.exit_code == 4 ? ErrorCode::refused
                         : result.exit_code == exit_code(ErrorCode::unconfirmed)
                             ? ErrorCode::unconfirmed
                             : ErrorCode::failed;
        throw Error(code, r.value("error", std::string("the kill failed")));
    }
    std::string agent = r["agentId"], request = r["requestId"];
    auto phase = parse_state<ShutdownPhase>(r["phase"].get<std::string>());
    std::string tasks = r["reassignedTasks"].empty()
                            ? ""
                            : "; tasks handed back: " + task_list(r["reassignedTasks"]);
    if (phase == ShutdownPhase::requested && !r.contains("exitReason")) {
        ctx.out().line("asked " + agent + " to shut down (request " + request +
                       "); its answer reaches your inbox. Follow it with: team shutdown status " +
                       agent.substr(0, agent.find('@')));
    } else if (phase == ShutdownPhase::confirmed) {
        ctx.out().line(agent + " confirmed the shutdown and has ended" + tasks);
    } else if (phase == ShutdownPhase::force_killed) {
        ctx.out().line("force-killed " + agent + tasks);
    } else {
        ctx.out().line(agent + " has ended (" + r.value("exitReason", std::string("exited")) +
                       ") before answering request " + request + tasks);
    }
    if (r.contains("worktree")) ctx.out().line(kept_worktree_line(r["worktree"]));
}

}  // namespace

void add_kill_command(CLI::App& app) {
    auto* cmd = add_operation(app, ops::kill_agent_op, print_human);
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
