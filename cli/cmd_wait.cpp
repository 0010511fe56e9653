// team wait NAME... --until working|waiting|idle|ended [--any] [--timeout DUR]
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/op_command.hpp"
#include "ops/table.hpp"

namespace team::cli {

void add_wait_command(CLI::App& app) {
    auto* cmd = add_operation(app, ops::wait_agents_op, [](Context& ctx, const ops::Result& r) {
        for (const auto& a : r.doc["agents"]) {
            std::string state =
                a["activity"].is_object() ? a["activity"].value("state", "-") : std::string("-");
            ctx.out().line(a["name"].get<std::string>() + ": " + state);
        }
        if (r.doc["success"] == false)
            std::cerr << "team: error: " << r.doc["error"].get<std::string>() << "\n";
    });
    cmd->footer(
        "Wakes at the commit of the report that makes it true. An agent that has ended will\n"
        "never be working, waiting or idle again: waiting for that fails at once (exit 4).\n"
        "Examples:\n"
        "  team wait w1 w2 --until idle --timeout 10m\n"
        "  team wait w1 w2 w3 --until waiting --any      (the first that needs a person)");
}

}  // namespace team::cli
