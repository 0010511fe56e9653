// team teardown (SPEC 3 and 7) on real tmux and real processes, run as a user would: each test on
// its own temporary home with its own private tmux server, with agents of every kind (the
// cooperative examples/agent, hung agents that ignore SIGTERM, a busy one that rejects, a plain
// `sleep`). Every process a test starts carries the test's marker, and every test proves at its
// end that none of them is alive, no pane is left and the home's tmux server has been reaped.
//
// Each test uses team names of its own, since tests run in parallel (see test_agents.cpp).
#include <SQLiteCpp/SQLiteCpp.h>
#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/support/agents_home.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/marker.hpp"
#include "tests/support/probe.hpp"
#include "tests/support/process.hpp"

using team::test::alive;
using team::test::bound;
using team::test::check_refused;
using team::test::eventually;
using team::test::keys_of;
using team::test::kSanitized;
using team::test::slack;
using team::test::slurp;
using team::test::warning_for;
using Json = nlohmann::json;
using Ms = std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;
namespace fs = std::filesystem;

namespace {

const std::set<std::string> kRowFields{"agentId", "method", "phase", "reassignedTasks",
                                       "exitReason"};

// One test's home (see AgentsHome), with what a teardown could change.
class Home : public team::test::AgentsHome {
  public:
    using AgentsHome::AgentsHome;

    // Everything a teardown could change, straight from the database.
    std::string snapshot() const {
        return rows({"SELECT * FROM teams ORDER BY id",
                     "SELECT id, team_id, name, status, exit_reason, terminated_at FROM agents "
                     "ORDER BY id",
                     "SELECT * FROM shutdown_requests ORDER BY id",
                     "SELECT id, recipient_id, type, text, data, read_at FROM messages ORDER BY id",
                     "SELECT id, team_id, type, actor, details FROM activity WHERE type NOT IN "
                     "('agent_state', 'worktree_state') ORDER BY id",
                     "SELECT * FROM tasks ORDER BY team_id, id"});
    }
};

}  // namespace

TEST_CASE("teardown: eight mixed agents, cooperative ones confirm, the others are force-killed",
          "[teardown]") {
    Home h("td-mixed");
    // The busy one first, so that it (not an idle one) claims the task.
    h.spawn_agent("busy", {{"AGENT_WORK", "60"}, {"AGENT_POLL", "0.2"}});
    h.ok({"task", "add", "long work"});
    REQUIRE(eventually([&] { return h.task("1")["status"] == "in_progress"; }, bound(8000)));
    REQUIRE(h.task("1")["owner"] == "busy");
    const std::vector<std::string> cooperative{"idle-1", "idle-2", "idle-3", "idle-4"};
    const std::vector<std::string> stuck{"stuck-1", "stuck-2"};
    for (const auto& name : cooperative) h.spawn_agent(name);
    for (const auto& name : stuck) h.spawn_agent(name, {{"AGENT_STUCK", "1"}});
    h.spawn("sleeper", {"sleep", "1000"});
    REQUIRE(h.panes().size() == 8);
    REQUIRE(h.sessions() == std::set<std::string>{"td-mixed"});

    auto started = Steady::now();
    // A grace the idle agents can meet: under ASan on a loaded machine each of their two team
    // processes can take seconds.
    auto r =
        h.json_run({"teardown", "--grace", kSanitized ? "10s" : "6s", "--reason", "sprint over"});
    auto took = std::chrono::duration_cast<Ms>(Steady::now() - started);
    INFO("teardown stdout: " << r.out << " stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    auto doc = r.json();
    CHECK(doc["success"] == true);
    CHECK(doc["team"] == "td-mixed");
    CHECK(doc["dissolved"] == true);
    CHECK(doc["purged"] == false);
    CHECK(doc["survivors"] == 0);
    CHECK_FALSE(doc.contains("error"));
    REQUIRE(doc["agents"].is_array());
    CHECK(doc["agents"].size() == 8);
    // The grace, then SIGTERM and SIGKILL 500ms later: a loose bound, not a measurement.
    CHECK(took < Ms(bound(kSanitized ? 16000 : 12000)));

    std::set<std::string> seen;
    for (const auto& row : doc["agents"]) {
        INFO(row.dump());
        CHECK(keys_of(row) == kRowFields);
        seen.insert(row["agentId"].get<std::string>());
    }
    CHECK(seen.size() == 8);
    for (const auto& name : cooperative) {
        auto row = Home::find(doc["agents"], "agentId", name + "@td-mixed");
        INFO(name << ": " << row.dump());
        REQUIRE(row.is_object());
        CHECK(row["method"] == "graceful");
        CHECK(row["phase"] == "confirmed");
        CHECK(row["exitReason"] == "confirmed");
        CHECK(row["reassignedTasks"] == Json::array());
    }
    for (const auto& name : {"stuck-1", "stuck-2", "sleeper", "busy"}) {
        auto row = Home::find(doc["agents"], "agentId", std::string(name) + "@td-mixed");
        INFO(name << ": " << row.dump());
        REQUIRE(row.is_object());
        CHECK(row["method"] == "force");
        CHECK(row["phase"] == "force_killed");
        CHECK(row["exitReason"] == "force_killed");
    }
    CHECK(Home::find(doc["agents"], "agentId", "busy@td-mixed")["reassignedTasks"] == Json{"1"});

    // Nothing is left: no process, no pane, no tmux server.
    CHECK(h.mark.none_alive_within(3000));
    CHECK(h.panes().empty());
    CHECK_FALSE(h.server_running());

    // Every agent terminated as its row says; the busy one had rejected first.
    auto list = h.agents();
    REQUIRE(list.size() == 8);
    for (const auto& a : list) {
        INFO(a.dump());
        CHECK(a["status"] == "terminated");
        auto row = Home::find(doc["agents"], "agentId", a["agentId"].get<std::string>());
        CHECK(a["exitReason"] == row["exitReason"]);
    }
    auto rejected = h.activity("shutdown_rejected");
    REQUIRE(rejected.size() == 1);
    CHECK(rejected[0]["actor"] == "busy@td-mixed");
    auto requested = h.activity("shutdown_requested");
    CHECK(requested.size() == 8);
    for (const auto& e : requested) {
        CHECK(e["actor"] == "leader@td-mixed");
        CHECK(e["details"]["reason"] == "sprint over");
    }
    CHECK(h.activity("shutdown_confirmed").size() == 4);
    CHECK(h.activity("agent_force_killed").size() == 4);

    // The leader's inbox: four confirmations, four approvals, one rejection.
    auto inbox = h.ok({"inbox"});
    std::map<std::string, int> by_type;
    for (const auto& m : inbox) by_type[m["type"].get<std::string>()]++;
    CHECK(by_type["shutdown_confirmed"] == 4);
    CHECK(by_type["shutdown_approved"] == 4);
    CHECK(by_type["shutdown_rejected"] == 1);

    // The task went back to the pool.
    auto task = h.task("1");
    CHECK(task["status"] == "pending");
    CHECK(task["owner"].is_null());
    CHECK(task["warning"] == warning_for("busy"));
    CHECK(h.activity("tasks_reassigned").size() == 1);

    // The team is dissolved, and says so.
    auto status = h.ok({"status", "td-mixed"});
    CHECK(status["status"] == "dissolved");
    CHECK(status["tmux"]["running"] == false);
    auto dissolved = h.activity("team_dissolved");
    REQUIRE(dissolved.size() == 1);
    CHECK(dissolved[0]["actor"] == "leader@td-mixed");
    CHECK(dissolved[0]["details"]["reason"] == "sprint over");
    CHECK(dissolved[0]["details"]["agents"] == 8);
    CHECK(dissolved[0]["details"]["purged"] == false);
    CHECK(h.ok({"list"}) == Json::array());
    auto all = h.ok({"list", "--all"});
    REQUIRE(all.size() == 1);
    CHECK(all[0]["name"] == "td-mixed");
    CHECK(all[0]["status"] == "dissolved");
    CHECK(h.ok({"shutdown", "status"}) == Json::array());
    h.finish();
}

TEST_CASE("teardown: the tmux server stays while another team of the home has agents",
          "[teardown]") {
    Home h("td-shared-a");
    const std::string other = "td-shared-b";
    h.ok({"create", other, "--cwd", h.env.dir().string()}, {{"TEAM_NAME", other}});
    h.spawn("a1", {"sleep", "1000"});
    auto b1 = h.spawn("b1", {"sleep", "1000"}, {}, other);
    auto b1_pid = static_cast<pid_t>(b1["pid"].get<long>());
    REQUIRE(h.sessions() == std::set<std::string>{"td-shared-a", other});

    auto first = h.ok({"teardown", "td-shared-a", "--grace", "500ms"});
    CHECK(first["dissolved"] == true);
    REQUIRE(first["agents"].size() == 1);
    CHECK(first["agents"][0]["agentId"] == "a1@td-shared-a");
    CHECK(first["agents"][0]["phase"] == "force_killed");
    // The other team's session, agent and pane are untouched; the server runs on.
    CHECK(h.server_running());
    CHECK(h.sessions() == std::set<std::string>{other});
    CHECK(h.panes() == std::set<std::string>{b1["paneId"].get<std::string>()});
    CHECK(alive(b1_pid));
    CHECK(Home::find(h.agents(other), "name", "b1")["status"] == "active");
    CHECK(h.ok({"status", other}, {{"TEAM_NAME", other}})["tmux"]["running"] == true);

    // The last team's teardown reaps the server.
    auto second = h.ok({"teardown", other, "--grace", "500ms"}, {{"TEAM_NAME", other}});
    CHECK(second["dissolved"] == true);
    REQUIRE(second["agents"].size() == 1);
    CHECK(second["agents"][0]["agentId"] == "b1@td-shared-b");
    CHECK_FALSE(alive(b1_pid));
    h.check_nothing_left();
    CHECK(h.ok({"list"}) == Json::array());
    h.finish();
}

TEST_CASE("teardown: --purge deletes the team's records and its pane logs", "[teardown]") {
    Home h("td-purge");
    auto spawned = h.spawn("talker", {"sh", "-c", "echo hello from the talker; exec sleep 1000"});
    h.ok({"task", "add", "a task"});
    h.ok({"send", "talker", "a message"});
    auto logs = h.env.home() / "logs" / "td-purge";
    auto log_files = [&] {
        std::vector<fs::path> out;
        std::error_code ec;
        for (auto it = fs::directory_iterator(logs, ec); !ec && it != fs::directory_iterator();
             it.increment(ec)) {
            out.push_back(it->path());
        }
        return out;
    };
    REQUIRE(eventually([&] {
        auto files = log_files();
        return files.size() == 1 &&
               slurp(files[0]).find("hello from the talker") != std::string::npos;
    }));
    CHECK(h.ok({"logs", "talker"}).dump().find("hello from the talker") != std::string::npos);

    auto doc = h.ok({"teardown", "--grace", "500ms", "--purge", "--reason", "gone"});
    CHECK(doc["success"] == true);
    CHECK(doc["dissolved"] == true);
    CHECK(doc["purged"] == true);
    REQUIRE(doc["agents"].size() == 1);
    CHECK(doc["agents"][0]["phase"] == "force_killed");

    // No record of it is left: not in the list (even of dissolved teams), not found by name.
    CHECK(h.ok({"list", "--all"}) == Json::array());
    auto status = h.json_run({"status", "td-purge"});
    CHECK(status.exit_code == 3);
    CHECK(status.json()["code"] == "not_found");
    CHECK(h.json_run({"agents", "--all"}).exit_code == 3);
    {
        SQLite::Database db((h.env.home() / "team.db").string());
        for (const char* table :
             {"teams", "agents", "messages", "tasks", "shutdown_requests", "task_blockers"}) {
            INFO(table);
            CHECK(db.execAndGet(std::string("SELECT count(*) FROM ") + table).getInt() == 0);
        }
        CHECK(db.execAndGet("SELECT count(*) FROM activity WHERE team_id IS NOT NULL").getInt() ==
              0);
    }
    // Its pane logs are gone.
    CHECK(log_files().empty());
    // The home's own activity keeps one line: the team was dissolved and purged.
    Json dissolved;
    for (const auto& e : h.ok({"activity", "--all"})) {
        if (e["type"] == "team_dissolved") dissolved = e;
    }
    REQUIRE(dissolved.is_object());
    CHECK(dissolved["details"]["team"] == "td-purge");
    CHECK(dissolved["details"]["purged"] == true);
    CHECK(dissolved["details"]["reason"] == "gone");

    // The name is free again.
    h.ok({"create", "td-purge", "--cwd", h.env.dir().string()});
    CHECK(h.ok({"status", "td-purge"})["status"] == "active");
    h.check_nothing_left();
    h.finish();
}

TEST_CASE("teardown: errors: not the leader, unknown or dissolved team, bad grace or reason",
          "[teardown][input]") {
    Home h("td-errors");
    h.spawn("worker", {"sleep", "1000"});
    h.ok({"create", "td-errors-empty", "--cwd", h.env.dir().string()},
         {{"TEAM_NAME", "td-errors-empty"}});

    check_refused(h, {"teardown"}, 4, h.as("worker"), "leader");
    check_refused(h, {"teardown", "td-errors", "--as", "worker"}, 4);
    check_refused(h, {"teardown", "td-errrors"}, 3, {}, "td-errors");
    check_refused(h, {"teardown", "nosuch"}, 3);
    check_refused(h, {"teardown", "bad name;"}, 2);
    for (const std::string bad :
         {"0", "0s", "-1s", "abc", "1x", "", "5 s", "1e3", "2d", "0.0001ms", "$(touch pwned)"}) {
        check_refused(h, {"teardown", "--grace=" + bad}, 2);
    }
    check_refused(h, {"teardown", "--reason", std::string(64 * 1024 + 1, 'r')}, 2);
    check_refused(h, {"teardown", "--reason", std::string("bad \xff\xfe utf-8")}, 2);
    CHECK(h.agent("worker")["status"] == "active");

    // A hostile reason is carried byte for byte and runs nothing.
    auto pwned = h.env.dir() / "pwned";
    std::string reason = "'; touch " + pwned.string() + "; echo '$(touch " + pwned.string() +
                         ") `touch " + pwned.string() + "` \"dq\" \\ #{pane_id} 日本 🚀\nline 2";
    auto doc = h.ok({"teardown", "--grace", "500ms", "--reason", reason});
    CHECK(doc["dissolved"] == true);
    auto request = Home::find(h.ok({"inbox", "--agent", "worker"}), "type", "shutdown_request");
    REQUIRE(request.is_object());
    CHECK(request["data"]["reason"] == reason);
    auto dissolved = h.activity("team_dissolved");
    REQUIRE(dissolved.size() == 1);
    CHECK(dissolved[0]["details"]["reason"] == reason);
    CHECK_FALSE(fs::exists(pwned));

    // Already dissolved.
    check_refused(h, {"teardown", "td-errors"}, 4, {}, "dissolved");

    // A team without agents is torn down at once, whatever its grace (default 30s).
    auto started = Steady::now();
    auto empty = h.ok({"teardown", "td-errors-empty"}, {{"TEAM_NAME", "td-errors-empty"}});
    CHECK(std::chrono::duration_cast<Ms>(Steady::now() - started) < Ms(bound(10000)));
    CHECK(empty["success"] == true);
    CHECK(empty["team"] == "td-errors-empty");
    CHECK(empty["agents"] == Json::array());
    CHECK(empty["dissolved"] == true);
    CHECK(h.ok({"list"}) == Json::array());
    h.check_nothing_left();
    h.finish();
}

TEST_CASE("teardown: interrupted, the supervisors still force-kill at the deadline",
          "[teardown][sanitize]") {
    Home h("td-interrupted");
    h.spawn("sleeper", {"sleep", "1000"});
    h.spawn_agent("stuck", {{"AGENT_STUCK", "1"}});
    h.spawn_agent("idle");
    // 3s (12s under the sanitizers): the cooperative agent must answer within it even on a
    // loaded CI machine (1s was missed once there under ASan, 3s once too).
    auto grace = std::to_string(static_cast<int>(slack(3))) + "s";
    auto child = h.env.start({"teardown", "--grace", grace, "--json"}, h.extra());
    // Killed once its requests are stored and it waits for the agents, well before the deadline
    // (the supervisors were told inside its write; proof: crash kills teardown at random moments).
    REQUIRE(eventually([&] {
        return h.requests_for("sleeper") == 1 && h.requests_for("stuck") == 1 &&
               h.requests_for("idle") == 1;
    }));
    REQUIRE(eventually([&] { return team::test::watching(child.pid()); }));
    REQUIRE(::kill(child.pid(), SIGKILL) == 0);
    auto r = child.wait();
    CHECK(r.exit_code == 128 + SIGKILL);
    CHECK(r.out.empty());

    // The ones that never answer are force-killed by their supervisors at the deadline; the
    // cooperative one confirms by itself.
    for (const char* name : {"sleeper", "stuck"}) {
        auto a = h.wait_terminated(name, 15000);
        INFO(a.dump());
        CHECK(a["exitReason"] == "force_killed");
        auto status = h.ok({"shutdown", "status", name});
        CHECK(status["phase"] == "force_killed");
        CHECK(status["forcedAt"].is_string());
    }
    CHECK(h.wait_terminated("idle", 15000)["exitReason"] == "confirmed");
    h.check_nothing_left();

    // The team itself was not dissolved (its teardown never finished); a second one does it.
    CHECK(h.ok({"status"})["status"] == "active");
    auto again = h.ok({"teardown", "--grace", "1s"});
    CHECK(again["dissolved"] == true);
    CHECK(again["agents"] == Json::array());
    CHECK(h.ok({"status", "td-interrupted"})["status"] == "dissolved");
    h.finish();
}

TEST_CASE("teardown: an agent already shutting down keeps its request, with the team's deadline",
          "[teardown][sanitize]") {
    Home h("td-pending");
    h.spawn("slow", {"sleep", "1000"});
    h.spawn("fresh", {"sleep", "1000"});
    auto request = h.ok({"kill-agent", "slow", "--reason", "earlier"});
    std::string rid = request["requestId"];

    auto doc = h.ok({"teardown", "--grace", "1s"});
    CHECK(doc["dissolved"] == true);
    REQUIRE(doc["agents"].size() == 2);
    for (const auto& row : doc["agents"]) {
        INFO(row.dump());
        CHECK(row["method"] == "force");
        CHECK(row["phase"] == "force_killed");
        CHECK(row["exitReason"] == "force_killed");
    }
    // No second request for the agent that had one: its own got the deadline and ended it.
    CHECK(h.requests_for("slow") == 1);
    CHECK(h.requests_for("fresh") == 1);
    auto status = h.ok({"shutdown", "status", "slow"});
    CHECK(status["requestId"] == rid);
    CHECK(status["reason"] == "earlier");
    CHECK(status["phase"] == "force_killed");
    CHECK(status["forceAt"].is_string());
    CHECK(status["closedAt"].is_string());
    CHECK(h.activity("shutdown_requested").size() == 2);
    h.check_nothing_left();
    h.finish();
}
