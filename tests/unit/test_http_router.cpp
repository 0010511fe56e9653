// The HTTP API's routing and request values (http/router.hpp, http/api.hpp), in-process: no
// socket, no server.
#include <catch2/catch.hpp>

#include "base/error.hpp"
#include "http/api.hpp"
#include "http/auth.hpp"
#include "http/router.hpp"
#include "ops/operation.hpp"

using namespace team;
using namespace team::http;

TEST_CASE("routes match method and path segments, captures decoded", "[http]") {
    auto f = find_route("POST", "/api/teams/web/agents/worker%2D1/kill");
    REQUIRE(f.match);
    CHECK(f.match->route->op == "kill_agent");
    CHECK(f.match->captures.at("team") == "web");
    CHECK(f.match->captures.at("name") == "worker-1");

    CHECK(find_route("GET", "/api/teams").match->route->op == "list_teams");
    CHECK(find_route("GET", "/api/teams/").match->route->op == "list_teams");
    CHECK(find_route("PATCH", "/api/teams/t/tasks/3").match->route->op == "update_task");
    CHECK(find_route("POST", "/api/agents/a/executions/bg-1/terminate").match->route->op ==
          "terminate_execution");

    auto wrong_method = find_route("PUT", "/api/teams");
    CHECK_FALSE(wrong_method.match);
    CHECK(wrong_method.path_known);
    auto unknown = find_route("GET", "/api/nothing");
    CHECK_FALSE(unknown.match);
    CHECK_FALSE(unknown.path_known);
    CHECK_THROWS_AS(find_route("GET", "/api/teams/%zz"), Error);
}

TEST_CASE("query and body become the operation's values", "[http]") {
    const ops::Operation* kill = ops::find_operation("kill_agent");
    REQUIRE(kill);
    auto f = find_route("POST", "/api/teams/web/agents/w/kill");
    std::optional<std::string> team;
    auto values = request_values(*kill, *f.match, parse_query("force=true&grace=2s"),
                                 R"j({"reason": "done; $(rm -rf /)"})j", team);
    CHECK(team == "web");
    CHECK(values ==
          nlohmann::json{
              {"name", "w"}, {"force", true}, {"grace", "2s"}, {"reason", "done; $(rm -rf /)"}});

    // A boolean that is neither true nor false, a body that is not an object: usage errors.
    CHECK_THROWS_AS(request_values(*kill, *f.match, parse_query("force=maybe"), "", team), Error);
    CHECK_THROWS_AS(request_values(*kill, *f.match, {}, "[1]", team), Error);
    CHECK_THROWS_AS(request_values(*kill, *f.match, {}, "{", team), Error);

    // DELETE /api/teams/T: the team is the operation's own argument.
    const ops::Operation* del = ops::find_operation("delete_team");
    auto d = find_route("DELETE", "/api/teams/old");
    CHECK(request_values(*del, *d.match, {}, "", team) == nlohmann::json{{"name", "old"}});
}

TEST_CASE("plan answers at once what needs no operation", "[http]") {
    ops::Identity base;
    auto p = plan("GET", "/api/nothing", "", "", base);
    REQUIRE(std::holds_alternative<Answer>(p));
    CHECK(std::get<Answer>(p).status == 404);

    p = plan("GET", "/api/events?team=web&since=12", "", "", base);
    REQUIRE(std::holds_alternative<EventsCall>(p));
    CHECK(std::get<EventsCall>(p).since == 12);
    CHECK(std::get<EventsCall>(p).team == "web");
    p = plan("GET", "/api/events", "", "40", base);  // Last-Event-ID wins
    CHECK(std::get<EventsCall>(p).since == 40);

    p = plan("GET", "/api/teams/web/agents?team=other", "", "", base);
    REQUIRE(std::holds_alternative<OperationCall>(p));
    CHECK(std::get<OperationCall>(p).identity.team == "web");  // the path's team wins

    p = plan("GET", "/api/teams/web/agents/w/logs?follow=true", "", "", base);
    REQUIRE(std::holds_alternative<Answer>(p));
    CHECK(std::get<Answer>(p).status == 400);
}

TEST_CASE("statuses of results", "[http]") {
    CHECK(status_of(0, false) == 200);
    CHECK(status_of(2, true) == 400);
    CHECK(status_of(3, true) == 404);
    CHECK(status_of(4, true) == 409);
    CHECK(status_of(1, true) == 500);
    CHECK(status_of(124, true) == 504);
    CHECK(status_of(6, true) == 502);  // unconfirmed: the host did not answer
    CHECK(status_of(7, true) == 500);  // an error of no kind
    // An answer whose exit code is part of it (ops::Result::is_error false): team run's
    // command's exit code, a waited turn's stop reason; whatever the number.
    CHECK(status_of(7, false) == 200);
    CHECK(status_of(1, false) == 200);
    CHECK(status_of(124, false) == 200);
    CHECK(status_of(130, false) == 200);
    // Every kind of error has its own status, from base/error.hpp's one table.
    for (const auto& kind : team::kErrorKinds) CHECK(status_of(kind.exit, true) == kind.http);
}

TEST_CASE("tokens, cookies and hosts", "[http]") {
    CHECK(same_token("abc", "abc"));
    CHECK_FALSE(same_token("abc", "abd"));
    CHECK_FALSE(same_token("abc", "abcd"));
    CHECK(bearer_token("Bearer xyz") == "xyz");
    CHECK(bearer_token("bearer  xyz ") == "xyz");
    CHECK_FALSE(bearer_token("Basic xyz"));
    CHECK(cookie_value("a=1; team_token=t0k; b=2", "team_token") == "t0k");
    CHECK_FALSE(cookie_value("a=1", "team_token"));
    CHECK(host_allowed("127.0.0.1:7733", "127.0.0.1"));
    CHECK(host_allowed("localhost:8080", "127.0.0.1"));
    CHECK(host_allowed("[::1]:7733", "127.0.0.1"));
    CHECK(host_allowed("10.0.0.5:7733", "10.0.0.5"));
    CHECK_FALSE(host_allowed("evil.example:7733", "127.0.0.1"));
    CHECK_FALSE(host_allowed("", "127.0.0.1"));
    CHECK_FALSE(host_allowed("localhost.evil.example", "127.0.0.1"));
}
