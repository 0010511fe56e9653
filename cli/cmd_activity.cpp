// team activity [--type TYPE] [--since ID] [--limit N] [--all] [--follow]
#include <CLI/CLI.hpp>

#include "base/time.hpp"
#include "cli/commands.hpp"
#include "cli/op_command.hpp"
#include "ops/table.hpp"

namespace team::cli {

namespace {

std::vector<std::string> row(const nlohmann::json& e, const std::string& team, EpochMs now) {
    return {e["id"].dump(),
            relative_time(parse_iso8601(e["at"].get<std::string>()), now),
            team,
            e["actor"].get<std::string>(),
            e["type"].get<std::string>(),
            cell(e["details"].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), 80)};
}

void print_table(Context& ctx, const ops::Result& r) {
    Table table({"ID", "AT", "TEAM", "ACTOR", "TYPE", "DETAILS"});
    for (std::size_t i = 0; i < r.doc.size(); ++i) {
        table.add(row(r.doc[i], r.view["teams"][i].get<std::string>(), ctx.clock().now()));
    }
    if (table.empty()) {
        ctx.out().line("no activity");
    } else {
        table.print(ctx.out());
    }
}

// --follow: JSON Lines (or lines) as entries arrive.
void print_entry(Context& ctx, const nlohmann::json& event) {
    const auto& out = ctx.out();
    const auto& e = event["entry"];
    if (out.json()) {
        out.print_json(e);
        return;
    }
    auto r = row(e, event["team"].get<std::string>(), ctx.clock().now());
    out.line(r[0] + "  " + e["at"].get<std::string>() + "  " + r[2] + "  " + r[3] + "  " +
             out.bold(r[4]) + "  " + r[5]);
}

}  // namespace

void add_activity_command(CLI::App& app) {
    auto* cmd = add_operation(
        app, ops::list_activity_op,
        [](Context& ctx, const ops::Result& r) {
            if (r.doc.is_array()) print_table(ctx, r);
        },
        print_entry);
    cmd->footer("Example: team activity --type team_created --json");
}

}  // namespace team::cli
