// team teardown [NAME] [--grace DUR] [--reason TEXT] [--purge]      (SPEC 3)
#include <unistd.h>

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
    std::optional<std::string> name, grace;
    std::string reason;
    bool purge = false;
};

std::string task_list(const std::vector<std::string>& ids) {
    std::string s;
    for (const auto& id : ids) s += (s.empty() ? "" : ",") + id;
    return s.empty() ? "-" : s;
}

int run(Context& ctx, const Options& o) {
    TeardownOptions t;
    if (o.grace) t.grace = parse_duration(*o.grace, "--grace");
    t.reason = text_argument(o.reason);
    t.purge = o.purge;
    TeamRecord team = ctx.team(o.name);
    Caller caller = ctx.caller(team);

    // Progress, on a terminal only: a line as each agent's end is known.
    bool progress = !ctx.out().json() && ::isatty(STDERR_FILENO);
    auto on_row = [&](const TeardownRow& row) {
        if (!progress) return;
        std::string line =
            "  " + row.agent_id + ": " + str(row.phase) + " (" + str(row.method) + ")\n";
        std::fwrite(line.data(), 1, line.size(), stderr);
    };
    if (progress) {
        std::string line =
            "tearing down team " + team.name + " (grace " + o.grace.value_or("30s") + ")...\n";
        std::fwrite(line.data(), 1, line.size(), stderr);
    }
    auto result = Shutdowns(ctx.store(), ctx.clock(), ctx.tmux()).teardown(team, caller, t, on_row);

    bool ok = result.survivors == 0;
    std::string error = std::to_string(result.survivors) + " process" +
                        (result.survivors == 1 ? "" : "es") + " of team " + team.name +
                        " could not be ended; the team was not dissolved";
    if (ctx.out().json()) {
        nlohmann::json agents = nlohmann::json::array();
        for (const auto& row : result.agents) agents.push_back(to_json(row));
        nlohmann::json doc = {{"success", ok},           {"team", team.name},
                              {"agents", agents},        {"dissolved", result.dissolved},
                              {"purged", result.purged}, {"survivors", result.survivors}};
        if (!ok) doc["error"] = error;
        ctx.out().print_json(doc);
        return ok ? 0 : 1;
    }
    if (!result.agents.empty()) {
        Table table({"AGENT", "METHOD", "PHASE", "EXIT", "REASSIGNED"});
        for (const auto& row : result.agents) {
            table.add({row.agent_id, str(row.method), str(row.phase), row.exit_reason.value_or("-"),
                       task_list(row.reassigned)});
        }
        table.print(ctx.out());
    }
    if (!ok) throw failed(error);
    ctx.out().line("team " + team.name + (result.purged ? " dissolved and purged" : " dissolved") +
                   "; nothing of it is left running");
    return 0;
}

}  // namespace

void add_teardown_command(CLI::App& app) {
    auto o = std::make_shared<Options>();
    auto* cmd = add_command(
        app, "teardown",
        "leader only: stop every agent (gracefully, then by force), close the session, dissolve",
        [o](Context& ctx) { return run(ctx, *o); });
    optional_value(cmd, "NAME", o->name, "the team (default: --team, or the only live team)");
    optional_value(cmd, "--grace", o->grace,
                   "how long agents get to confirm before force (default 30s)")
        ->type_name("DUR");
    cmd->add_option("--reason", o->reason, "why, for the agents and the activity log")
        ->type_name("TEXT");
    cmd->add_flag("--purge", o->purge, "also delete the team's records and pane logs");
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
