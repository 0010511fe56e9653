// Executions (SPEC 13, the Execution Termination feature) over real background shells: the
// list of the home's running shells, one's status, and terminate (SIGINT, 5 s, SIGKILL) with the
// edge cases its users met: setsid escapees, a timeout that must end the tree too, a terminate
// racing the natural exit, a command that exits 0 on SIGINT, a cancelled record that must stay
// cancelled, and a terminate that arrives while the shell is still starting. The command line's
// `team shell terminate` is one face; list_executions and execution_status have no verb there
// and are invoked in-process, as the HTTP face invokes them, on the same home.
#include <SQLiteCpp/SQLiteCpp.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "ops/core.hpp"
#include "ops/operation.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/marker.hpp"
#include "tests/support/process.hpp"
#include "tests/support/team_home.hpp"

using team::test::bound;
using team::test::eventually;
using team::test::Marker;
using team::test::RunResult;
using team::test::TeamEnv;
using team::test::TeamHome;
using Env = std::map<std::string, std::string>;
using Json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

Env with_mark(const Marker& mark) {
    return {{mark.key(), mark.value()}};
}

std::string start_shell(const TeamEnv& env, const Marker& mark,
                        const std::vector<std::string>& command,
                        const std::vector<std::string>& options = {}) {
    std::vector<std::string> args{"shell", "start", "--json"};
    args.insert(args.end(), options.begin(), options.end());
    args.push_back("--");
    args.insert(args.end(), command.begin(), command.end());
    auto r = env.run(args, with_mark(mark));
    INFO("stdout: " << r.out << " stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    return r.json()["shell_id"].get<std::string>();
}

RunResult terminate(const TeamEnv& env, const Marker& mark, const std::string& id,
                    const std::vector<std::string>& options = {}) {
    std::vector<std::string> args{"shell", "terminate", id, "--json"};
    args.insert(args.end(), options.begin(), options.end());
    return env.run(args, with_mark(mark));
}

Json shell_status(const TeamEnv& env, const Marker& mark, const std::string& id) {
    auto r = env.run({"shell", "status", id, "--json"}, with_mark(mark));
    INFO("stdout: " << r.out << " stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    return r.json();
}

bool output_contains(const TeamEnv& env, const Marker& mark, const std::string& id,
                     const std::string& text) {
    return eventually([&] {
        auto r = env.run({"shell", "output", id, "--json"}, with_mark(mark));
        return r.exit_code == 0 &&
               r.json()["output"].get<std::string>().find(text) != std::string::npos;
    });
}

// An operation invoked in-process on the test's home, as the HTTP face invokes it by name.
team::ops::Result invoke(const TeamEnv& env, const char* name, const Json& values) {
    team::ops::Core core(team::ops::Identity{env.home().string(), std::nullopt, std::nullopt});
    const auto* op = team::ops::find_operation(name);
    REQUIRE(op != nullptr);
    return team::ops::invoke(core, *op, values, team::ops::Naming::json);
}

std::vector<Json> activity_of(const TeamEnv& env, const Marker& mark, const std::string& type) {
    auto r = env.run({"activity", "--all", "--json"}, with_mark(mark));
    REQUIRE(r.exit_code == 0);
    std::vector<Json> out;
    for (const auto& e : r.json()) {
        if (e["type"] == type) out.push_back(e);
    }
    return out;
}

}  // namespace

TEST_CASE("terminate ends the whole tree with SIGINT, setsid escapees and daemons included",
          "[executions][sanitize]") {
    TeamEnv env;
    Marker mark;
    auto id =
        start_shell(env, mark, {"sh", "-c", "setsid sleep 1000 & (sleep 1001 &); sleep 1002"});
    REQUIRE(eventually([&] { return mark.alive().size() >= 5; }));  // supervisor, sh, 3 sleeps
    auto r = terminate(env, mark, id);
    INFO("stdout: " << r.out << " stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    auto doc = r.json();
    CHECK(doc["status"] == "terminated");
    CHECK(doc["execution_id"] == id);
    CHECK(doc["returncode"].is_number_integer());
    CHECK(mark.none_alive_within(bound(2000)));
    auto status = shell_status(env, mark, id);
    CHECK(status["status"] == "killed");

    auto cancelled = activity_of(env, mark, "execution_cancelled");
    REQUIRE(cancelled.size() == 1);
    CHECK(cancelled[0]["actor"] == "user");
    CHECK(cancelled[0]["details"]["execution_id"] == id);
    CHECK(cancelled[0]["details"]["status"] == "terminated");
    CHECK(cancelled[0]["details"]["returncode"] == doc["returncode"]);

    // Once more: already finished, with the same return code; nothing more logged.
    auto again = terminate(env, mark, id);
    REQUIRE(again.exit_code == 0);
    CHECK(again.json()["status"] == "already_finished");
    CHECK(again.json()["returncode"] == doc["returncode"]);
    CHECK(activity_of(env, mark, "execution_cancelled").size() == 1);
}

TEST_CASE("a command that ignores SIGINT is SIGKILLed after the grace", "[executions]") {
    TeamEnv env;
    Marker mark;
    auto id = start_shell(env, mark,
                          {"sh", "-c", "trap '' INT; echo ready; while :; do sleep 0.1; done"});
    REQUIRE(output_contains(env, mark, id, "ready"));
    auto t0 = std::chrono::steady_clock::now();
    auto r = terminate(env, mark, id);
    double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    INFO("stdout: " << r.out << " stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.json()["status"] == "terminated");
    CHECK(r.json()["returncode"] == -9);
    CHECK(took >= 4.5);  // the 5 s grace of SPEC 13 was given
    CHECK(mark.none_alive_within(bound(2000)));
}

TEST_CASE("a command that exits 0 on SIGINT is still recorded as cancelled", "[executions][pg]") {
    TeamEnv env;
    Marker mark;
    auto id = start_shell(
        env, mark, {"sh", "-c", "trap 'exit 0' INT; echo ready; while :; do sleep 0.1; done"});
    REQUIRE(output_contains(env, mark, id, "ready"));
    auto r = terminate(env, mark, id);
    INFO("stdout: " << r.out << " stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    auto doc = r.json();
    CHECK(doc["status"] == "terminated");
    CHECK(doc["returncode"] == 0);
    auto status = shell_status(env, mark, id);
    CHECK(status["status"] == "killed");  // not "completed"
    CHECK(status["exitCode"] == 0);
    // The supervisor recorded the end; nothing records it again as completed later.
    auto waited = env.run({"shell", "wait", id, "--json"}, with_mark(mark));
    CHECK(waited.exit_code == 0);
    CHECK(shell_status(env, mark, id)["status"] == "killed");
    CHECK(mark.none_alive_within(bound(2000)));
}

TEST_CASE("a timeout ends the whole tree too, setsid escapees included", "[executions][sanitize]") {
    TeamEnv env;
    Marker mark;
    auto id = start_shell(env, mark, {"sh", "-c", "setsid sleep 1000 & (sleep 1001 &); sleep 1002"},
                          {"--timeout", "500ms"});
    auto waited = env.run({"shell", "wait", id, "--timeout", "10s", "--json"}, with_mark(mark));
    REQUIRE(waited.exit_code == 0);
    CHECK(shell_status(env, mark, id)["status"] == "timed_out");
    CHECK(mark.none_alive_within(bound(2000)));
    // A terminate after the timeout: already finished, never an error.
    auto r = terminate(env, mark, id);
    REQUIRE(r.exit_code == 0);
    CHECK(r.json()["status"] == "already_finished");
    CHECK(r.json()["returncode"].is_number_integer());
}

TEST_CASE("a terminate racing the natural exit is terminated or already_finished, never an error",
          "[executions]") {
    TeamEnv env;
    Marker mark;
    int terminated = 0, finished = 0;
    for (int i = 0; i < 8; ++i) {
        // Exits within a few milliseconds of the terminate, on either side of it.
        auto id = start_shell(env, mark, {"sleep", i % 2 ? "0.02" : "0"});
        auto r = terminate(env, mark, id);
        INFO("run " << i << " stdout: " << r.out << " stderr: " << r.err);
        REQUIRE(r.exit_code == 0);
        auto doc = r.json();
        CHECK(doc["returncode"].is_number_integer());
        auto status = shell_status(env, mark, id);
        if (doc["status"] == "terminated") {
            ++terminated;
            CHECK(status["status"] == "killed");
        } else {
            REQUIRE(doc["status"] == "already_finished");
            ++finished;
            CHECK(status["status"] == "completed");
            CHECK(doc["returncode"] == 0);
        }
    }
    CHECK(terminated + finished == 8);
    CHECK(mark.none_alive_within(bound(2000)));
}

TEST_CASE("a terminate that arrives while the shell is still starting waits for it and ends it",
          "[executions]") {
    TeamEnv env;
    Marker mark;
    // A shell as `shell start` records it before its supervisor has run the command: starting,
    // with no pid yet.
    REQUIRE(env.run({"create", "ex-start"}, with_mark(mark)).exit_code == 0);  // makes the store
    std::string id = "bg-5a5a5a";
    fs::create_directories(env.home() / "shells");
    {
        SQLite::Database db((env.home() / "team.db").string(), SQLite::OPEN_READWRITE);
        db.setBusyTimeout(5000);
        SQLite::Statement insert(db, R"sql(
            INSERT INTO shells (id, command, cwd, env, status, output_limit, output_file,
                                started_at)
            VALUES (?, '["sleep", "1000"]', '/', '[]', 'starting', 1048576, ?, ?)
        )sql");
        insert.bind(1, id);
        insert.bind(2, (env.home() / "shells" / (id + ".out")).string());
        insert.bind(
            3, static_cast<std::int64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                             std::chrono::system_clock::now().time_since_epoch())
                                             .count()));
        insert.exec();
    }
    auto terminating = env.start({"shell", "terminate", id, "--json"}, with_mark(mark));
    // The request is recorded; the terminate now waits for the command to start.
    REQUIRE(eventually([&] {
        SQLite::Database db((env.home() / "team.db").string(), SQLite::OPEN_READONLY);
        db.setBusyTimeout(5000);
        SQLite::Statement q(db, "SELECT kill_requested_by FROM shells WHERE id = ?");
        q.bind(1, id);
        return q.executeStep() && !q.getColumn(0).isNull();
    }));
    // The supervisor starts the command late, as a slow start would.
    auto supervisor = env.start({"__supervise", id}, with_mark(mark));
    auto r = terminating.wait();
    INFO("stdout: " << r.out << " stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    auto doc = r.json();
    CHECK(doc["status"] == "terminated");
    CHECK(doc["returncode"] == -2);  // sleep ended by the SIGINT
    CHECK(supervisor.wait().exit_code == 0);
    auto status = shell_status(env, mark, id);
    CHECK(status["status"] == "killed");
    CHECK(status["signal"] == "SIGINT");
    CHECK(mark.none_alive_within(bound(2000)));
}

TEST_CASE("list_executions and execution_status see the home's running shells, every team's",
          "[executions]") {
    TeamEnv env;
    Marker mark;
    REQUIRE(env.run({"create", "ex-list"}, with_mark(mark)).exit_code == 0);
    auto in_team = start_shell(env, mark, {"sleep", "1000"}, {"--team", "ex-list"});
    auto alone = start_shell(env, mark, {"sleep", "1001"});
    auto done = start_shell(env, mark, {"true"});
    REQUIRE(env.run({"shell", "wait", done, "--json"}, with_mark(mark)).exit_code == 0);

    auto listed = invoke(env, "list_executions", Json::object());
    REQUIRE(listed.ok());
    const auto& executions = listed.doc["executions"];
    REQUIRE(executions.size() == 2);
    std::map<std::string, Json> by_id;
    for (const auto& e : executions) by_id[e["execution_id"].get<std::string>()] = e;
    REQUIRE(by_id.count(in_team) == 1);
    REQUIRE(by_id.count(alone) == 1);
    CHECK(by_id[in_team]["team"] == "ex-list");
    CHECK(by_id[alone]["team"].is_null());
    CHECK(by_id[alone]["agent"].is_null());
    CHECK(by_id[alone]["command"] == Json({"sleep", "1001"}));
    CHECK(by_id[alone]["pid"].is_number_integer());
    CHECK(by_id[alone]["started_at"].get<std::string>().back() == 'Z');
    CHECK(by_id[alone]["metadata"]["status"] == "running");

    auto status = invoke(env, "execution_status", {{"id", alone}});
    REQUIRE(status.ok());
    CHECK(status.doc["id"] == alone);
    CHECK(status.doc["execution_id"] == alone);
    CHECK(status.doc["status"] == "running");
    CHECK(status.doc["returncode"].is_null());
    auto finished = invoke(env, "execution_status", {{"id", done}});
    CHECK(finished.doc["status"] == "completed");
    CHECK(finished.doc["returncode"] == 0);
    auto unknown = invoke(env, "execution_status", {{"id", "bg-000000"}});
    CHECK(unknown.exit_code == 3);
    CHECK(unknown.doc["code"] == "not_found");

    // terminate by name, in-process as the HTTP face does it.
    auto ended = invoke(env, "terminate_execution", {{"id", in_team}});
    REQUIRE(ended.ok());
    CHECK(ended.doc["status"] == "terminated");
    auto cancelled = activity_of(env, mark, "execution_cancelled");
    REQUIRE(cancelled.size() == 1);
    CHECK(cancelled[0]["actor"] == "leader@ex-list");
    REQUIRE(terminate(env, mark, alone).exit_code == 0);
    CHECK(invoke(env, "list_executions", Json::object()).doc["executions"].empty());

    auto missing = terminate(env, mark, "bg-000000");
    CHECK(missing.exit_code == 3);
    CHECK(missing.json()["code"] == "not_found");
    auto human = env.run({"shell", "terminate", "bg-000000"}, with_mark(mark));
    CHECK(human.exit_code == 3);
    CHECK_THAT(human.err, Catch::Contains("Shell not found: bg-000000"));
    CHECK(mark.none_alive_within(bound(2000)));
}

TEST_CASE("terminate --agent: only that running agent's shells", "[executions][agents]") {
    TeamHome h("ex-agent");
    auto spawn = [&](const std::string& name) {
        auto r = h.run({"spawn", name, "--json", "--env", h.mark.entry(), "--", "sleep", "1000"});
        INFO("stdout: " << r.out << " stderr: " << r.err);
        REQUIRE(r.exit_code == 0);
    };
    spawn("worker");
    spawn("other");
    auto shell_of = [&](const std::string& agent) {
        auto r = h.run({"shell", "start", "--json", "--agent", agent, "--", "sleep", "1000"});
        INFO("stdout: " << r.out << " stderr: " << r.err);
        REQUIRE(r.exit_code == 0);
        return r.json()["shell_id"].get<std::string>();
    };
    auto mine = shell_of("worker");
    auto theirs = shell_of("other");

    auto unknown = h.run({"shell", "terminate", mine, "--agent", "nobody", "--json"});
    CHECK(unknown.exit_code == 3);
    CHECK(unknown.json()["code"] == "not_found");
    auto not_its = h.run({"shell", "terminate", theirs, "--agent", "worker", "--json"});
    CHECK(not_its.exit_code == 3);
    CHECK(shell_status(h.env, h.mark, theirs)["status"] == "running");
    auto ok = h.run({"shell", "terminate", mine, "--agent", "worker", "--json"});
    INFO("stdout: " << ok.out << " stderr: " << ok.err);
    REQUIRE(ok.exit_code == 0);
    CHECK(ok.json()["status"] == "terminated");

    // An agent that is no longer running: refused, and its shell runs on.
    REQUIRE(h.run({"kill-agent", "other", "--force", "--wait", "--json"}).exit_code == 0);
    auto refused = h.run({"shell", "terminate", theirs, "--agent", "other", "--json"});
    CHECK(refused.exit_code == 4);
    CHECK(refused.json()["code"] == "refused");
    CHECK(shell_status(h.env, h.mark, theirs)["status"] == "running");
    REQUIRE(h.run({"shell", "terminate", theirs, "--json"}).exit_code == 0);
    h.finish();
}
