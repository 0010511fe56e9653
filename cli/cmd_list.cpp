// team list [--all]
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/op_command.hpp"
#include "ops/table.hpp"

namespace team::cli {

void add_list_command(CLI::App& app) {
    auto* cmd = add_operation(app, ops::list_teams_op, [](Context& ctx, const ops::Result& r) {
        const auto& out = ctx.out();
        if (r.doc.empty()) {
            out.line("no teams; create one with 'team create NAME'");
            return;
        }
        Table table({"NAME", "AGENTS", "OPEN TASKS", "STATUS", "CREATED", "DESCRIPTION"});
        auto now = ctx.clock().now();
        for (const auto& t : r.doc) {
            std::string status = t["status"];
            table.add({t["name"], t["liveAgents"].dump() + "/" + t["totalAgents"].dump(),
                       t["openTasks"].dump(),
                       parse_state<TeamState>(status) == TeamState::active ? out.green(status)
                                                                           : out.dim(status),
                       relative_time(parse_iso8601(t["createdAt"]), now), cell(t["description"])});
        }
        table.print(out);
    });
    cmd->footer("Example: team list --json");
}

}  // namespace team::cli
