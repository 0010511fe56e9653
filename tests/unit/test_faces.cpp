// The one table and its three faces (SPEC 11): every operation is reachable from each face that
// it declares, and declares each face it has not (why it has no MCP tool or no HTTP route), so a
// verb added to the table cannot go missing from a face unnoticed. The command line is the one
// cli/ builds (every command declared, as `team --help` does), walked word by word.
#include <CLI/CLI.hpp>
#include <catch2/catch.hpp>
#include <regex>
#include <set>
#include <string>

#include "cli/app.hpp"
#include "http/router.hpp"
#include "mcp/tools.hpp"
#include "ops/operation.hpp"

using namespace team;

namespace {

// The subcommand of `parent` named `word`, or null.
const CLI::App* subcommand(const CLI::App& parent, const std::string& word) {
    for (const auto* sub : parent.get_subcommands([](const CLI::App*) { return true; })) {
        if (sub->get_name() == word) return sub;
    }
    return nullptr;
}

// A path of `pattern` with each capture filled in ({team} -> x-team).
std::string path_of(std::string_view pattern) {
    return std::regex_replace(std::string(pattern), std::regex("\\{([a-z_]+)\\}"), "x-$1");
}

}  // namespace

TEST_CASE("every operation with command words is a command of the command line", "[faces]") {
    CLI::App app;
    cli::add_all_commands(app);
    int reached = 0;
    for (const ops::Operation* op : ops::operations()) {
        if (op->command.empty()) continue;  // an operation only MCP or HTTP offers
        INFO(op->name << ": team " << op->command);
        const CLI::App* at = &app;
        std::string words(op->command);
        for (std::size_t i = 0; at && i < words.size();) {
            auto end = words.find(' ', i);
            if (end == std::string::npos) end = words.size();
            at = subcommand(*at, words.substr(i, end - i));
            i = end + 1;
        }
        CHECK(at != nullptr);
        if (at) ++reached;
    }
    CHECK(reached > 0);
}

TEST_CASE("every operation declares its MCP tool and HTTP routes, or why it has none", "[faces]") {
    std::set<std::string_view> tool_names;
    std::set<std::string> routes;
    for (const ops::Operation* op : ops::operations()) {
        INFO(op->name);
        // Exactly one of a tool and the reason it has none; the same for routes.
        CHECK(op->tool.empty() != op->no_tool.empty());
        CHECK(op->routes.empty() != op->no_route.empty());
        if (!op->tool.empty()) {
            CHECK(tool_names.insert(op->tool).second);
            const mcp::Tool* tool = mcp::find_tool(op->tool);
            REQUIRE(tool != nullptr);
            CHECK(tool->op == op);
        }
        for (const auto& r : op->routes) {
            INFO(r.method << " " << r.pattern);
            CHECK(routes.insert(std::string(r.method) + " " + std::string(r.pattern)).second);
            CHECK(r.pattern.rfind("/api/", 0) == 0);
            // The router finds this operation at its path, with its captures.
            auto found = http::find_route(r.method, path_of(r.pattern));
            REQUIRE(found.match);
            CHECK(found.match->route->op == op->name);
            for (const auto& [name, value] : found.match->captures) CHECK(value == "x-" + name);
        }
    }
    // Every tool comes from an operation, and no shape of mcp/ is left without its tool.
    CHECK(mcp::tools().size() == tool_names.size());
    CHECK(mcp::missing_tools().empty());
    // Every route but the event stream comes from an operation.
    CHECK(http::routes().size() == routes.size() + 1);
    CHECK(http::find_route("GET", "/api/events").match->route->op.empty());
}
