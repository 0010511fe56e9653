// The one table and its three faces (SPEC 11): every operation is reachable from each face that
// it declares, and declares each face it has not (why it has no MCP tool or no HTTP route), so a
// verb added to the table cannot go missing from a face unnoticed. The command line is the one
// cli/ builds (every command declared, as `team --help` does), walked word by word.
#include <CLI/CLI.hpp>
#include <catch2/catch.hpp>
#include <regex>
#include <set>
#include <string>

#include "base/duration.hpp"
#include "cli/app.hpp"
#include "http/router.hpp"
#include "mcp/tools.hpp"
#include "ops/operation.hpp"
#include "state/db.hpp"
#include "state/store.hpp"
#include "team/shutdown.hpp"
#include "tests/support/unit_home.hpp"

using namespace team;

namespace {

// The subcommand of `parent` named `word`, or null.
const CLI::App* subcommand(const CLI::App& parent, const std::string& word) {
    for (const auto* sub : parent.get_subcommands([](const CLI::App*) { return true; })) {
        if (sub->get_name() == word) return sub;
    }
    return nullptr;
}

// The command of `op`'s words under `app`, or null.
const CLI::App* command_of(const CLI::App& app, const ops::Operation& op) {
    const CLI::App* at = &app;
    std::string words(op.command);
    for (std::size_t i = 0; at && i < words.size();) {
        auto end = words.find(' ', i);
        if (end == std::string::npos) end = words.size();
        at = subcommand(*at, words.substr(i, end - i));
        i = end + 1;
    }
    return at;
}

// How often `part` occurs in `text`.
std::size_t count_of(const std::string& text, const std::string& part) {
    std::size_t n = 0;
    for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
    return n;
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
        const CLI::App* at = command_of(app, *op);
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

TEST_CASE("a default is stated once, in the table, and every face shows that one", "[faces]") {
    CLI::App app;
    cli::add_all_commands(app);
    int defaults = 0;
    for (const ops::Operation* op : ops::operations()) {
        for (const auto& p : op->params) {
            if (p.default_text.empty()) continue;
            INFO(op->name << " " << p.name);
            ++defaults;
            std::string stated = "(default " + std::string(p.default_text) + ")";
            // The help's own words state no default: the faces add the table's.
            CHECK(std::string(p.help).find("default") == std::string::npos);
            CHECK(ops::help_of(p) == std::string(p.help) + " " + stated);
            if (const CLI::App* cmd = op->command.empty() ? nullptr : command_of(app, *op)) {
                std::string flag = std::string(p.name);
                std::replace(flag.begin(), flag.end(), '_', '-');
                const CLI::Option* option = cmd->get_option_no_throw("--" + flag);
                REQUIRE(option != nullptr);
                CHECK(count_of(option->get_description(), stated) == 1);
            }
            if (const mcp::Tool* tool = op->tool.empty() ? nullptr : mcp::find_tool(op->tool)) {
                // Under the tool's name for it, in the unit it takes (graceMs: milliseconds).
                std::string in_ms =
                    p.type != ops::Type::duration
                        ? stated
                        : "(default " +
                              std::to_string(parse_duration(p.default_text, p.name).count()) + ")";
                int shown = 0;
                for (const auto& [key, property] : tool->input_schema["properties"].items()) {
                    auto text = property.value("description", "");
                    if (count_of(text, stated) + count_of(text, in_ms) == 0) continue;
                    CHECK(count_of(text, "(default") == 1);
                    ++shown;
                }
                CHECK(shown >= 1);
            }
        }
    }
    CHECK(defaults >= 15);
    // Where the core keeps a default of its own for its in-process callers, it is the table's.
    auto default_of = [](std::string_view op, std::string_view param) {
        for (const auto& p : ops::find_operation(op)->params) {
            if (p.name == param) return parse_duration(p.default_text, p.name);
        }
        FAIL("no parameter " << param << " of " << op);
        return Millis(0);
    };
    CHECK(KillOptions{}.grace == default_of("kill_agent", "grace"));
    CHECK(TeardownOptions{}.grace == default_of("teardown", "grace"));
    // A tool's millisecond field shows the table's default in milliseconds.
    const mcp::Tool* kill = mcp::find_tool("kill_agent");
    REQUIRE(kill != nullptr);
    CHECK_THAT(kill->input_schema["properties"]["graceMs"].value("description", ""),
               Catch::Contains("(default 5000)"));
}

TEST_CASE("an error about one value names its parameter, whatever the face calls it", "[faces]") {
    const ops::Operation& kill = *ops::find_operation("kill_agent");
    auto param_of = [&](const nlohmann::json& values, ops::Naming naming) {
        try {
            ops::Args args(kill, values, naming);
        } catch (const Error& e) {
            return e.param();
        }
        return std::string("(no error)");
    };
    for (auto naming : {ops::Naming::json, ops::Naming::cli}) {
        CHECK(param_of({{"name", "w"}, {"grace", "soon"}}, naming) == "grace");
        CHECK(param_of({{"name", "w"}, {"force_after", "-1s"}}, naming) == "force_after");
        CHECK(param_of({{"name", "w"}, {"force", "yes"}}, naming) == "force");
        CHECK(param_of(nlohmann::json::object(), naming) == "name");
    }
}

TEST_CASE("the one agent is its row of the list, with all the row carries", "[faces]") {
    test::OpsHome home;
    REQUIRE(home.run("create_team", {{"name", "web"}, {"cwd", home.dir.path().string()}}).ok());
    {
        // Agents as a spawn leaves them (nothing of them runs): one at work, one gone.
        Store store(home.home);
        Statement team(store.db(), "SELECT id FROM teams WHERE name = 'web'");
        REQUIRE(team.executeStep());
        auto id = team.getColumn(0).getInt64();
        store.write([&] {
            test::insert_member(store.db(), id, "worker", "active", test::kStart);
            test::insert_member(store.db(), id, "gone", "terminated", test::kStart);
        });
    }
    auto list = home.run("list_agents", {{"all", true}});
    REQUIRE(list.ok());
    REQUIRE(list.doc.size() == 2);
    for (const auto& row : list.doc) {
        INFO(row.dump());
        auto one = home.run("show_agent", {{"name", row["name"]}});
        REQUIRE(one.ok());
        CHECK(one.doc == row);
    }
}
