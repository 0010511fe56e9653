// The operations of shells, sessions and run (ops/shell_ops.cpp, ops/session_ops.cpp) through
// the machinery that runs them, in-process on a temporary home: empty homes, values checked
// before anything runs, the error shapes, and run's streaming through progress events.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "ops/core.hpp"
#include "ops/operation.hpp"
#include "tests/support/unit_home.hpp"

using namespace team;
using namespace team::ops;
using Json = nlohmann::json;

using Home = team::test::OpsHome;

TEST_CASE("shell and session lists of a home without a store are empty and make no home",
          "[ops][shells]") {
    Home h;
    auto shells = h.run("list_shells", Json::object());
    CHECK(shells.ok());
    CHECK(shells.doc == Json::array());
    CHECK(shells.view["home"] == false);
    auto sessions = h.run("list_sessions", Json::object());
    CHECK(sessions.doc == Json::array());
    CHECK_FALSE(std::filesystem::exists(h.home));
}

TEST_CASE("an unknown shell is not found, in the plain error shape", "[ops][shells]") {
    Home h;
    for (const char* op : {"shell_status", "shell_output", "wait_shell"}) {
        INFO(op);
        auto r = h.run(op, {{"id", "bg-ffffff"}});
        CHECK(r.exit_code == 3);
        CHECK(r.doc["success"] == false);
        CHECK(r.doc["error"] == "Shell not found: bg-ffffff");
    }
}

TEST_CASE("shell and session values are checked before anything runs", "[ops][shells]") {
    Home h;
    auto bad_limit = h.run("shell_output", {{"id", "bg-1"}, {"limit", 0}});
    CHECK(bad_limit.exit_code == 2);
    auto bad_timeout = h.run("run", {{"command", {"true"}}, {"timeout", "soon"}});
    CHECK(bad_timeout.exit_code == 2);
    CHECK_THAT(bad_timeout.doc["error"].get<std::string>(), Catch::Contains("timeout"));
    auto bad_name = h.run("exec_in_session", {{"name", "bad name"}, {"command", {"true"}}});
    CHECK(bad_name.exit_code == 2);
    auto no_command = h.run("exec_in_session", {{"name", "s"}, {"command", Json::array()}});
    CHECK(no_command.exit_code == 2);
    CHECK_THAT(no_command.doc["error"].get<std::string>(), Catch::Contains("no command given"));
}

TEST_CASE("run streams its output as progress and returns the command's exit code",
          "[ops][shells]") {
    Home h;
    std::string streamed;
    auto r =
        h.run("run", {{"command", {"sh", "-c", "printf hi; exit 3"}}}, std::nullopt, Naming::json,
              [&](const Json& event) { streamed += event["output"].get<std::string>(); });
    CHECK(streamed == "hi");
    CHECK(r.exit_code == 3);
    CHECK(r.doc["output"] == "hi");
    CHECK(r.doc["timedOut"] == false);
    CHECK(r.doc["exitStatus"] == Json{{"exitCode", 3}, {"signal", nullptr}});
    CHECK_FALSE(std::filesystem::exists(h.home));  // run needs no home
}

TEST_CASE("executions of a home without a store: none, and unknown ids are not found",
          "[ops][executions]") {
    Home h;
    auto listed = h.run("list_executions", Json::object());
    CHECK(listed.ok());
    CHECK(listed.doc == Json({{"executions", Json::array()}}));
    for (const char* op : {"execution_status", "terminate_execution"}) {
        INFO(op);
        auto r = h.run(op, {{"id", "bg-ffffff"}});
        CHECK(r.exit_code == 3);
        CHECK(r.doc["code"] == "not_found");
        CHECK(r.doc["error"] == "Shell not found: bg-ffffff");
    }
    CHECK_FALSE(std::filesystem::exists(h.home));
    auto missing = h.run("terminate_execution", Json::object());
    CHECK(missing.exit_code == 2);
}

TEST_CASE("the executions are in the table by the names the HTTP face routes to", "[ops]") {
    CHECK(find_operation("list_executions") != nullptr);
    CHECK(find_operation("execution_status") != nullptr);
    const Operation* terminate = find_operation("terminate_execution");
    REQUIRE(terminate != nullptr);
    CHECK(terminate->command == "shell terminate");
    CHECK(find_command("shell terminate") == terminate);
    CHECK(find_command("") == nullptr);  // the two without a command line verb
}
