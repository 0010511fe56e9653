// team kill-agent --force, its refusals and its races (SPEC 7, 7.2, 6 reassignment, 1.4 exit
// codes) on the real binary and real tmux, each test on its own temporary home with its own
// private tmux server.
//
// Every agent a test spawns gets a marker of its own (TEAM_TEST_MARK=<unique> through --env,
// which replaces the home's marker in its environment), so that right after `kill-agent --force`
// returns, a scan of /proc proves that no process of that agent is left (SPEC 7.2: "After
// kill-agent --force returns success, no process of that agent is left"), while the home's
// marker still covers the tmux server and the pane supervisors. Every test ends with no pane
// and no process of either kind left.
//
// Each test uses a team name of its own (reconciling a lost agent kills processes by their
// TEAM_AGENT_ID, so tests that run in parallel must not share agent ids).
#include <SQLiteCpp/SQLiteCpp.h>
#include <signal.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <set>

#include "proc/process_table.hpp"
#include "tests/support/agents_home.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/marker.hpp"
#include "tests/support/process.hpp"

using team::test::alive;
using team::test::Child;
using team::test::eventually;
using team::test::Marker;
using team::test::RunResult;
using team::test::slurp;
using team::test::sq;
using team::test::warning_for;
using Json = nlohmann::json;
using Ms = std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;
namespace fs = std::filesystem;

namespace {

// The command line of a process, its arguments joined by spaces ("" when it is gone).
std::string cmdline_of(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::replace(text.begin(), text.end(), '\0', ' ');
    while (!text.empty() && text.back() == ' ') text.pop_back();
    return text;
}

// The live processes carrying the marker, by command line.
std::map<std::string, pid_t> processes_of(const Marker& mark) {
    std::map<std::string, pid_t> out;
    for (pid_t pid : mark.alive()) out[cmdline_of(pid)] = pid;
    return out;
}

// One test's home (see AgentsHome), with a marker per agent, and helpers of its own.
class Home : public team::test::AgentsHome {
  public:
    using AgentsHome::activity;
    using AgentsHome::AgentsHome;

    // `team spawn NAME --json --env <the agent's own marker> OPTIONS -- COMMAND` (not
    // AgentsHome::spawn: every agent here carries a marker of its own, not the home's).
    Json spawn(const std::string& name, const std::vector<std::string>& command,
               const std::vector<std::string>& options = {}) {
        auto& m = agent_marks_[name];
        REQUIRE(!m);  // one marker per agent: tests use a new name for each agent
        m = std::make_unique<Marker>();
        std::vector<std::string> args{"spawn", name, "--json", "--env", m->entry()};
        args.insert(args.end(), options.begin(), options.end());
        args.push_back("--");
        args.insert(args.end(), command.begin(), command.end());
        auto r = run(args);
        INFO("spawn " << name << " stdout: " << r.out << " stderr: " << r.err);
        REQUIRE(r.exit_code == 0);
        auto doc = r.json();
        REQUIRE(doc["agentId"] == id(name));
        REQUIRE(doc["paneId"].is_string());
        REQUIRE(doc["pid"].is_number_integer());
        // Its process carries its own marker (not the home's): the marker scans below mean
        // something.
        auto pid = static_cast<pid_t>(doc["pid"].get<long>());
        REQUIRE(eventually([&] {
            auto pids = m->alive();
            return std::find(pids.begin(), pids.end(), pid) != pids.end();
        }));
        return doc;
    }

    const Marker& agent_mark(const std::string& name) const { return *agent_marks_.at(name); }

    RunResult kill(const std::string& name, const std::vector<std::string>& options = {},
                   const std::string& input = "") const {
        std::vector<std::string> args{"kill-agent", name, "--json"};
        args.insert(args.end(), options.begin(), options.end());
        return env.start(args, extra(), input).wait();
    }

    // A task added (by the leader) and, with `owner`, claimed by it (or completed).
    std::string add_task(const std::string& subject, const std::string& owner = "",
                         const std::string& state = "pending") {
        std::vector<std::string> args{"task", "add", subject};
        if (!owner.empty() && state == "pending") args.insert(args.end(), {"--owner", owner});
        std::string id = ok(args)["id"];
        if (!owner.empty() && state != "pending") {
            ok({"task", "claim", id, "--as", owner});
            if (state == "completed") ok({"task", "done", id, "--as", owner});
            if (state == "deleted") ok({"task", "update", id, "--status", "deleted"});
        }
        REQUIRE(task(id)["status"] == (state == "pending" && owner.empty() ? "pending" : state));
        return id;
    }

    // The activity entries of that type about that agent (details.agentId, or details.from for
    // tasks_reassigned), oldest first.
    std::vector<Json> activity(const std::string& type, const std::string& name) const {
        std::vector<Json> out;
        std::string agent_id = id(name);
        for (const auto& e : activity(type)) {
            const auto& d = e["details"];
            if ((d.contains("agentId") && d["agentId"] == agent_id) ||
                (d.contains("from") && d["from"] == agent_id)) {
                out.push_back(e);
            }
        }
        return out;
    }

    bool server_gone() const {
        return eventually([&] { return !server_running(); });
    }

    // What a kill-agent that is refused must leave exactly as it was: every row behind what
    // the user sees and, unless `rows_only`, what the user sees (agents, tasks, every inbox, the
    // status with its open requests).
    std::string snapshot(bool rows_only = false) const {
        std::string out = rows(
            {"SELECT * FROM agents ORDER BY id", "SELECT * FROM tasks ORDER BY team_id, id",
             "SELECT * FROM shutdown_requests ORDER BY id", "SELECT * FROM messages ORDER BY id",
             "SELECT id, actor, type, details FROM activity WHERE type NOT IN ('agent_state', "
             "'worktree_state') ORDER BY id"});
        if (rows_only) return out;
        for (const auto& list : {std::vector<std::string>{"agents", "--all", "--json"},
                                 std::vector<std::string>{"task", "list", "--json"},
                                 std::vector<std::string>{"status", "--json"}}) {
            auto r = run(list);
            // Without what the agents' watchers move in the background: their usage samples and
            // their activity (a still screen becomes idle after idle-after, whatever command runs).
            auto doc = team::test::steady(r.json());
            auto drop_activity = [](nlohmann::json& rows) {
                if (!rows.is_array()) return;
                for (auto& row : rows) {
                    if (row.is_object()) row.erase("activity");
                }
            };
            drop_activity(doc);
            if (doc.is_object() && doc.contains("agents")) drop_activity(doc["agents"]);
            out += doc.dump() + "\n";
        }
        for (const auto& a : agents()) {
            out += run({"inbox", "--agent", a["name"], "--json"}).out + "\n";
        }
        out += run({"inbox", "--json"}).out + "\n";  // the leader's
        return out;
    }

    // The end of a test: nothing of any agent, no pane, no server, no supervisor is left.
    void finish_all() {
        for (const auto& [name, m] : agent_marks_) {
            INFO("agent " << name);
            CHECK(m->none_alive_within(3000));
        }
        CHECK(panes().empty());
        finish();
    }

  private:
    std::map<std::string, std::unique_ptr<Marker>> agent_marks_;
};

// Checks everything SPEC 7.2 promises of a force-kill that returned `r`: the result, the
// record, no process and no pane left, the activity entry. Returns the result document.
Json check_force_killed(const Home& h, const std::string& name, const Json& spawned,
                        const RunResult& r, const std::vector<std::string>& reassigned = {}) {
    INFO("kill-agent " << name << " -> " << r.exit_code << " stdout: " << r.out
                       << " stderr: " << r.err);
    // No process of the agent is left the moment the command returns: no waiting here.
    auto left = processes_of(h.agent_mark(name));
    for (const auto& [cmd, pid] : left) UNSCOPED_INFO("left: " << pid << " " << cmd);
    CHECK(left.empty());
    CHECK(r.exit_code == 0);
    auto doc = r.json();
    CHECK(doc["success"] == true);
    CHECK(doc["agentId"] == name + "@" + h.team());
    CHECK(doc["method"] == "force");
    CHECK(doc["phase"] == "force_killed");
    CHECK(doc["reassignedTasks"] == Json(reassigned));
    CHECK(doc["requestId"].is_string());
    CHECK_FALSE(doc["requestId"].get<std::string>().empty());
    CHECK_FALSE(doc.contains("error"));

    // Its pane is gone when the command returns (its supervisor, or the command, removed it).
    CHECK(h.panes().count(spawned["paneId"].get<std::string>()) == 0);

    auto a = h.agent(name);
    CHECK(a["status"] == "terminated");
    CHECK(a["exitReason"] == "force_killed");
    CHECK(a["terminatedAt"].is_string());
    CHECK(a["pid"] == spawned["pid"]);

    auto killed = h.activity("agent_force_killed", name);
    REQUIRE(killed.size() == 1);
    CHECK(killed[0]["actor"] == "leader@" + h.team());
    CHECK(killed[0]["details"]["requestId"] == doc["requestId"]);
    CHECK(killed[0]["details"]["reassignedTasks"] == Json(reassigned));
    // One end, recorded once.
    CHECK(h.activity("agent_exited", name).empty());
    CHECK(h.activity("shutdown_confirmed", name).empty());

    // The request behind it is closed, as force_killed.
    auto request = h.ok({"shutdown", "status", name});
    CHECK(request["requestId"] == doc["requestId"]);
    CHECK(request["method"] == "force");
    CHECK(request["phase"] == "force_killed");
    CHECK(request["closedAt"].is_string());
    CHECK(request["reassignedTasks"] == Json(reassigned));
    return doc;
}

// Runs `team kill-agent ARGS --json` (input on stdin), expects exit `code` with the result shape
// of SPEC 7 carrying success false, error and code, and nothing changed.
void check_kill_refused(const Home& h, const std::vector<std::string>& args, int code,
                        const std::string& message = "", const std::string& input = "",
                        bool rows_only = false) {
    auto before = h.snapshot(rows_only);
    // --json first: some of the arguments come after a "--".
    std::vector<std::string> full{"kill-agent", "--json"};
    full.insert(full.end(), args.begin(), args.end());
    auto r = h.env.start(full, h.extra(), input).wait();
    std::string shown;
    for (const auto& a : full) shown += (a.size() > 40 ? a.substr(0, 40) + "..." : a) + " ";
    INFO("team " << shown << "-> " << r.exit_code << " stdout: " << r.out.substr(0, 2000)
                 << " stderr: " << r.err.substr(0, 2000));
    CHECK(r.exit_code == code);
    auto doc = Json::parse(r.out, nullptr, false);
    REQUIRE(doc.is_object());
    CHECK(doc["success"] == false);
    CHECK(doc["code"] == team::test::error_code_name(code));
    REQUIRE(doc["error"].is_string());
    if (!message.empty()) CHECK_THAT(doc["error"].get<std::string>(), Catch::Contains(message));
    // The result keeps its shape (SPEC 1.4).
    CHECK(doc.contains("method"));
    CHECK(doc["phase"].is_null());
    CHECK(doc["reassignedTasks"] == Json::array());
    CHECK(doc["requestId"].is_null());
    CHECK(r.err.empty());
    CHECK(h.snapshot(rows_only) == before);
}

// The same for the many inputs of one kind: the rows only (what the user sees is built from
// them, and the whole snapshot is checked by the test of SPEC 7.1's refusals).
void check_kill_usage(const Home& h, const std::vector<std::string>& args,
                      const std::string& message = "", const std::string& input = "") {
    check_kill_refused(h, args, 2, message, input, true);
}

}  // namespace

TEST_CASE("kill-agent --force ends an agent that obeys SIGTERM and frees its colour",
          "[kill][sanitize]") {
    Home h("kl-obey");
    auto w = h.spawn("w", {"sleep", "1000"});
    auto other = h.spawn("other", {"sleep", "1000"});
    REQUIRE(h.agent("w")["status"] == "active");

    auto r = h.kill("w", {"--force"});
    check_force_killed(h, "w", w, r);
    // The other agent, its process and its pane are untouched.
    CHECK(h.agent("other")["status"] == "active");
    CHECK(alive(static_cast<pid_t>(other["pid"].get<long>())));
    CHECK(h.panes() == std::set<std::string>{other["paneId"].get<std::string>()});

    // Its colour went back to the pool: the next spawn takes it, as the first free one.
    auto next = h.spawn("next", {"sleep", "1000"});
    CHECK(next["color"] == w["color"]);

    // Human output says what happened.
    auto human = h.run({"kill-agent", "next", "--force"});
    CHECK(human.exit_code == 0);
    CHECK_THAT(human.out, Catch::Contains("force-killed next@kl-obey"));
    CHECK(h.agent_mark("next").alive().empty());
    CHECK(h.agent("next")["exitReason"] == "force_killed");
    CHECK(h.run({"kill-agent", "other", "--force"}).exit_code == 0);
    CHECK(h.server_gone());
    h.finish_all();
}

TEST_CASE("kill-agent --force --grace 1s ends an agent that ignores SIGTERM, after the grace",
          "[kill][sanitize]") {
    Home h("kl-ignore");
    auto ready = h.env.dir() / "ready";
    auto w = h.spawn("w", {"sh", "-c", "trap '' TERM; touch " + sq(ready) + "; exec sleep 1000"});
    REQUIRE(eventually([&] { return fs::exists(ready); }));  // the trap is set
    auto start = Steady::now();
    auto r = h.kill("w", {"--force", "--grace", "1s"});
    auto took = Steady::now() - start;
    check_force_killed(h, "w", w, r);
    // SIGTERM was ignored: only SIGKILL, after the grace, ended it.
    CHECK(took >= Ms(1000));
    CHECK(h.server_gone());
    h.finish_all();
}

TEST_CASE("kill-agent --force ends an interactive bash", "[kill]") {
    Home h("kl-bash");
    auto w = h.spawn("w", {"bash", "--norc", "--noprofile", "-i"});
    // An interactive shell ignores SIGTERM: wait until it runs interactively (prompt typed).
    auto pid = static_cast<pid_t>(w["pid"].get<long>());
    REQUIRE(eventually([&] { return cmdline_of(pid).rfind("bash", 0) == 0; }));
    CHECK(h.run({"prompt", "w", "sleep 1000"}).exit_code == 0);
    // The command typed runs as a job of the shell: a second process of the agent.
    REQUIRE(eventually([&] { return processes_of(h.agent_mark("w")).count("sleep 1000") == 1; }));
    auto start = Steady::now();
    auto r = h.kill("w", {"--force", "--grace", "1s"});
    auto took = Steady::now() - start;
    check_force_killed(h, "w", w, r);
    CHECK(took >= Ms(1000));  // bash ignored SIGTERM; SIGKILL ended it
    CHECK(h.server_gone());
    h.finish_all();
}

TEST_CASE("kill-agent --force ends descendants that left with setsid and double forks", "[kill]") {
    Home h("kl-tree");
    auto bystander = h.spawn("bystander", {"sleep", "1000"});
    auto w = h.spawn("w", {"sh", "-c", "setsid sleep 1001 & (sleep 1002 &); sleep 1003"});
    auto pid = static_cast<pid_t>(w["pid"].get<long>());
    std::map<std::string, pid_t> tree;
    REQUIRE(eventually([&] {
        tree = processes_of(h.agent_mark("w"));
        return tree.count("sleep 1001") && tree.count("sleep 1002") && tree.count("sleep 1003");
    }));
    // The tree is what it claims to be: one left the session, one lost its parent.
    auto agent_info = team::proc::read_process(pid);
    auto setsid_info = team::proc::read_process(tree["sleep 1001"]);
    auto orphan_info = team::proc::read_process(tree["sleep 1002"]);
    REQUIRE(agent_info);
    REQUIRE(setsid_info);
    REQUIRE(orphan_info);
    CHECK(setsid_info->sid != agent_info->sid);
    CHECK(setsid_info->pgid != agent_info->pgid);
    CHECK(orphan_info->ppid != pid);

    auto r = h.kill("w", {"--force", "--grace", "2s"});
    check_force_killed(h, "w", w, r);
    for (const auto& [cmd, p] : tree) CHECK_FALSE(alive(p));
    // The other agent is untouched.
    CHECK(processes_of(h.agent_mark("bystander")).count("sleep 1000") == 1);
    CHECK(h.panes() == std::set<std::string>{bystander["paneId"].get<std::string>()});
    CHECK(h.agent("bystander")["status"] == "active");
    check_force_killed(h, "bystander", bystander, h.kill("bystander", {"--force"}));
    CHECK(h.server_gone());
    h.finish_all();
}

TEST_CASE("kill-agent --force wakes a stopped agent so that it can act on SIGTERM",
          "[kill][sanitize]") {
    Home h("kl-stopped");
    auto got = h.env.dir() / "got-term";
    auto ready = h.env.dir() / "ready";
    auto w = h.spawn("w", {"sh", "-c",
                           "trap 'echo term > " + sq(got) + "; exit 0' TERM; touch " + sq(ready) +
                               "; while :; do sleep 0.1; done"});
    REQUIRE(eventually([&] { return fs::exists(ready); }));
    auto pid = static_cast<pid_t>(w["pid"].get<long>());
    // The agent stops. Only its own process: a group-wide SIGSTOP can catch a child of sh
    // between vfork and exec, and leave sh waiting for it in state D instead of stopped.
    REQUIRE(::kill(pid, SIGSTOP) == 0);
    bool stopped = eventually([&] {
        auto p = team::proc::read_process(pid);
        return p && p->state == 'T';
    });
    // Should it not stop, what it is instead, for the log.
    INFO("its /proc stat: " << slurp("/proc/" + std::to_string(pid) + "/stat"));
    REQUIRE(stopped);
    auto r = h.kill("w", {"--force", "--grace", "30s"});
    check_force_killed(h, "w", w, r);
    // It ran its TERM trap: SIGCONT came with SIGTERM (SIGKILL would have ended it after 30 s,
    // without the trap).
    CHECK(slurp(got) == "term\n");
    CHECK(h.server_gone());
    h.finish_all();
}

TEST_CASE("kill-agent --force ends an agent whose pane was killed from outside",
          "[kill][sanitize]") {
    Home h("kl-nopane");
    auto ready = h.env.dir() / "ready";
    auto w =
        h.spawn("w", {"sh", "-c", "trap '' HUP TERM; touch " + sq(ready) + "; exec sleep 1000"});
    REQUIRE(eventually([&] { return fs::exists(ready); }));
    auto pid = static_cast<pid_t>(w["pid"].get<long>());
    REQUIRE(h.env.tmux({"kill-pane", "-t", w["paneId"]}).exit_code == 0);
    CHECK(h.panes().empty());
    // The pane is gone, its agent is not: it ignores the hangup.
    CHECK(alive(pid));
    auto r = h.kill("w", {"--force", "--grace", "1s"});
    check_force_killed(h, "w", w, r);
    CHECK(h.server_gone());
    h.finish_all();
}

TEST_CASE("kill-agent --force hands back in_progress and pending tasks, not completed ones",
          "[kill][pg]") {
    Home h("kl-tasks");
    auto w = h.spawn("w", {"sleep", "1000"});
    auto other = h.spawn("other", {"sleep", "1000"});
    auto pending = h.add_task("owned, pending", "w");
    auto working = h.add_task("owned, in progress", "w", "in_progress");
    auto done = h.add_task("owned, completed", "w", "completed");
    auto deleted = h.add_task("owned, deleted", "w", "deleted");
    auto others = h.add_task("another's", "other", "in_progress");
    auto free_task = h.add_task("nobody's");
    REQUIRE(h.task(working)["claimedAt"].is_string());
    std::map<std::string, Json> untouched;
    for (const auto& id : {done, deleted, others, free_task}) untouched[id] = h.task(id);

    auto r = h.kill("w", {"--force"});
    check_force_killed(h, "w", w, r, {pending, working});
    for (const auto& id : {pending, working}) {
        auto t = h.task(id);
        INFO("task " << id << ": " << t.dump());
        CHECK(t["status"] == "pending");
        CHECK(t["owner"].is_null());
        CHECK(t["claimedAt"].is_null());
        CHECK(t["warning"] == warning_for("w"));
    }
    for (const auto& [id, before] : untouched) CHECK(h.task(id) == before);
    auto moved = h.activity("tasks_reassigned", "w");
    REQUIRE(moved.size() == 1);
    CHECK(moved[0]["details"]["tasks"] == Json{pending, working});
    CHECK_FALSE(moved[0]["details"].contains("to"));
    CHECK(moved[0]["actor"] == "leader@kl-tasks");
    // Back in the pool: anyone may claim them.
    std::vector<std::string> available;
    for (const auto& t : h.ok({"task", "list", "--available"})) available.push_back(t["id"]);
    CHECK(available == std::vector<std::string>{pending, working, free_task});

    check_force_killed(h, "other", other, h.kill("other", {"--force"}), {others});
    CHECK(h.task(others)["warning"] == warning_for("other"));
    CHECK(h.server_gone());
    h.finish_all();
}

TEST_CASE("kill-agent --force --reassign-to gives the unfinished tasks to that member", "[kill]") {
    Home h("kl-reassign");
    auto w = h.spawn("w", {"sleep", "1000"});
    auto heir = h.spawn("heir", {"sleep", "1000"});
    auto pending = h.add_task("owned, pending", "w");
    auto working = h.add_task("owned, in progress", "w", "in_progress");
    auto done = h.add_task("owned, completed", "w", "completed");
    auto done_before = h.task(done);

    auto r = h.kill("w", {"--force", "--reassign-to", "heir", "--reason", "moving on"});
    check_force_killed(h, "w", w, r, {pending, working});
    for (const auto& id : {pending, working}) {
        auto t = h.task(id);
        INFO("task " << id << ": " << t.dump());
        CHECK(t["status"] == "pending");
        CHECK(t["owner"] == "heir");
        CHECK(t["claimedAt"].is_null());
        CHECK(t["warning"] == warning_for("w"));
    }
    CHECK(h.task(done) == done_before);
    auto moved = h.activity("tasks_reassigned", "w");
    REQUIRE(moved.size() == 1);
    CHECK(moved[0]["details"]["tasks"] == Json{pending, working});
    CHECK(moved[0]["details"]["to"] == "heir");
    CHECK(h.ok({"shutdown", "status", "w"})["reassignTo"] == "heir");
    CHECK(h.ok({"shutdown", "status", "w"})["reason"] == "moving on");
    // Not in the pool: they are the heir's, who can claim them.
    CHECK(h.ok({"task", "list", "--available"}).empty());
    CHECK(h.ok({"task", "claim", working, "--as", "heir"})["status"] == "in_progress");

    // The leader can be the heir too.
    auto w2 = h.spawn("w2", {"sleep", "1000"});
    auto third = h.add_task("third", "w2", "in_progress");
    check_force_killed(h, "w2", w2, h.kill("w2", {"--force", "--reassign-to", "leader"}), {third});
    CHECK(h.task(third)["owner"] == "leader");
    CHECK(h.task(third)["status"] == "pending");

    // The heir's own end hands back what it inherited, the one it claimed and the other.
    check_force_killed(h, "heir", heir, h.kill("heir", {"--force"}), {pending, working});
    CHECK(h.task(working)["owner"].is_null());
    CHECK(h.task(pending)["warning"] == warning_for("heir"));
    CHECK(h.server_gone());
    h.finish_all();
}

TEST_CASE("kill-agent refuses what SPEC 7.1 refuses, with its exit code, and changes nothing",
          "[kill][input]") {
    Home h("kl-refuse");
    h.spawn("worker", {"sleep", "1000"});
    h.spawn("busy", {"sleep", "1000"});
    h.spawn("gone", {"sleep", "1000"});
    h.add_task("worker's", "worker", "in_progress");
    h.add_task("busy's", "busy");
    // `gone` has ended; `busy` is asked to shut down and never answers.
    REQUIRE(h.kill("gone", {"--force"}).exit_code == 0);
    REQUIRE(h.agent("gone")["status"] == "terminated");
    auto asked = h.kill("busy", {"--reason", "first ask"});
    REQUIRE(asked.exit_code == 0);
    REQUIRE(asked.json()["phase"] == "requested");
    REQUIRE(h.agent("busy")["status"] == "shutting_down");

    // Not the leader.
    check_kill_refused(h, {"busy", "--as", "worker"}, 4, "only the team leader can kill agents");
    check_kill_refused(h, {"worker", "--force", "--as", "busy"}, 4,
                       "only the team leader can kill agents");
    check_kill_refused(h, {"worker", "--as", "worker"}, 4, "only the team leader can kill agents");
    // Unknown agents, with a hint.
    check_kill_refused(h, {"wroker"}, 3, "did you mean 'worker'");
    check_kill_refused(h, {"wroker", "--force"}, 3, "did you mean 'worker'");
    check_kill_refused(h, {"nobody-at-all", "--force"}, 3, "nobody-at-all");
    // The leader itself.
    check_kill_refused(h, {"leader"}, 4, "leader");
    check_kill_refused(h, {"leader", "--force"}, 4, "leader");
    // Already terminated.
    check_kill_refused(h, {"gone"}, 4, "already terminated");
    check_kill_refused(h, {"gone", "--force"}, 4, "already terminated");
    // Already shutting down: only --force goes further.
    check_kill_refused(h, {"busy"}, 4, "--force");
    check_kill_refused(h, {"busy", "--reason", "again", "--force-after", "5s"}, 4, "--force");
    // --reassign-to: unknown, itself, terminated.
    check_kill_refused(h, {"worker", "--force", "--reassign-to", "nobody"}, 3, "nobody");
    check_kill_refused(h, {"worker", "--reassign-to", "wroker"}, 3, "did you mean 'worker'");
    check_kill_refused(h, {"worker", "--force", "--reassign-to", "worker"}, 2);
    check_kill_refused(h, {"worker", "--reassign-to", "worker"}, 2);
    check_kill_refused(h, {"worker", "--force", "--reassign-to", "gone"}, 4, "gone");
    // --force and --force-after contradict each other.
    check_kill_refused(h, {"worker", "--force", "--force-after", "5s"}, 2, "--force-after");

    // Human mode: the error on stderr, with its hint, and the exit code.
    auto human = h.run({"kill-agent", "wroker"});
    CHECK(human.exit_code == 3);
    CHECK(human.out.empty());
    CHECK_THAT(human.err,
               Catch::StartsWith("team: error: ") && Catch::Contains("did you mean 'worker'"));
    auto again = h.run({"kill-agent", "busy"});
    CHECK(again.exit_code == 4);
    CHECK_THAT(again.err, Catch::Contains("--force"));

    // The one that was refused without --force is ended with it; its open request goes too.
    auto busy = h.agent("busy");
    auto r = h.kill("busy", {"--force", "--grace", "1s"});
    REQUIRE(r.exit_code == 0);
    CHECK(r.json()["phase"] == "force_killed");
    CHECK(h.agent("busy")["exitReason"] == "force_killed");
    CHECK(h.agent_mark("busy").alive().empty());
    CHECK(h.ok({"status"})["shutdownRequests"].empty());
    CHECK(h.run({"kill-agent", "worker", "--force"}).exit_code == 0);
    CHECK(h.server_gone());
    h.finish_all();
}

TEST_CASE("kill-agent's bad names, reasons, durations and option mixes are usage errors",
          "[kill][input]") {
    Home h("kl-usage");
    h.spawn("worker", {"sleep", "1000"});
    h.spawn("heir", {"sleep", "1000"});
    h.add_task("worker's", "worker", "in_progress");
    auto pwned = h.env.dir() / "pwned";
    std::string p = pwned.string();
    std::vector<std::string> bad_names{"a b",
                                       "worker;",
                                       "'; touch " + p + "'",
                                       "; touch " + p,
                                       "$(touch " + p + ")",
                                       "`touch " + p + "`",
                                       "\"worker\"",
                                       "'worker'",
                                       "worker\n",
                                       "work\ner",
                                       "wörker",
                                       "日本語",
                                       "🚀",
                                       "_worker",
                                       "worker/..",
                                       "../worker",
                                       "worker\t",
                                       std::string(65, 'w'),
                                       "x\xff"};
    for (const auto& name : bad_names) {
        check_kill_usage(h, {"--", name});
        check_kill_usage(h, {"--force", "--", name});
        check_kill_usage(h, {"worker", "--force", "--reassign-to", name});
        check_kill_usage(h, {"worker", "--reassign-to", name});
    }
    check_kill_usage(h, {"--", ""});

    // Reasons that are not text, or too long: from the argument and from stdin.
    check_kill_usage(h, {"worker", "--reason", "bad \xff utf-8"}, "UTF-8");
    check_kill_usage(h, {"worker", "--force", "--reason", "cut \xe6\x97"}, "UTF-8");
    check_kill_usage(h, {"worker", "--reason", std::string(100 * 1024, 'r')}, "bytes");
    check_kill_usage(h, {"worker", "--force", "--reason", "-"}, "bytes",
                     std::string((1 << 20) + 10, 'r'));
    check_kill_usage(h, {"worker", "--reason", "-"}, "", std::string("nul\0byte", 8));

    // Durations.
    for (const std::string option : {"--grace", "--timeout", "--force-after"}) {
        for (const std::string bad : {"0", "0s", "-1s", "-5", "abc", "5x", "", "1.5.5s", "s", "5 s",
                                      " 5s", "5sec", "1d", "99999h", "0.0001ms", "5S"}) {
            check_kill_usage(h, {"worker", option, bad}, "invalid duration");
            if (option != "--force-after") {
                check_kill_usage(h, {"worker", "--force", option, bad}, "invalid duration");
            }
        }
    }
    CHECK_FALSE(fs::exists(pwned));
    CHECK(h.agent("worker")["status"] == "active");
    CHECK(h.run({"kill-agent", "worker", "--force"}).exit_code == 0);
    CHECK(h.run({"kill-agent", "heir", "--force"}).exit_code == 0);
    CHECK(h.server_gone());
    h.finish_all();
}

TEST_CASE("kill-agent --reassign-to '' is a bad name, not the pool", "[kill][input]") {
    Home h("kl-empty-heir");
    h.spawn("worker", {"sleep", "1000"});
    check_kill_refused(h, {"worker", "--force", "--reassign-to", ""}, 2);
    check_kill_refused(h, {"worker", "--reassign-to", ""}, 2);
    CHECK(h.run({"kill-agent", "worker", "--force"}).exit_code == 0);
    CHECK(h.server_gone());
    h.finish_all();
}

TEST_CASE("kill-agent stores hostile reasons as they are, and runs none of them", "[kill][input]") {
    Home h("kl-reason");
    auto w = h.spawn("w", {"sleep", "1000"});
    auto pwned = h.env.dir() / "pwned";
    std::string p = pwned.string();
    std::string reason = "'; touch " + p + "' $(touch " + p + ") `touch " + p + "` && touch " + p +
                         " \"dq\" \\ ; line one\nline two\t日本語 🚀 #{pane_id} %1";
    auto asked = h.kill("w", {"--reason", reason});
    INFO("stdout: " << asked.out << " stderr: " << asked.err);
    REQUIRE(asked.exit_code == 0);
    auto doc = asked.json();
    CHECK(doc["phase"] == "requested");
    CHECK(doc["method"] == "graceful");
    auto status = h.ok({"shutdown", "status", "w"});
    CHECK(status["reason"] == reason);
    CHECK(status["requestId"] == doc["requestId"]);
    auto inbox = h.ok({"inbox", "--agent", "w", "--type", "shutdown_request"});
    REQUIRE(inbox.size() == 1);
    CHECK(inbox[0]["data"]["reason"] == reason);
    CHECK(inbox[0]["data"]["requestId"] == doc["requestId"]);
    auto requested = h.activity("shutdown_requested", "w");
    REQUIRE(requested.size() == 1);
    CHECK(requested[0]["details"]["reason"] == reason);

    // The same through stdin, for the force that follows.
    std::string long_reason(60 * 1024, 'x');
    auto r = h.kill("w", {"--force", "--reason", "-"}, long_reason + "\n");
    check_force_killed(h, "w", w, r);
    CHECK(h.ok({"shutdown", "status", "w"})["reason"] == long_reason);
    CHECK_FALSE(fs::exists(pwned));
    CHECK(h.server_gone());
    h.finish_all();
}

TEST_CASE("two kill-agents at once on one agent end it once", "[kill]") {
    Home h("kl-race");
    SQLite::Database db((h.env.home() / "team.db").string());
    auto requests_of = [&](const std::string& name) {
        SQLite::Statement select(db, R"sql(
            SELECT r.phase, r.closed_at IS NOT NULL FROM shutdown_requests r
            JOIN agents a ON a.id = r.agent_id WHERE a.name = ? ORDER BY r.id
        )sql");
        select.bind(1, name);
        std::vector<std::pair<std::string, bool>> out;
        while (select.executeStep()) {
            out.emplace_back(select.getColumn(0).getString(), select.getColumn(1).getInt() != 0);
        }
        return out;
    };

    struct Round {
        std::string name;
        std::vector<std::string> command;
        std::vector<std::string> first, second;
    };
    std::vector<Round> rounds;
    for (int i = 0; i < 3; ++i) {
        std::string n = std::to_string(i);
        rounds.push_back({"gf" + n, {"sleep", "1000"}, {"--reason", "stop"}, {"--force"}});
        rounds.push_back({"fg" + n, {"sleep", "1000"}, {"--force"}, {"--reason", "stop"}});
    }
    rounds.push_back({"ff0", {"sleep", "1000"}, {"--force"}, {"--force"}});
    rounds.push_back({"ff1",
                      {"sh", "-c", "trap '' TERM; sleep 1000"},
                      {"--force", "--grace", "1s"},
                      {"--force", "--grace", "1s"}});
    rounds.push_back({"ff2", {"sleep", "1000"}, {"--force"}, {"--force", "--reassign-to", "x"}});

    h.spawn("x", {"sleep", "1000"});
    for (const auto& round : rounds) {
        INFO("round " << round.name);
        auto spawned = h.spawn(round.name, round.command);
        auto task = h.add_task("task of " + round.name, round.name, "in_progress");
        auto args = [&](const std::vector<std::string>& options) {
            std::vector<std::string> a{"kill-agent", round.name, "--json"};
            a.insert(a.end(), options.begin(), options.end());
            return a;
        };
        // Both at once, as two processes.
        Child first = h.env.start(args(round.first), h.extra());
        Child second = h.env.start(args(round.second), h.extra());
        std::vector<std::pair<std::vector<std::string>, RunResult>> results{
            {round.first, first.wait()}, {round.second, second.wait()}};
        int forced_ok = 0;
        for (const auto& [options, r] : results) {
            INFO("options " << Json(options).dump() << " -> " << r.exit_code << " stdout: " << r.out
                            << " stderr: " << r.err);
            bool force = std::find(options.begin(), options.end(), "--force") != options.end();
            auto doc = r.json();
            if (r.exit_code == 0) {
                CHECK(doc["success"] == true);
                if (force) {
                    CHECK(doc["phase"] == "force_killed");
                    CHECK(doc["reassignedTasks"] == Json{task});
                    ++forced_ok;
                } else {
                    CHECK(doc["phase"] == "requested");  // it came first
                }
            } else {
                CHECK(r.exit_code == 4);
                CHECK(doc["success"] == false);
                CHECK_THAT(doc["error"].get<std::string>(), Catch::Contains("already terminated"));
            }
        }
        CHECK(forced_ok == 1);
        // Nothing of it is left, and its end was recorded once.
        CHECK(h.agent_mark(round.name).alive().empty());
        CHECK(h.panes().count(spawned["paneId"].get<std::string>()) == 0);
        auto a = h.agent(round.name);
        CHECK(a["status"] == "terminated");
        CHECK(a["exitReason"] == "force_killed");
        CHECK(h.activity("agent_force_killed", round.name).size() == 1);
        CHECK(h.activity("agent_exited", round.name).empty());
        CHECK(h.activity("shutdown_confirmed", round.name).empty());
        auto moved = h.activity("tasks_reassigned", round.name);
        REQUIRE(moved.size() == 1);
        CHECK(moved[0]["details"]["tasks"] == Json{task});
        CHECK(h.task(task)["status"] == "pending");
        // Every request it had is closed, as force_killed.
        auto requests = requests_of(round.name);
        CHECK_FALSE(requests.empty());
        for (const auto& [phase, closed] : requests) {
            CHECK(phase == "force_killed");
            CHECK(closed);
        }
    }
    CHECK(h.agent("x")["status"] == "active");
    CHECK(h.run({"kill-agent", "x", "--force"}).exit_code == 0);
    CHECK(h.server_gone());
    h.finish_all();
}

TEST_CASE("the last agent force-killed takes the session and the tmux server along", "[kill]") {
    Home h("kl-reap");
    auto a = h.spawn("a", {"sleep", "1000"});
    auto b = h.spawn("b", {"sleep", "1000"});
    auto server_pid = h.env.tmux({"display-message", "-p", "#{pid}"});
    REQUIRE(server_pid.exit_code == 0);
    auto pid = static_cast<pid_t>(std::stol(server_pid.out));
    REQUIRE(alive(pid));

    check_force_killed(h, "a", a, h.kill("a", {"--force"}));
    // One agent left: the session and the server stay.
    auto sessions = h.env.tmux({"list-sessions", "-F", "#{session_name}"});
    CHECK(sessions.exit_code == 0);
    CHECK(sessions.out == "kl-reap\n");
    CHECK(alive(pid));
    CHECK(h.ok({"status"})["tmux"]["running"] == true);

    check_force_killed(h, "b", b, h.kill("b", {"--force"}));
    CHECK(h.server_gone());
    CHECK(eventually([&] { return !alive(pid); }));
    CHECK(h.ok({"status"})["tmux"]["running"] == false);
    CHECK(h.mark.none_alive_within(3000));  // the server and both supervisors are gone
    h.finish_all();
}
