// team activity (SPEC 10).
#include <SQLiteCpp/SQLiteCpp.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <sstream>

#include "state/activity.hpp"
#include "state/store.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/probe.hpp"
#include "tests/support/process.hpp"

using team::test::TeamEnv;

namespace {

// Activity of other kinds arrives with later commands; until then the tests write rows through
// the store, as those commands will.
void add_activity(const TeamEnv& env, const std::string& type) {
    team::Store store(env.home());
    store.write([&] { team::append_activity(store.db(), 1, 0, "leader@web", type, {{"n", 1}}); });
}

}  // namespace

TEST_CASE("create writes team_created to the activity log", "[activity][sanitize]") {
    TeamEnv env;
    REQUIRE(env.run({"create", "web", "--description", "d"}).exit_code == 0);
    auto r = env.run({"activity", "--json"});
    REQUIRE(r.exit_code == 0);
    auto doc = r.json();
    REQUIRE(doc.size() == 1);
    CHECK(doc[0]["type"] == "team_created");
    CHECK(doc[0]["actor"] == "leader@web");
    CHECK(doc[0]["details"]["description"] == "d");
    CHECK(doc[0]["id"].is_number());
    CHECK(doc[0]["at"].get<std::string>().back() == 'Z');
    CHECK_THAT(env.run({"activity"}).out, Catch::Contains("team_created"));
}

TEST_CASE("activity filters by type, cursor and limit", "[activity][pg]") {
    TeamEnv env;
    REQUIRE(env.run({"create", "web"}).exit_code == 0);
    add_activity(env, "agent_spawned");
    add_activity(env, "agent_exited");
    CHECK(env.run({"activity", "--json"}).json().size() == 3);
    auto typed = env.run({"activity", "--type", "agent_exited", "--json"}).json();
    REQUIRE(typed.size() == 1);
    CHECK(typed[0]["type"] == "agent_exited");
    auto since = env.run({"activity", "--since", "1", "--json"}).json();
    REQUIRE(since.size() == 2);
    CHECK(since[0]["id"] == 2);
    auto limited = env.run({"activity", "--limit", "1", "--json"}).json();
    REQUIRE(limited.size() == 1);
    CHECK(limited[0]["id"] == 1);
    CHECK(env.run({"activity", "--limit", "0"}).exit_code == 2);
    CHECK(env.run({"activity", "--limit", "x"}).exit_code == 2);
    CHECK(env.run({"activity", "--since", "-1"}).exit_code == 2);
}

TEST_CASE("activity --follow streams JSON Lines and wakes on a new entry", "[activity][sanitize]") {
    TeamEnv env;
    REQUIRE(env.run({"create", "web"}).exit_code == 0);
    auto follower = env.start({"activity", "--follow", "--limit", "2", "--json"});
    REQUIRE(team::test::eventually([&] { return team::test::watching(follower.pid()); }));
    auto t0 = std::chrono::steady_clock::now();
    add_activity(env, "agent_spawned");
    auto r = follower.wait();
    auto waited = std::chrono::steady_clock::now() - t0;
    CHECK(r.exit_code == 0);
    // Woken by the write, not by the 5 s safety timeout.
    CHECK(std::chrono::duration<double>(waited).count() < team::test::slack(4.0));
    std::istringstream lines(r.out);
    std::string line;
    std::vector<nlohmann::json> docs;
    while (std::getline(lines, line)) docs.push_back(nlohmann::json::parse(line));
    REQUIRE(docs.size() == 2);
    CHECK(docs[0]["type"] == "team_created");
    CHECK(docs[1]["type"] == "agent_spawned");
}
