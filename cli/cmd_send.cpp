// team send TO TEXT [--type TYPE] [--data JSON] [--notify]   |   team send --all TEXT ...
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/input.hpp"
#include "cli/op_command.hpp"
#include "ops/table.hpp"

namespace team::cli {

void add_send_command(CLI::App& app) {
    auto* cmd = add_operation(
        app, ops::send_message_op,
        [](Context& ctx, const ops::Result& r) {
            std::string team = r.view["team"];
            for (const auto& doc : r.view["messages"]) {
                std::string line = "sent message " + doc["id"].dump() + " to " +
                                   doc["to"].get<std::string>() + "@" + team;
                if (doc.contains("notified")) {
                    line += doc["notified"] == true
                                ? " (notified in its pane)"
                                : " (not notified: " + doc["notifyError"].get<std::string>() + ")";
                }
                ctx.out().line(line);
            }
        },
        {},
        [](const Context&, nlohmann::json& values) {
            // `team send --all TEXT`: the one word given is the text ('-': stdin).
            if (values.value("all", false) && values.contains("to") && !values.contains("text")) {
                values["text"] = text_argument(values["to"].get<std::string>());
                values.erase("to");
            }
        });
    cmd->footer(
        "The recipient must be a live member of the team: an unknown one (exit 3) or a\n"
        "terminated one (exit 4) is refused and nothing is stored.\n"
        "Examples:\n"
        "  team send worker-1 'please rebase on main'\n"
        "  team send leader 'done with #3' --type status --data '{\"task\": \"3\"}'\n"
        "  git diff | team send worker-2 -\n"
        "  team send --all 'stand-up in 5 minutes' --notify");
}

}  // namespace team::cli
