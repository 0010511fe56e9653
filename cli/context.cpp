#include "cli/context.hpp"

#include <CLI/CLI.hpp>

namespace team::cli {

namespace {
// The action of the subcommand that was selected on the command line.
Action g_selected;
}  // namespace

Action& selected_action() {
    return g_selected;
}

CLI::App* add_command(CLI::App& parent, const std::string& name, const std::string& description,
                      Action action) {
    CLI::App* sub = parent.add_subcommand(name, description);
    // A command may also have subcommands (inbox ack): CLI11 runs a parent's callback after its
    // subcommand's, so the parent's action is chosen only when no subcommand was given.
    sub->callback([sub, action = std::move(action)] {
        if (sub->get_subcommands().empty()) g_selected = action;
    });
    return sub;
}

}  // namespace team::cli
