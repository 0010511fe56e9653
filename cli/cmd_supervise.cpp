// team __supervise --home DIR --ready-fd N ID: the detached supervisor of one background shell.
// Hidden: started by `team shell start`, never by a person.
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "proc/shells.hpp"
#include "state/home.hpp"

namespace team::cli {

void add_supervise_command(CLI::App& app) {
    struct Options {
        std::string id;
        int ready_fd = -1;
    };
    auto o = std::make_shared<Options>();
    auto* cmd = add_command(app, "__supervise", "", [o](Context& ctx) {
        return proc::Shells::supervise(ctx.store(), o->id, o->ready_fd);
    });
    cmd->group("");  // hidden from help
    cmd->add_option("--ready-fd", o->ready_fd);
    cmd->add_option("ID", o->id)->required();
}

}  // namespace team::cli
