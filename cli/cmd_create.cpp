// team create NAME [--description TEXT] [--cwd DIR] [--leader NAME]
#include <CLI/CLI.hpp>

#include "base/error.hpp"
#include "cli/commands.hpp"
#include "cli/op_command.hpp"
#include "ops/table.hpp"

namespace team::cli {

void add_create_command(CLI::App& app) {
    auto* cmd = add_operation(app, ops::create_team_op, [](Context& ctx, const ops::Result& r) {
        const auto& t = r.doc;
        ctx.out().line("created team " + quote(t["name"].get<std::string>()) + " (leader " +
                       t["leader"].get<std::string>() + ", cwd " + t["cwd"].get<std::string>() +
                       ")");
    });
    cmd->footer("Example: team create web --description 'the web app' --cwd ~/src/web");
}

}  // namespace team::cli
