// team teardown [NAME] [--grace DUR] [--reason TEXT] [--purge]      (SPEC 3)
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "base/error.hpp"
#include "cli/commands.hpp"
#include "cli/op_command.hpp"
#include "ops/table.hpp"

namespace team::cli {

namespace {

std::string task_list(const nlohmann::json& ids) {
    std::string s;
    for (const auto& id : ids) s += (s.empty() ? "" : ",") + id.get<std::string>();
    return s.empty() ? "-" : s;
}

void print_human(Context& ctx, const ops::Result& r) {
    const auto& doc = r.doc;
    if (!doc["agents"].empty()) {
        Table table({"AGENT", "METHOD", "PHASE", "EXIT", "REASSIGNED"});
        for (const auto& row : doc["agents"]) {
            table.add({row["agentId"], row["method"], row["phase"],
                       row["exitReason"].is_string() ? row["exitReason"].get<std::string>() : "-",
                       task_list(row["reassignedTasks"])});
        }
        table.print(ctx.out());
        for (const auto& row : doc["agents"]) {
            if (row.contains("worktree")) {
                ctx.out().line(row["agentId"].get<std::string>() + ": " +
                               kept_worktree_line(row["worktree"]));
            }
        }
    }
    if (doc["success"] != true) throw failed(doc["error"].get<std::string>());
    ctx.out().line("team " + doc["team"].get<std::string>() +
                   (doc["purged"] == true ? " dissolved and purged" : " dissolved") +
                   "; nothing of it is left running");
}

// Progress, on a terminal only: a line as each agent's end is known.
void print_progress(Context& ctx, const nlohmann::json& event) {
    if (ctx.out().json() || !::isatty(STDERR_FILENO)) return;
    std::string line;
    if (event["event"] == "teardown") {
        line = "tearing down team " + event["team"].get<std::string>() + " (grace " +
               event["grace"].get<std::string>() + ")...\n";
    } else {
        line = "  " + event["agentId"].get<std::string>() + ": " +
               event["phase"].get<std::string>() + " (" + event["method"].get<std::string>() +
               ")\n";
    }
    std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace

void add_teardown_command(CLI::App& app) {
    auto* cmd = add_operation(app, ops::teardown_op, print_human, print_progress);
    cmd->footer(
        "Every live agent gets a shutdown request with a deadline of --grace; those that have\n"
        "not confirmed (or exited) by then get SIGTERM, and SIGKILL 500ms later, with their\n"
        "whole process trees. Their tasks go back to the pool. Then the team's tmux session is\n"
        "killed (the server goes with the last session) and the team is dissolved. Prints one\n"
        "row per agent. Exit 0 only if no process of the team is left (otherwise 1, and the\n"
        "team stays, so the teardown can be run again). The deadline is kept by each agent's\n"
        "pane supervisor, so it holds even if this command is interrupted.\n"
        "Examples:\n"
        "  team teardown web --grace 10s\n"
        "  team teardown --reason 'sprint over' --purge --json");
}

}  // namespace team::cli
