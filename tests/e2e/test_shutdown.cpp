// team kill-agent (graceful) and the agent's side of the shutdown handshake, team shutdown
// approve / reject / confirm / status (SPEC 7.1), run as a user would on real tmux and real
// processes: each test on its own temporary home with its own private tmux server, the agents
// being examples/agent (the small agent written in bash) or shell scripts that answer in their
// own pane. Every process a test starts carries the test's marker, and every test proves at its
// end that none of them is alive and no pane is left.
//
// Each test uses a team name of its own, since tests run in parallel (see test_agents.cpp).
#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "proc/process_table.hpp"
#include "tests/support/agents_home.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/marker.hpp"
#include "tests/support/pg.hpp"
#include "tests/support/probe.hpp"
#include "tests/support/process.hpp"

using team::test::alive;
using team::test::bound;
using team::test::check_refused;
using team::test::eventually;
using team::test::kSanitized;
using team::test::sq;
using team::test::warning_for;
using Json = nlohmann::json;
using Ms = std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;
namespace fs = std::filesystem;

namespace {

pid_t parent_of(pid_t pid) {
    auto p = team::proc::read_process(pid);
    return p ? p->ppid : 0;
}

// The shell loop an agent script runs until the shutdown request is in its inbox.
std::string await_request() {
    return "while ! \"$TEAM_BIN\" inbox --type shutdown_request --unread --json | grep -q "
           "requestId; do sleep 0.05; done; ";
}

// One test's home (see AgentsHome), with helpers of its own.
class Home : public team::test::AgentsHome {
  public:
    using AgentsHome::AgentsHome;

    // A shell script as an agent, with TEAM_BIN the binary under test.
    Json spawn_script(const std::string& name, const std::string& script) const {
        return spawn(name, {"sh", "-c", script}, {{"TEAM_BIN", team::test::team_binary()}});
    }

    // `team shutdown status NAME --json`: the agent's newest request.
    Json request(const std::string& name) const {
        auto doc = ok({"shutdown", "status", name});
        REQUIRE(doc.is_object());
        return doc;
    }

    // The inbox of the leader (no name) or of that agent, as the leader reads it.
    Json inbox(const std::string& name = "") const {
        std::vector<std::string> args{"inbox"};
        if (!name.empty()) args.insert(args.end(), {"--agent", name});
        auto doc = ok(args);
        REQUIRE(doc.is_array());
        return doc;
    }

    // The messages of that type in a list.
    static Json of_type(const Json& list, const std::string& type) {
        Json out = Json::array();
        for (const auto& m : list) {
            if (m["type"] == type) out.push_back(m);
        }
        return out;
    }

    // The types of the shutdown entries of the activity log, in order.
    std::vector<std::string> shutdown_trail() const {
        std::vector<std::string> out;
        for (const auto& e : activity()) {
            std::string type = e["type"];
            if (type.rfind("shutdown_", 0) == 0 || type == "agent_force_killed" ||
                type == "agent_exited") {
                out.push_back(type + " by " + e["actor"].get<std::string>());
            }
        }
        return out;
    }

    // Live processes of the test that carry that agent's identity in their environment.
    std::vector<pid_t> agent_processes(const std::string& name) const {
        std::vector<pid_t> out;
        for (pid_t pid : mark.alive()) {
            if (team::proc::environ_has(pid, "TEAM_AGENT_ID=" + id(name))) out.push_back(pid);
        }
        return out;
    }

    // Everything a shutdown command could change, straight from the database.
    std::string snapshot() const {
        return rows({"SELECT * FROM shutdown_requests ORDER BY id",
                     "SELECT id, recipient_id, type, text, data, read_at FROM messages ORDER BY id",
                     "SELECT id, type, actor, details FROM activity WHERE type NOT IN "
                     "('agent_state', 'worktree_state') ORDER BY id",
                     "SELECT id, name, status, exit_reason, terminated_at FROM agents ORDER BY id",
                     "SELECT * FROM tasks ORDER BY team_id, id"});
    }
};

}  // namespace

TEST_CASE("shutdown: the full handshake with an idle example agent, kill-agent --wait",
          "[shutdown][sanitize]") {
    Home h("sd-handshake");
    auto spawned = h.spawn_agent("worker");
    std::string pane = spawned["paneId"];
    REQUIRE(h.panes().count(pane) == 1);

    auto r = h.json_run({"kill-agent", "worker", "--reason", "done for today", "--wait"});
    INFO("kill-agent stdout: " << r.out << " stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    auto result = r.json();
    CHECK(result["success"] == true);
    CHECK(result["agentId"] == "worker@sd-handshake");
    CHECK(result["method"] == "graceful");
    CHECK(result["phase"] == "confirmed");
    CHECK(result["exitReason"] == "confirmed");
    CHECK(result["reassignedTasks"] == Json::array());
    CHECK_FALSE(result.contains("error"));
    REQUIRE(result["requestId"].is_string());
    std::string request_id = result["requestId"];

    // The agent is terminated (kill-agent --wait returns once it has ended), its pane is gone.
    auto a = h.agent("worker");
    CHECK(a["status"] == "terminated");
    CHECK(a["exitReason"] == "confirmed");
    CHECK(a["terminatedAt"].is_string());
    CHECK(h.panes().count(pane) == 0);

    // The phases, in order, each by whom it is.
    CHECK(h.shutdown_trail() ==
          std::vector<std::string>{"shutdown_requested by leader@sd-handshake",
                                   "shutdown_approved by worker@sd-handshake",
                                   "shutdown_confirmed by worker@sd-handshake"});
    auto requested = h.activity("shutdown_requested");
    REQUIRE(requested.size() == 1);
    CHECK(requested[0]["details"]["agentId"] == "worker@sd-handshake");
    CHECK(requested[0]["details"]["requestId"] == request_id);
    CHECK(requested[0]["details"]["reason"] == "done for today");
    auto confirmed = h.activity("shutdown_confirmed");
    REQUIRE(confirmed.size() == 1);
    CHECK(confirmed[0]["details"]["agentId"] == "worker@sd-handshake");
    CHECK(confirmed[0]["details"]["exitReason"] == "confirmed");
    CHECK(confirmed[0]["details"]["requestId"] == request_id);

    // The agent's inbox has the request; the leader's the approval, then the confirmation.
    auto to_agent = Home::of_type(h.inbox("worker"), "shutdown_request");
    REQUIRE(to_agent.size() == 1);
    CHECK(to_agent[0]["from"] == "leader");
    CHECK(to_agent[0]["data"] == Json{{"requestId", request_id}, {"reason", "done for today"}});
    CHECK(to_agent[0]["readAt"].is_string());  // the agent read it with --mark-read
    auto leader = h.inbox();
    std::vector<std::string> types;
    for (const auto& m : leader) types.push_back(m["type"]);
    CHECK(types == std::vector<std::string>{"shutdown_approved", "shutdown_confirmed"});
    REQUIRE(leader.size() == 2);
    for (const auto& m : leader) {
        INFO(m.dump());
        CHECK(m["from"] == "worker");
        CHECK(m["to"] == "leader");
        CHECK(m["data"]["requestId"] == request_id);
        CHECK(m["data"]["reason"] == "done for today");
    }

    // The request as `shutdown status` shows it, once it is over.
    auto status = h.request("worker");
    CHECK(status["requestId"] == request_id);
    CHECK(status["agentId"] == "worker@sd-handshake");
    CHECK(status["method"] == "graceful");
    CHECK(status["phase"] == "confirmed");
    CHECK(status["reason"] == "done for today");
    CHECK(status["requestedBy"] == "leader@sd-handshake");
    CHECK(status["respondedAt"].is_string());
    CHECK(status["confirmedAt"].is_string());
    CHECK(status["closedAt"].is_string());
    CHECK(status["forcedAt"].is_null());
    CHECK(status["rejectReason"].is_null());
    // The leader's overview no longer lists it.
    CHECK(h.ok({"shutdown", "status"}) == Json::array());

    h.check_nothing_left();
    h.finish();
}

TEST_CASE("shutdown: a busy example agent rejects, then --force ends it and hands its task back",
          "[shutdown][sanitize]") {
    Home h("sd-reject");
    // Work long enough that it is still busy whatever the load; --force ends it anyway.
    auto spawned = h.spawn_agent("busy", {{"AGENT_WORK", "30"}, {"AGENT_POLL", "0.2"}});
    auto pid = static_cast<pid_t>(spawned["pid"].get<long>());
    pid_t supervisor = parent_of(pid);
    REQUIRE(supervisor > 1);
    auto added = h.ok({"task", "add", "long work"});
    REQUIRE(added["id"] == "1");
    Json t;
    REQUIRE(eventually(
        [&] {
            t = h.task("1");
            return t["status"] == "in_progress";
        },
        bound(8000)));
    CHECK(t["owner"] == "busy");

    auto r = h.json_run({"kill-agent", "busy", "--wait", "--timeout", "20s"});
    INFO("kill-agent stdout: " << r.out << " stderr: " << r.err);
    CHECK(r.exit_code == 4);
    auto result = r.json();
    CHECK(result["success"] == false);
    CHECK(result["method"] == "graceful");
    CHECK(result["phase"] == "rejected");
    REQUIRE(result["error"].is_string());
    CHECK_THAT(result["error"].get<std::string>(),
               Catch::Contains("rejected") && Catch::Contains("busy with task 1"));
    std::string request_id = result["requestId"];

    // Back to active; the leader's inbox has the rejection and its reason.
    CHECK(h.agent("busy")["status"] == "active");
    auto rejected = Home::of_type(h.inbox(), "shutdown_rejected");
    REQUIRE(rejected.size() == 1);
    CHECK(rejected[0]["from"] == "busy");
    CHECK(rejected[0]["data"]["requestId"] == request_id);
    CHECK(rejected[0]["data"]["reason"] == "busy with task 1; ask again when it is done");
    auto status = h.request("busy");
    CHECK(status["phase"] == "rejected");
    CHECK(status["rejectReason"] == "busy with task 1; ask again when it is done");
    CHECK(status["closedAt"].is_string());
    auto trail_rejected = h.activity("shutdown_rejected");
    REQUIRE(trail_rejected.size() == 1);
    CHECK(trail_rejected[0]["actor"] == "busy@sd-reject");
    CHECK(h.task("1")["status"] == "in_progress");

    // --force ends it now; its task goes back to the pool with the warning.
    auto forced = h.json_run({"kill-agent", "busy", "--force", "--grace", "2s"});
    INFO("kill-agent --force stdout: " << forced.out << " stderr: " << forced.err);
    REQUIRE(forced.exit_code == 0);
    auto fdoc = forced.json();
    CHECK(fdoc["success"] == true);
    CHECK(fdoc["method"] == "force");
    CHECK(fdoc["phase"] == "force_killed");
    CHECK(fdoc["exitReason"] == "force_killed");
    CHECK(fdoc["reassignedTasks"] == Json{"1"});
    auto a = h.agent("busy");
    CHECK(a["status"] == "terminated");
    CHECK(a["exitReason"] == "force_killed");
    auto task = h.task("1");
    CHECK(task["status"] == "pending");
    CHECK(task["owner"].is_null());
    CHECK(task["claimedAt"].is_null());
    CHECK(task["warning"] == warning_for("busy"));
    auto killed = h.activity("agent_force_killed");
    REQUIRE(killed.size() == 1);
    CHECK(killed[0]["actor"] == "leader@sd-reject");
    CHECK(killed[0]["details"]["reassignedTasks"] == Json{"1"});
    // No shutdown_confirmed reaches the leader for a force-kill.
    CHECK(Home::of_type(h.inbox(), "shutdown_confirmed").empty());
    // After --force returns success, no process of the agent is left.
    CHECK(h.agent_processes("busy").empty());
    CHECK_FALSE(alive(pid));
    CHECK_FALSE(alive(supervisor));
    h.check_nothing_left();
    h.finish();
}

TEST_CASE("shutdown: a --force-after deadline holds after the leader's command is SIGKILLed",
          "[shutdown][sanitize]") {
    Home h("sd-force-after");
    // A hung agent: it never reads its inbox and ignores SIGTERM.
    h.spawn_agent("stuck", {{"AGENT_STUCK", "1"}});
    // 1 s (4 s under the sanitizers, where the steps below take longer).
    auto deadline = Ms(bound(1000));
    auto started = Steady::now();
    auto child = h.env.start(
        {"kill-agent", "stuck", "--force-after", std::to_string(deadline.count()) + "ms", "--grace",
         "500ms", "--wait", "--json"},
        h.extra());
    // Killed soon after its request is stored (before that, nothing would have been asked),
    // and well before the deadline. (The supervisor is told inside the write, so a kill at any
    // moment keeps the deadline; proof: crash kills kill-agent at random moments.)
    REQUIRE(eventually([&] { return h.requests_for("stuck") == 1; }));
    REQUIRE(eventually([&] { return team::test::watching(child.pid()); }));  // in its --wait
    REQUIRE(::kill(child.pid(), SIGKILL) == 0);
    auto r = child.wait();
    CHECK(r.exit_code == 128 + SIGKILL);
    CHECK(r.out.empty());
    // Read before the deadline (the request was made after `started`), it is still shutting down.
    auto status_then = h.agent("stuck")["status"];
    if (Steady::now() - started < deadline) CHECK(status_then == "shutting_down");

    // Its supervisor ends it at the deadline, SIGKILL after the grace (500ms).
    auto a = h.wait_terminated("stuck", 10000);
    auto took = std::chrono::duration_cast<Ms>(Steady::now() - started);
    CHECK(a["exitReason"] == "force_killed");
    CHECK(took >= deadline);  // not before the deadline
    CHECK(took < Ms(bound(8000)));
    auto status = h.request("stuck");
    CHECK(status["phase"] == "force_killed");
    CHECK(status["method"] == "graceful");
    CHECK(status["forceAt"].is_string());
    CHECK(status["forcedAt"].is_string());
    CHECK(status["closedAt"].is_string());
    auto killed = h.activity("agent_force_killed");
    REQUIRE(killed.size() == 1);
    CHECK(killed[0]["details"]["agentId"] == "stuck@sd-force-after");
    CHECK(killed[0]["details"]["deadline"] == status["forceAt"]);
    h.check_nothing_left();
    h.finish();
}

TEST_CASE("shutdown: shutdown confirm from inside the agent's own pane completes everything",
          "[shutdown][sanitize]") {
    Home h("sd-confirm-inside");
    h.ok({"task", "add", "its work"});
    auto ready = h.env.dir() / "ready";
    auto spawned = h.spawn_script("inside", "\"$TEAM_BIN\" task claim 1 >/dev/null && touch " +
                                                sq(ready) + "; " + await_request() +
                                                "\"$TEAM_BIN\" shutdown confirm; sleep 100");
    std::string pane = spawned["paneId"];
    REQUIRE(eventually([&] { return fs::exists(ready); }));
    CHECK(h.task("1")["owner"] == "inside");

    auto result = h.ok({"kill-agent", "inside"});
    CHECK(result["phase"] == "requested");
    CHECK(result["method"] == "graceful");
    std::string request_id = result["requestId"];

    auto a = h.wait_terminated("inside");
    CHECK(a["exitReason"] == "confirmed");
    auto task = h.task("1");
    CHECK(task["status"] == "pending");
    CHECK(task["owner"].is_null());
    CHECK(task["warning"] == warning_for("inside"));
    auto to_leader = Home::of_type(h.inbox(), "shutdown_confirmed");
    REQUIRE(to_leader.size() == 1);
    CHECK(to_leader[0]["data"]["requestId"] == request_id);
    CHECK(to_leader[0]["data"]["reassignedTasks"] == Json{"1"});
    // No approval was given first: a confirmation is enough.
    CHECK(Home::of_type(h.inbox(), "shutdown_approved").empty());
    auto status = h.request("inside");
    CHECK(status["phase"] == "confirmed");
    CHECK(status["confirmedAt"].is_string());
    CHECK(status["closedAt"].is_string());
    CHECK(status["reassignedTasks"] == Json{"1"});
    auto reassigned = h.activity("tasks_reassigned");
    REQUIRE(reassigned.size() == 1);
    CHECK(reassigned[0]["details"]["tasks"] == Json{"1"});
    CHECK(eventually([&] { return h.panes().count(pane) == 0; }));
    h.check_nothing_left();
    h.finish();
}

TEST_CASE("shutdown: exiting after an approval confirms, exiting without one is an exit",
          "[shutdown][pg]") {
    Home h("sd-exit");
    h.ok({"task", "add", "approver's"});
    h.ok({"task", "add", "quitter's"});
    auto ready_approver = h.env.dir() / "approver-ready";
    auto ready_quitter = h.env.dir() / "quitter-ready";
    h.spawn_script("approver", "\"$TEAM_BIN\" task claim 1 >/dev/null && touch " +
                                   sq(ready_approver) + "; " + await_request() +
                                   "\"$TEAM_BIN\" shutdown approve >/dev/null && exit 0; exit 9");
    h.spawn_script("quitter", "\"$TEAM_BIN\" task claim 2 >/dev/null && touch " +
                                  sq(ready_quitter) + "; " + await_request() + "exit 0");
    REQUIRE(eventually([&] { return fs::exists(ready_approver) && fs::exists(ready_quitter); }));

    SECTION("approve, then exit 0: confirmed") {
        auto r = h.json_run({"kill-agent", "approver", "--wait", "--timeout", "20s"});
        INFO("kill-agent stdout: " << r.out << " stderr: " << r.err);
        REQUIRE(r.exit_code == 0);
        auto result = r.json();
        CHECK(result["success"] == true);
        CHECK(result["phase"] == "confirmed");
        CHECK(result["exitReason"] == "confirmed");
        CHECK(result["reassignedTasks"] == Json{"1"});
        auto a = h.agent("approver");
        CHECK(a["status"] == "terminated");
        CHECK(a["exitReason"] == "confirmed");
        CHECK(a["exitCode"] == 0);
        auto status = h.request("approver");
        CHECK(status["phase"] == "confirmed");
        CHECK(status["respondedAt"].is_string());
        CHECK(status["confirmedAt"].is_string());
        CHECK(status["closedAt"].is_string());
        std::vector<std::string> types;
        for (const auto& m : h.inbox()) types.push_back(m["type"]);
        CHECK(types == std::vector<std::string>{"shutdown_approved", "shutdown_confirmed"});
        CHECK(h.shutdown_trail() ==
              std::vector<std::string>{"shutdown_requested by leader@sd-exit",
                                       "shutdown_approved by approver@sd-exit",
                                       "shutdown_confirmed by approver@sd-exit"});
        CHECK(h.task("1")["status"] == "pending");
        CHECK(h.task("1")["warning"] == warning_for("approver"));
        // The other agent is untouched.
        CHECK(h.agent("quitter")["status"] == "active");
    }

    SECTION("exit 0 without approving: exited, the request closed as it stood") {
        auto result = h.ok({"kill-agent", "quitter"});
        CHECK(result["phase"] == "requested");
        std::string request_id = result["requestId"];
        auto a = h.wait_terminated("quitter");
        CHECK(a["exitReason"] == "exited");
        CHECK(a["exitCode"] == 0);
        CHECK(a["signal"].is_null());
        auto status = h.request("quitter");
        CHECK(status["requestId"] == request_id);
        CHECK(status["phase"] == "requested");
        CHECK(status["closedAt"].is_string());
        CHECK(status["confirmedAt"].is_null());
        CHECK(status["reassignedTasks"] == Json{"2"});
        // Not a confirmation: no shutdown_confirmed, in the inbox or in the activity log.
        CHECK(h.inbox() == Json::array());
        CHECK(h.activity("shutdown_confirmed") == Json::array());
        auto exited = h.activity("agent_exited");
        REQUIRE(exited.size() == 1);
        CHECK(exited[0]["details"]["agentId"] == "quitter@sd-exit");
        CHECK(exited[0]["details"]["requestId"] == request_id);
        CHECK(h.task("2")["status"] == "pending");
        CHECK(h.task("2")["warning"] == warning_for("quitter"));
        // Nothing is open any more.
        CHECK(h.ok({"shutdown", "status"}) == Json::array());
        CHECK(h.agent("approver")["status"] == "active");
    }

    // The other one, by force, so that nothing is left.
    for (const char* name : {"approver", "quitter"}) {
        if (h.agent(name)["status"] != "terminated") {
            CHECK(h.ok({"kill-agent", name, "--force", "--grace", "1s"})["success"] == true);
        }
    }
    h.check_nothing_left();
    h.finish();
}

TEST_CASE("shutdown: kill-agent --wait --timeout on an agent that never answers exits 124",
          "[shutdown]") {
    Home h("sd-timeout");
    h.spawn("silent", {"sleep", "1000"});
    auto started = Steady::now();
    auto r = h.json_run({"kill-agent", "silent", "--wait", "--timeout", "300ms"});
    auto took = std::chrono::duration_cast<Ms>(Steady::now() - started);
    INFO("kill-agent stdout: " << r.out << " stderr: " << r.err);
    CHECK(r.exit_code == 124);
    auto result = r.json();
    CHECK(result["success"] == false);
    CHECK(result["method"] == "graceful");
    CHECK(result["phase"] == "requested");
    CHECK(result["requestId"].is_string());
    REQUIRE(result["error"].is_string());
    CHECK_THAT(result["error"].get<std::string>(), Catch::Contains("timed out"));
    CHECK(took >= Ms(300));
    CHECK(took < Ms(bound(5000)));

    // The request stands: still shutting down, the request open.
    CHECK(h.agent("silent")["status"] == "shutting_down");
    auto status = h.request("silent");
    CHECK(status["phase"] == "requested");
    CHECK(status["closedAt"].is_null());
    auto open = h.ok({"shutdown", "status"});
    REQUIRE(open.size() == 1);
    CHECK(open[0]["requestId"] == result["requestId"]);

    auto team_status = h.ok({"status"});
    REQUIRE(team_status["shutdownRequests"].size() == 1);
    CHECK(team_status["shutdownRequests"][0]["requestId"] == result["requestId"]);

    // --timeout alone implies --wait; in human form the timeout is the error of SPEC 1.4.
    h.spawn("mute", {"sleep", "1000"});
    auto human = h.run({"kill-agent", "mute", "--timeout", "200ms"});
    CHECK(human.exit_code == 124);
    CHECK(human.out.empty());
    CHECK_THAT(human.err, Catch::StartsWith("team: error: ") && Catch::Contains("timed out"));
    CHECK(h.agent("mute")["status"] == "shutting_down");

    // A second graceful kill is refused with a hint to use --force; nothing changes.
    check_refused(h, {"kill-agent", "silent"}, 4, {}, "--force");

    for (const char* name : {"silent", "mute"}) {
        auto forced = h.ok({"kill-agent", name, "--force", "--grace", "1s"});
        CHECK(forced["phase"] == "force_killed");
        auto a = h.agent(name);
        CHECK(a["status"] == "terminated");
        CHECK(a["exitReason"] == "force_killed");
    }
    // Both requests are closed: the graceful one ended with the force.
    CHECK(h.ok({"shutdown", "status"}) == Json::array());
    h.check_nothing_left();
    h.finish();
}

TEST_CASE("shutdown: approve, reject and confirm errors change nothing", "[shutdown][input]") {
    Home h("sd-errors");
    h.spawn("alpha", {"sleep", "1000"});
    h.spawn("beta", {"sleep", "1000"});
    // A hung agent that ignores SIGTERM, for a request that force has taken over.
    h.spawn_agent("gamma", {{"AGENT_STUCK", "1"}});
    auto alpha = h.as("alpha");
    auto beta = h.as("beta");
    auto gamma = h.as("gamma");

    // No open request.
    check_refused(h, {"shutdown", "approve"}, 3, alpha, "no open shutdown request");
    check_refused(h, {"shutdown", "reject", "--reason", "busy"}, 3, alpha);
    check_refused(h, {"shutdown", "confirm"}, 3, alpha);
    check_refused(h, {"shutdown", "status", "alpha"}, 3, {});
    check_refused(h, {"shutdown", "status", "nobody"}, 3, {}, "not found");
    check_refused(h, {"shutdown", "status", "bad name!"}, 2, {});
    CHECK(h.ok({"shutdown", "status"}) == Json::array());

    auto request = h.ok({"kill-agent", "alpha", "--reason", "tests"});
    std::string rid = request["requestId"];

    // The leader cannot answer for the agent, named request or not.
    check_refused(h, {"shutdown", "approve"}, 4, {}, "leader");
    check_refused(h, {"shutdown", "reject", "--reason", "no"}, 4, {});
    check_refused(h, {"shutdown", "confirm"}, 4, {});
    check_refused(h, {"shutdown", "approve", "--request", rid}, 4, {}, "alpha@sd-errors");
    check_refused(h, {"shutdown", "confirm", "--request", rid}, 4, {});
    // Nor can another agent, with alpha's request id; without one, it has none of its own.
    check_refused(h, {"shutdown", "approve", "--request", rid}, 4, beta, "alpha@sd-errors");
    check_refused(h, {"shutdown", "reject", "--reason", "x", "--request", rid}, 4, beta);
    check_refused(h, {"shutdown", "confirm", "--request", rid}, 4, beta);
    check_refused(h, {"shutdown", "approve"}, 3, beta);

    // Bad request ids are usage errors, whoever asks; an unknown number is not found.
    std::string pwned = (h.env.dir() / "pwned").string();
    const std::vector<std::string> bad_ids{"abc",
                                           "",
                                           " 1",
                                           "1 ",
                                           "-1",
                                           "+1",
                                           "1.0",
                                           "0x1",
                                           "1e3",
                                           "１",
                                           "1; touch " + pwned,
                                           "$(touch " + pwned + ")",
                                           "`touch " + pwned + "`",
                                           "../1",
                                           "1\n2",
                                           "99999999999999999999999"};
    for (const auto& bad : bad_ids) {
        for (const char* verb : {"approve", "confirm"}) {
            check_refused(h, {"shutdown", verb, "--request=" + bad}, 2, alpha);
        }
        check_refused(h, {"shutdown", "reject", "--reason", "r", "--request=" + bad}, 2, alpha);
    }
    check_refused(h, {"shutdown", "approve", "--request", "424242"}, 3, alpha, "not found");

    // A rejection needs a reason.
    check_refused(h, {"shutdown", "reject"}, 2, alpha);
    check_refused(h, {"shutdown", "reject", "--reason", ""}, 2, alpha);
    check_refused(h, {"shutdown", "reject", "--reason", " \t\n "}, 2, alpha);
    check_refused(h, {"shutdown", "reject", "--reason", std::string(64 * 1024 + 1, 'r')}, 2, alpha);

    // Approve once; a second approval and a rejection after it are refused.
    auto approved = h.ok({"shutdown", "approve", "--request", rid}, alpha);
    CHECK(approved["phase"] == "approved");
    CHECK(approved["requestId"] == rid);
    check_refused(h, {"shutdown", "approve"}, 4, alpha, "already approved");
    check_refused(h, {"shutdown", "reject", "--reason", "changed my mind"}, 4, alpha,
                  "cannot be taken back");
    CHECK(h.agent("alpha")["status"] == "shutting_down");

    // A request that force has taken over cannot be answered at all.
    h.ok({"kill-agent", "gamma", "--force-after", "100ms", "--grace", "300s"});
    Json forced;
    REQUIRE(eventually([&] {
        forced = h.request("gamma");
        return forced["forcedAt"].is_string();
    }));
    CHECK(forced["closedAt"].is_null());
    CHECK(h.agent("gamma")["status"] == "shutting_down");  // SIGTERM ignored: SIGKILL later
    check_refused(h, {"shutdown", "confirm"}, 4, gamma, "forced");
    check_refused(h, {"shutdown", "approve"}, 4, gamma, "forced");
    check_refused(h, {"shutdown", "reject", "--reason", "no"}, 4, gamma, "forced");

    // The leader's overview lists every open request, oldest first.
    auto open = h.ok({"shutdown", "status"});
    REQUIRE(open.size() == 2);
    CHECK(open[0]["agentId"] == "alpha@sd-errors");
    CHECK(open[0]["phase"] == "approved");
    CHECK(open[0]["reason"] == "tests");
    CHECK(open[1]["agentId"] == "gamma@sd-errors");
    CHECK(open[1]["forcedAt"].is_string());
    // An agent's own status is its request.
    CHECK(h.ok({"shutdown", "status"}, alpha)["requestId"] == rid);
    auto human = h.run({"shutdown", "status"});
    CHECK(human.exit_code == 0);
    CHECK_THAT(human.out, Catch::Contains("alpha@sd-errors") && Catch::Contains("approved") &&
                              Catch::Contains("gamma@sd-errors"));

    // Confirm by alpha ends it (from outside its pane: returns once it has ended).
    auto done = h.ok({"shutdown", "confirm"}, alpha);
    CHECK(done["phase"] == "confirmed");
    CHECK(done["closedAt"].is_string());
    CHECK(h.agent("alpha")["exitReason"] == "confirmed");
    // Now closed, it cannot be answered again (alpha is no longer a live member: not found).
    check_refused(h, {"shutdown", "confirm", "--request", rid}, 3, alpha);

    for (const char* name : {"beta", "gamma"}) {
        CHECK(h.ok({"kill-agent", name, "--force", "--grace", "500ms"})["phase"] == "force_killed");
    }
    CHECK(h.agent("gamma")["exitReason"] == "force_killed");
    CHECK_FALSE(fs::exists(pwned));
    h.check_nothing_left();
    h.finish();
}

TEST_CASE("shutdown: a --force-after deadline still holds after a rejection", "[shutdown][pg]") {
    Home h("sd-reject-deadline");
    h.spawn_agent("busy", {{"AGENT_WORK", "60"}, {"AGENT_POLL", "0.2"}});
    h.ok({"task", "add", "long work"});
    REQUIRE(eventually([&] { return h.task("1")["owner"] == "busy"; }, bound(8000)));

    // The deadline must leave the agent time to reject first, and this test time to look at
    // the rejection: a team process under ASan on a loaded machine can take seconds, and one on
    // PostgreSQL pays a connection (about 14 ms here) per command.
    bool slow = kSanitized || team::test::test_pg_dir().has_value();
    auto r = h.json_run({"kill-agent", "busy", "--force-after", slow ? "8s" : "1s", "--grace",
                         "500ms", "--wait", "--timeout", "20s"});
    INFO("kill-agent stdout: " << r.out << " stderr: " << r.err);
    CHECK(r.exit_code == 4);
    CHECK(r.json()["phase"] == "rejected");
    auto status = h.request("busy");
    CHECK(status["phase"] == "rejected");
    CHECK(status["forceAt"].is_string());
    // Rejected, it is active again until the deadline, then force-killed by its supervisor.
    auto a = h.wait_terminated("busy", bound(10000));
    CHECK(a["exitReason"] == "force_killed");
    status = h.request("busy");
    CHECK(status["phase"] == "force_killed");
    CHECK(status["rejectReason"] == "busy with task 1; ask again when it is done");
    CHECK(status["forcedAt"].is_string());
    CHECK(status["closedAt"].is_string());
    CHECK(status["reassignedTasks"] == Json{"1"});
    CHECK(h.task("1")["status"] == "pending");
    CHECK(h.task("1")["warning"] == warning_for("busy"));
    CHECK(Home::of_type(h.inbox(), "shutdown_confirmed").empty());
    h.check_nothing_left();
    h.finish();
}

// Issue 24: a graceful stop reaches an agent that does not read its inbox unasked. The agent
// here reads one line from its terminal, as a coding agent idle at its prompt does, keeps it,
// and looks at its inbox at that moment: the request must already be there.
TEST_CASE("shutdown: kill-agent --notify types a notice into the pane after the request is stored",
          "[shutdown][notify]") {
    Home h("sd-notify");
    auto out = h.env.dir() / "typed";
    std::string script = "IFS= read -r line; \"$TEAM_BIN\" inbox --unread --json > " +
                         sq(out.string() + ".inbox") + "; printf '%s\\n' \"$line\" > " +
                         sq(out.string()) + "; exec sleep 1000";
    h.spawn_script("reader", script);
    auto r = h.ok({"kill-agent", "reader", "--notify"});
    CHECK(r["phase"] == "requested");
    CHECK(r["notified"] == true);
    REQUIRE(eventually([&] { return fs::exists(out) && fs::file_size(out) > 0; }));
    std::string typed = team::test::slurp(out);
    CHECK_THAT(typed, Catch::StartsWith("[team] shutdown requested by " + h.id("leader")));
    CHECK_THAT(typed, Catch::Contains("(request " + r["requestId"].get<std::string>() + ")"));
    CHECK_THAT(typed, Catch::Contains("inbox_read"));
    auto inbox = Json::parse(team::test::slurp(out.string() + ".inbox"));
    REQUIRE(inbox.size() == 1);
    CHECK(inbox[0]["type"] == "shutdown_request");
    CHECK(inbox[0]["data"]["requestId"] == r["requestId"]);

    // The reason never reaches the terminal: only the fixed notice is typed.
    h.spawn_script("second", script);
    auto hostile = h.ok({"kill-agent", "second", "--notify", "--reason", "$(touch /tmp/x); rm"});
    CHECK(hostile["notified"] == true);
    REQUIRE(eventually([&] {
        return fs::exists(out) &&
               team::test::slurp(out).find(hostile["requestId"].get<std::string>() + ")") !=
                   std::string::npos;
    }));
    CHECK(team::test::slurp(out).find("touch") == std::string::npos);

    // Without --notify an agent of no preset gets nothing typed; --notify with --no-notify is
    // refused, nothing changed.
    h.spawn("quiet", {"sleep", "1000"});
    check_refused(h, {"kill-agent", "quiet", "--notify", "--no-notify"}, 2, {}, "--no-notify");
    auto plain = h.ok({"kill-agent", "quiet"});
    CHECK(!plain.contains("notified"));
    for (const char* name : {"reader", "second", "quiet"}) {
        h.ok({"kill-agent", name, "--force", "--grace", "1s"});
    }
    h.check_nothing_left();
    h.finish();
}

TEST_CASE("shutdown: a preset's agent gets the notice without --notify, and --no-notify holds",
          "[shutdown][notify]") {
    Home h("sd-notify-preset");
    // The preset's flags follow the program: a script that takes them and reads its terminal.
    auto out = h.env.dir() / "typed";
    auto program = h.env.dir() / "fake-claude";
    {
        std::ofstream f(program);
        f << "#!/bin/sh\nIFS= read -r line; printf '%s\\n' \"$line\" >> " << sq(out.string())
          << "; exec sleep 1000\n";
    }
    fs::permissions(program, fs::perms::owner_all);
    for (const char* name : {"pre", "hushed"}) {
        auto doc = h.ok(
            {"spawn", name, "--env", h.mark.entry(), "--preset", "claude", "--", program.string()});
        REQUIRE(doc["pid"].is_number_integer());
    }
    auto r = h.ok({"kill-agent", "pre"});
    CHECK(r["notified"] == true);
    REQUIRE(eventually([&] { return fs::exists(out) && fs::file_size(out) > 0; }));
    CHECK_THAT(team::test::slurp(out), Catch::StartsWith("[team] shutdown requested"));

    auto hushed = h.ok({"kill-agent", "hushed", "--no-notify"});
    CHECK(!hushed.contains("notified"));
    // teardown notices every preset agent it asks: only 'hushed' is still live and it already
    // has its request, so nothing more is typed; the file holds the one notice.
    h.ok({"teardown", "--grace", "300ms"});
    CHECK(team::test::slurp(out).find("request " + hushed["requestId"].get<std::string>()) ==
          std::string::npos);
    h.check_nothing_left();
    h.finish();
}

TEST_CASE("shutdown: kill-agent --wait waits on a request already pending", "[shutdown][notify]") {
    Home h("sd-pending");
    h.spawn("later", {"sleep", "1000"});
    auto first = h.ok({"kill-agent", "later"});
    REQUIRE(first["phase"] == "requested");
    // Without --wait a second graceful kill is still refused; with it, it waits on the request.
    check_refused(h, {"kill-agent", "later"}, 4, {}, "--wait");
    auto timed = h.json_run({"kill-agent", "later", "--wait", "--timeout", "200ms"});
    CHECK(timed.exit_code == 124);
    CHECK(timed.json()["requestId"] == first["requestId"]);
    CHECK(timed.json()["phase"] == "requested");
    CHECK(h.requests_for("later") == 1);  // no second request

    auto waiter =
        h.env.start({"kill-agent", "later", "--wait", "--timeout", "20s", "--json"}, h.extra());
    REQUIRE(eventually([&] { return team::test::watching(waiter.pid()); }));
    h.ok({"shutdown", "confirm"}, h.as("later"));
    auto r = waiter.wait();
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    auto doc = Json::parse(r.out);
    CHECK(doc["requestId"] == first["requestId"]);
    CHECK(doc["phase"] == "confirmed");
    CHECK(doc["exitReason"] == "confirmed");
    CHECK(h.agent("later")["status"] == "terminated");
    h.check_nothing_left();
    h.finish();
}
