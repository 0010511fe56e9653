// team agents [--all]
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/op_command.hpp"
#include "ops/table.hpp"

namespace team::cli {

void add_agents_command(CLI::App& app) {
    auto* cmd = add_operation(app, ops::list_agents_op, [](Context& ctx, const ops::Result& r) {
        const auto& out = ctx.out();
        if (r.doc.empty()) {
            bool all = r.view.value("all", false);
            out.line(all ? "no agents" : "no live agents (--all shows terminated ones)");
            return;
        }
        auto now = ctx.clock().now();
        const auto& open = r.view["openTasks"];
        Table table({"NAME", "STATUS", "PANE", "PID", "COLOR", "TASKS", "AGE", "EXIT"});
        for (const auto& a : r.doc) {
            std::string name = a["name"], status = a["status"];
            bool live = parse_state<AgentStatus>(status) != AgentStatus::terminated;
            std::string exit;
            if (a["exitReason"].is_string()) {
                exit = a["exitReason"];
                if (a["exitCode"].is_number()) exit += " (" + a["exitCode"].dump() + ")";
                if (a["signal"].is_string()) exit += " (" + a["signal"].get<std::string>() + ")";
            }
            table.add({name, live ? out.green(status) : out.dim(status),
                       a["paneId"].is_string() ? a["paneId"].get<std::string>() : "-",
                       a["pid"].is_number() ? a["pid"].dump() : "-",
                       a["color"].is_string() ? a["color"].get<std::string>() : "-",
                       live && open.contains(name) ? open[name].dump() : "-",
                       relative_time(parse_iso8601(a["createdAt"]), now), exit});
        }
        table.print(out);
    });
    cmd->footer(
        "Every agent is first checked against its process and tmux: one whose process has ended\n"
        "is shown terminated, with how it ended.\nExample: team agents --json");
}

}  // namespace team::cli
