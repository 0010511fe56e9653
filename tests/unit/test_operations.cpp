// The operations table and the machinery that runs an operation (ops/, SPEC 11), in-process over
// a real store in a temporary home: the table is well formed, values are checked against it
// before anything is looked up, the shared rules (team, caller, leader) are applied, and every
// error comes back as one result, in the operation's own shape where it has one. The command
// line over the same operations is proven end to end by tests/e2e.
#include <catch2/catch.hpp>
#include <regex>
#include <set>
#include <string>

#include "ops/core.hpp"
#include "ops/operation.hpp"
#include "tests/support/unit_home.hpp"

using namespace team;
using namespace team::ops;
using Json = nlohmann::json;

using Home = team::test::OpsHome;

TEST_CASE("the operations table is well formed", "[ops]") {
    std::set<std::string_view> names, commands;
    std::regex snake("[a-z]+(_[a-z]+)*");
    for (const Operation* op : operations()) {
        INFO(op->name);
        CHECK(std::regex_match(std::string(op->name), snake));
        CHECK(names.insert(op->name).second);
        CHECK(find_operation(op->name) == op);
        if (!op->command.empty()) {  // an operation only the MCP or HTTP face offers has none
            CHECK(commands.insert(op->command).second);
            CHECK(find_command(op->command) == op);
        }
        CHECK_FALSE(op->summary.empty());
        CHECK(op->body != nullptr);
        CHECK(op->leader_only == !op->leader_action.empty());
        if (!op->team_param.empty()) CHECK(op->scope != Scope::none);
        std::set<std::string_view> params;
        bool options_began = false;
        for (const Param& p : op->params) {
            INFO(p.name);
            CHECK(std::regex_match(std::string(p.name), snake));
            CHECK(params.insert(p.name).second);
            CHECK_FALSE(p.help.empty());
            if (p.positional) {
                CHECK_FALSE(options_began);  // arguments come before options
                CHECK_FALSE(p.placeholder.empty());
                CHECK(p.type != Type::boolean);
            } else {
                options_began = true;
            }
        }
        if (!op->team_param.empty()) CHECK(params.count(op->team_param) == 1);
    }
    CHECK(find_operation("no_such_thing") == nullptr);
}

TEST_CASE("values are checked against the table before anything is looked up", "[ops]") {
    Home home;
    // Unknown, mistyped and missing values are usage errors, named as the face names them.
    auto r = home.run("kill_agent", {{"name", "w"}, {"forse", true}});
    CHECK(r.exit_code == 2);
    CHECK(r.doc["code"] == "usage");
    CHECK(r.doc["error"].get<std::string>().find("did you mean 'force'") != std::string::npos);

    r = home.run("kill_agent", {{"name", "w"}, {"force", "yes"}});
    CHECK(r.exit_code == 2);
    CHECK(r.doc["error"] == "force must be true or false");

    r = home.run("kill_agent", Json::object());
    CHECK(r.exit_code == 2);
    CHECK(r.doc["error"] == "name is required");

    r = home.run("kill_agent", {{"name", "w"}, {"grace", "soon"}});
    CHECK(r.exit_code == 2);
    CHECK(r.doc["error"].get<std::string>().find("grace") != std::string::npos);
    r = home.run("kill_agent", {{"name", "w"}, {"grace", "soon"}}, std::nullopt, Naming::cli);
    CHECK(r.doc["error"].get<std::string>().find("--grace") != std::string::npos);
    // A refused value keeps the result's shape too (SPEC 1.4).
    CHECK(r.doc["agentId"] == "w");
    CHECK(r.doc["method"] == "graceful");
    CHECK(r.doc["reassignedTasks"] == Json::array());

    r = home.run("list_teams", Json::array({1, 2}));
    CHECK(r.exit_code == 2);
    CHECK(r.doc["code"] == "usage");

    // Hostile text is a value like any other: it reaches the core's own checks whole.
    r = home.run("create_team", {{"name", "a'; rm -rf / $(x)\n"}});
    CHECK(r.exit_code == 2);
    CHECK(r.error.has_value());
    // A bad request changes nothing.
    CHECK(home.run("list_teams", Json::object()).doc == Json::array());
}

TEST_CASE("an operation runs with the team and caller resolved once, leader checks first",
          "[ops]") {
    Home home;
    auto r = home.run("list_teams", Json::object());
    CHECK(r.ok());
    CHECK(r.doc == Json::array());  // an empty home answers as empty, and stays without a store
    CHECK_FALSE(std::filesystem::exists(home.home / "team.db"));

    r = home.run("create_team", {{"name", "web"}, {"cwd", home.dir.path().string()}}, "boss");
    REQUIRE(r.ok());
    CHECK(r.doc["leader"] == "boss@web");

    r = home.run("list_teams", Json::object());
    REQUIRE(r.doc.size() == 1);
    CHECK(r.doc[0]["name"] == "web");

    // Someone who is not the leader (here not even a member) is refused before the operation
    // looks for its target.
    r = home.run("kill_agent", {{"name", "nobody"}}, "stranger");
    CHECK(r.exit_code == 3);  // the caller is not a member: not found, as SPEC 1.5 says
    r = home.run("kill_agent", {{"name", "nobody"}});
    CHECK(r.exit_code == 3);
    CHECK(r.doc["code"] == "not_found");
    // The result keeps its shape on error (SPEC 1.4).
    CHECK(r.doc["agentId"] == "nobody");
    CHECK(r.doc["method"] == "graceful");
    CHECK(r.doc["phase"].is_null());
    CHECK(r.doc["requestId"].is_null());
    CHECK(r.doc["reassignedTasks"] == Json::array());

    r = home.run("team_status", {{"name", "web"}});
    REQUIRE(r.ok());
    CHECK(r.doc["leader"] == "boss@web");
    CHECK(r.doc["agents"] == Json::array());

    r = home.run("team_status", {{"name", "wbe"}});
    CHECK(r.exit_code == 3);
    CHECK(r.doc["error"].get<std::string>().find("did you mean 'web'") != std::string::npos);

    r = home.run("delete_team", {{"name", "web"}});
    CHECK(r.ok());
    CHECK(r.doc == Json{{"success", true}, {"name", "web"}});
    CHECK(home.run("list_teams", Json::object()).doc == Json::array());
}

TEST_CASE("a shell kill keeps its shape on every error", "[ops]") {
    Home home;
    auto r = home.run("kill_shell", {{"id", "bg-000000"}});
    CHECK(r.exit_code == 3);
    CHECK(r.doc["success"] == false);
    CHECK(r.doc["shell_id"] == "bg-000000");
    CHECK(r.doc["signal_sent"] == "none");
    CHECK(r.doc["code"] == "not_found");

    r = home.run("kill_shell", {{"id", "bg-000000"}, {"signal", "SIGFOO"}});
    CHECK(r.exit_code == 2);
    CHECK(r.doc["shell_id"] == "bg-000000");
    CHECK(r.doc["force_killed"] == false);
}

TEST_CASE("prompt's text is checked before anything is looked up", "[ops]") {
    Home home;
    // No team at all: a control character is still the usage error, not the missing team.
    auto r = home.run("prompt_agent", {{"name", "w"}, {"text", "stop\x03"}});
    CHECK(r.exit_code == 2);
    CHECK(r.doc["error"].get<std::string>().find("control character") != std::string::npos);
    r = home.run("prompt_agent", {{"name", "w"}, {"text", std::string((1u << 20) + 1, 'x')}});
    CHECK(r.exit_code == 2);
    CHECK(r.doc["error"] == "the text is longer than 1 MiB");
    // A good text goes on to the lookups: the team, then the agent.
    REQUIRE(home.run("create_team", {{"name", "web"}, {"cwd", home.dir.path().string()}}).ok());
    r = home.run("prompt_agent", {{"name", "w"}, {"text", "run the tests; then fix them"}});
    CHECK(r.exit_code == 3);
    CHECK(r.doc["code"] == "not_found");
}

TEST_CASE("activity lists, and follows as progress events up to its limit", "[ops]") {
    Home home;
    REQUIRE(home.run("create_team", {{"name", "web"}, {"cwd", home.dir.path().string()}}).ok());
    auto r = home.run("list_activity", Json::object());
    REQUIRE(r.ok());
    REQUIRE(r.doc.size() == 1);
    CHECK(r.doc[0]["type"] == "team_created");
    CHECK(r.view["teams"] == Json::array({"web"}));
    CHECK(home.run("list_activity", {{"type", "agent_spawned"}}).doc == Json::array());
    CHECK(home.run("list_activity", {{"limit", 0}}).exit_code == 2);

    // --follow: what is there, as events, and no document once the limit is met.
    auto c = home.core();
    std::vector<Json> events;
    r = invoke(*c, *find_operation("list_activity"), {{"follow", true}, {"limit", 1}}, Naming::json,
               [&](const Json& e) { events.push_back(e); });
    REQUIRE(r.ok());
    CHECK(r.doc.is_null());
    REQUIRE(events.size() == 1);
    CHECK(events[0]["entry"]["type"] == "team_created");
    CHECK(events[0]["team"] == "web");

    // --all on a home without a store answers empty, and makes none.
    Home empty;
    r = empty.run("list_activity", {{"all", true}});
    CHECK(r.ok());
    CHECK(r.doc == Json::array());
    CHECK_FALSE(std::filesystem::exists(empty.home / "team.db"));
}

TEST_CASE("logs and attach look their agent up in the team", "[ops]") {
    Home home;
    REQUIRE(home.run("create_team", {{"name", "web"}, {"cwd", home.dir.path().string()}}).ok());
    auto r = home.run("agent_logs", {{"name", "ghost"}});
    CHECK(r.exit_code == 3);
    r = home.run("agent_logs", {{"name", "ghost"}, {"lines", 0}});
    CHECK(r.exit_code == 2);  // a value is checked before the lookup
    r = home.run("attach", Json::object());
    CHECK(r.exit_code == 4);
    CHECK(r.doc["error"] == "team 'web' has no live agent to attach to");
}
