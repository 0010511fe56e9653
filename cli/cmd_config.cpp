// team config [--team T]; team config get | set | unset KEY [VALUE] [--team T]
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/op_command.hpp"
#include "ops/table.hpp"

namespace team::cli {

namespace {

std::string value_text(const nlohmann::json& e) {
    return e["value"].is_string() ? e["value"].get<std::string>() : "-";
}

void print_entry(Context& ctx, const nlohmann::json& e) {
    ctx.out().line(e["key"].get<std::string>() + " = " + cell(value_text(e), 200) + "  (" +
                   e["from"].get<std::string>() + ")");
}

}  // namespace

void add_config_command(CLI::App& app) {
    auto* cmd = add_operation(app, ops::config_list_op, [](Context& ctx, const ops::Result& r) {
        Table table({"KEY", "VALUE", "FROM", "SET BY"});
        for (const auto& e : r.doc) {
            table.add({e["key"].get<std::string>(), cell(value_text(e), 60),
                       e["from"].get<std::string>(),
                       e["setBy"].is_string() ? e["setBy"].get<std::string>() : "-"});
        }
        table.print(ctx.out());
    });
    add_operation(*cmd, ops::config_get_op,
                  [](Context& ctx, const ops::Result& r) { print_entry(ctx, r.doc); });
    auto* set = add_operation(*cmd, ops::config_set_op,
                              [](Context& ctx, const ops::Result& r) { print_entry(ctx, r.doc); });
    set->footer(
        "Examples:\n"
        "  team config set notify 'jq -r .agent | xargs notify-send team'\n"
        "  team config set idle-after 10s --team web");
    add_operation(*cmd, ops::config_unset_op, [](Context& ctx, const ops::Result& r) {
        if (r.doc["removed"] != true) ctx.out().line("it was not set");
        print_entry(ctx, r.doc);
    });
    cmd->footer(
        "A team's value (--team) wins over the home's, which wins over the default.\n"
        "The keys:\n"
        "  notify      the home's: a command (run through sh) that gets each event\n"
        "              (needs_input, idle, ended) as one JSON document on stdin\n"
        "  notify-timeout  the home's: how long notify may run before it is killed (10s)\n"
        "  idle-after  how long a pane agent's screen stays still before it is idle (5s)\n"
        "Examples:\n"
        "  team config\n"
        "  team config get idle-after --team web");
}

}  // namespace team::cli
