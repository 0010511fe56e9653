// team create NAME [--description TEXT] [--cwd DIR] [--leader NAME]
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>

#include "base/error.hpp"
#include "base/names.hpp"
#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "cli/input.hpp"

namespace team::cli {

void add_create_command(CLI::App& app) {
    auto request = std::make_shared<Teams::CreateRequest>();
    auto* cmd = add_command(app, "create", "make a team; the caller becomes its leader",
                            [request](Context& ctx) {
                                request->description = text_argument(request->description);
                                // The caller becomes the leader: --leader, else the name the
                                // caller goes by (--as / TEAM_AGENT_ID), else "leader".
                                if (request->leader.empty()) {
                                    auto as = ctx.options().as.value_or("leader");
                                    request->leader = as.substr(0, as.find('@'));
                                }
                                if (request->cwd.empty()) {
                                    request->cwd = std::filesystem::current_path().string();
                                }
                                TeamRecord t = ctx.teams().create(*request);
                                nlohmann::json doc = {{"name", t.name},
                                                      {"leader", t.leader_id()},
                                                      {"createdAt", iso8601(t.created_at)},
                                                      {"cwd", t.cwd},
                                                      {"description", t.description}};
                                if (ctx.out().json()) {
                                    ctx.out().print_json(doc);
                                } else {
                                    ctx.out().line("created team " + quote(t.name) + " (leader " +
                                                   t.leader_id() + ", cwd " + t.cwd + ")");
                                }
                                return 0;
                            });
    cmd->add_option("NAME", request->name,
                    "the team's name: letters, digits, '_' and '-', at most 64")
        ->required();
    cmd->add_option("--description", request->description,
                    "what the team is for ('-': read it from stdin)")
        ->type_name("TEXT");
    cmd->add_option("--cwd", request->cwd,
                    "the team's working directory, where agents start (default: the current "
                    "directory)")
        ->type_name("DIR");
    cmd->add_option("--leader", request->leader,
                    "the leader's member name (default: the caller's name from --as or "
                    "TEAM_AGENT_ID, else leader)")
        ->type_name("NAME");
    cmd->footer("Example: team create web --description 'the web app' --cwd ~/src/web");
}

}  // namespace team::cli
