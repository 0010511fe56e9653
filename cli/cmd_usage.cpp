// team usage [NAME...] [--since DUR] [--all]
#include <CLI/CLI.hpp>

#include "base/amounts.hpp"
#include "cli/commands.hpp"
#include "cli/op_command.hpp"
#include "cli/usage_cells.hpp"
#include "ops/table.hpp"

namespace team::cli {

void add_usage_command(CLI::App& app) {
    auto* cmd = add_operation(app, ops::usage_op, [](Context& ctx, const ops::Result& r) {
        const auto& out = ctx.out();
        const auto& d = r.doc;
        Table table({"NAME", "STATUS", "MODEL", "INPUT", "OUTPUT", "CACHE R/W", "COST", "TURNS",
                     "CPU", "MEMORY", "WALL", "LIMITS"});
        for (const auto& a : d["agents"]) {
            const auto& t = a["tokens"];
            std::string cost = cost_cell(a);
            if (a["costSource"] == "agent") cost += out.dim(" (its own)");
            std::string limits = limits_cell(a);
            if (a["stoppedBy"].is_string()) {
                limits = out.red("stopped: " + a["stoppedBy"].get<std::string>());
            } else if (!a["warned"].empty()) {
                limits = out.yellow(limits + " (80 %)");
            }
            table.add({a["agent"], a["status"],
                       a["model"].is_string() ? cell(a["model"].get<std::string>(), 28) : "-",
                       tokens_cell(t["input"]), tokens_cell(t["output"]),
                       tokens_cell(t["cacheRead"]) + "/" + tokens_cell(t["cacheWrite"]), cost,
                       a["turns"].dump(), time_cell(a["cpuMs"].get<long long>()), memory_cell(a),
                       time_cell(a["wallMs"].get<long long>()), limits});
        }
        if (table.empty()) {
            out.line("no agents");
        } else {
            table.print(out);
        }
        const auto& total = d["total"];
        std::string line = "team " + d["team"].get<std::string>() + ": " +
                           tokens_cell(total["tokens"]["total"]) + " tokens, " +
                           format_usd(total["cost"].get<double>());
        if (total["costUnknownAgents"].get<int>() > 0) {
            line += " (+ " + total["costUnknownAgents"].dump() + " agent(s) of unknown cost)";
        }
        const auto& limits = d["limits"];
        if (limits["maxCost"].is_number()) {
            line += " of its max-cost " + format_usd(limits["maxCost"].get<double>());
        }
        line += "; " + limits["liveAgents"].dump() + " live agent(s)";
        if (limits["maxAgents"].is_number())
            line += " of its max-agents " + limits["maxAgents"].dump();
        if (d["since"].is_string()) line += "; since " + d["since"].get<std::string>();
        out.line(line);
        out.line(out.dim("prices taken " + d["prices"]["taken"].get<std::string>() +
                         " (team config set prices FILE to change them)"));
    });
    cmd->footer(
        "Tokens come from each agent's own record of its model calls (found through its hooks:\n"
        "Claude Code's transcript, Codex's rollout, Gemini CLI's chat file); the cost is the\n"
        "agent's own figure where it gives one (Claude Code), else its tokens at the price\n"
        "table's prices; a model without a price has an unknown cost, never a guess.\n"
        "Examples:\n"
        "  team usage\n"
        "  team usage w1 --since 1h --json");
}

}  // namespace team::cli
