// team mcp: the MCP server on stdio (SPEC 12). The protocol and the tools are mcp/'s; this file
// only hands it the caller, fixed at start as SPEC 1.5 says (--as, else TEAM_AGENT_ID inherited
// from an agent's pane, else the leader), and the team (--team, else TEAM_NAME).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "mcp/server.hpp"

namespace team::cli {

void add_mcp_command(CLI::App& app) {
    add_command(app, "mcp",
                "serve every operation as an MCP tool over stdio (JSON-RPC, one message per "
                "line), as the caller (--as, TEAM_AGENT_ID) or the leader",
                [](Context& ctx) {
                    // A client that went away must not kill us mid-write: the write fails.
                    std::signal(SIGPIPE, SIG_IGN);
                    mcp::ServerOptions options;
                    options.identity = ctx.identity();
                    mcp::Server::serve(STDIN_FILENO, STDOUT_FILENO, std::move(options));
                    // Calls still running were cancelled and nothing more is written; their
                    // threads are not waited for (SPEC 12: the server ends within 100 ms).
                    std::fflush(stderr);
                    std::_Exit(0);
                    return 0;
                });
}

}  // namespace team::cli
