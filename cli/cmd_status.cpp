// team status [NAME]
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/op_command.hpp"
#include "ops/table.hpp"

namespace team::cli {

namespace {

void print_human(const Context& ctx, const nlohmann::json& t) {
    const auto& out = ctx.out();
    auto now = ctx.clock().now();
    std::string description = t["description"];
    out.line(out.bold("team") + "       " + t["name"].get<std::string>() + "  (" +
             t["status"].get<std::string>() + ")");
    if (!description.empty()) out.line(out.bold("about") + "      " + cell(description, 200));
    out.line(out.bold("leader") + "     " + t["leader"].get<std::string>());
    out.line(out.bold("cwd") + "        " + t["cwd"].get<std::string>());
    out.line(out.bold("created") + "    " + relative_time(parse_iso8601(t["createdAt"]), now));
    out.line(out.bold("agents") + "     " + t["liveAgents"].dump() + " live, " +
             t["totalAgents"].dump() + " in all");
    auto count = [&](const char* status) {
        return t["tasks"].contains(status) ? t["tasks"][status].dump() : std::string("0");
    };
    out.line(out.bold("tasks") + "      " + count("pending") + " pending, " + count("in_progress") +
             " in progress, " + count("completed") + " completed");
    if (!t["shutdownRequests"].empty()) {
        std::string open;
        for (const auto& r : t["shutdownRequests"]) {
            open += (open.empty() ? "" : ", ") + r["agentId"].get<std::string>() + " " +
                    r["phase"].get<std::string>() + " (request " +
                    r["requestId"].get<std::string>() + ")";
        }
        out.line(out.bold("shutdowns") + "  " + open);
    }
    if (!t["agents"].empty()) {
        out.line("");
        Table table({"NAME", "STATUS", "ROLE", "PANE", "PID", "AGE"});
        for (const auto& a : t["agents"]) {
            table.add({a["name"], a["status"], cell(a["role"], 20),
                       a["paneId"].is_string() ? a["paneId"].get<std::string>() : "-",
                       a["pid"].is_number() ? a["pid"].dump() : "-",
                       relative_time(parse_iso8601(a["createdAt"]), now)});
        }
        table.print(out);
    }
    out.line(out.bold("tmux") + "       " + t["tmux"]["socket"].get<std::string>() +
             (t["tmux"]["running"] == true ? " (running)" : " (not running)"));
}

}  // namespace

void add_status_command(CLI::App& app) {
    auto* cmd = add_operation(app, ops::team_status_op,
                              [](Context& ctx, const ops::Result& r) { print_human(ctx, r.doc); });
    cmd->footer("Example: team status web --json");
}

}  // namespace team::cli
