// Spawn, reconciliation, kill-agent --force and teardown over the seams (SPEC 4, 6, 7), in
// milliseconds: a real store in a temporary home, and fakes for what the domain asks of the
// operating system and of tmux: FakeProcesses (processes live and die as the test says) and
// FakeTmuxServer (a model of the home's tmux server). The test plays each pane's supervisor as
// the real `team __agent` does: it records the agent started, and when the agent's process ends
// it removes the pane and records the end. The e2e tests prove the same on real tmux and real
// processes; these prove the rules, fast, and reach states that are hard to make for real.
#include <catch2/catch.hpp>
#include <csignal>

#include "proc/signals.hpp"
#include "state/members.hpp"
#include "tasks/tasks.hpp"
#include "team/agent_end.hpp"
#include "team/agents.hpp"
#include "team/shutdown.hpp"
#include "team/teams.hpp"
#include "tests/support/fake_processes.hpp"
#include "tests/support/fake_tmux_server.hpp"
#include "tests/support/process.hpp"

using namespace team;
using team::test::FakeProcesses;
using team::test::FakeTmuxServer;
using team::test::TempDir;

namespace {

struct World {
    TempDir tmp;
    Store store{tmp.path()};
    SystemClock clock;
    FakeProcesses processes;
    FakeTmuxServer tmux{processes};
    Teams teams{store, clock};
    TeamRecord team = teams.create({"web", "", tmp.path().string(), "lead", {}, {}, {}});
    Caller lead = teams.resolve_caller(team, std::nullopt);
    std::map<pid_t, std::int64_t> agent_of;  // an agent's process -> its record
    std::map<std::int64_t, pid_t> supervisor_of;
    bool supervisors_record_ends = true;

    World() {
        // Each new pane runs `team __agent ID`: start the agent's command below it and record it.
        tmux.on_open = [this](const FakeTmuxServer::Pane& pane) {
            std::int64_t id = std::stoll(pane.argv.at(4));  // __agent --home H ID --spawner P
            auto agent = load_agent(store, id);
            REQUIRE(agent);
            pid_t child = processes.spawn(pane.pid, {"TEAM_AGENT_ID=" + agent->id_string(),
                                                     "TEAM_HOME=" + store.home().string()});
            AgentStart start;
            start.pid = child;
            start.pid_start = static_cast<std::int64_t>(processes.start_of(child));
            start.supervisor_pid = pane.pid;
            start.supervisor_start = static_cast<std::int64_t>(processes.start_of(pane.pid));
            start.pane_id = pane.id;
            store.write([&] { return record_agent_started(store, id, start); });
            agent_of[child] = id;
            supervisor_of[id] = pane.pid;
        };
        // When an agent's command ends, its supervisor removes the pane and records the end.
        processes.on_end = [this](pid_t pid, int signal) {
            auto it = agent_of.find(pid);
            if (it == agent_of.end() || !supervisors_record_ends) return;
            auto agent = load_agent(store, it->second);
            if (agent && agent->pane_id) tmux.run({"kill-pane", "-t", *agent->pane_id}, {});
            store.write([&] {
                auto now = load_agent(store, it->second);
                if (!now || !now->live()) return;
                std::optional<std::string> name;
                if (signal) name = proc::signal_name(signal);
                finish_agent(store, *now, clock.now(),
                             {"exited",
                              signal ? std::nullopt : std::optional<int>(0),
                              name,
                              now->id_string(),
                              {},
                              {}});
            });
            processes.end(supervisor_of.at(it->second));  // done: the supervisor exits
        };
    }

    Agents agents() { return Agents(store, clock, tmux, processes); }
    Shutdowns shutdowns() { return Shutdowns(store, clock, tmux, processes); }

    AgentRecord spawn(const std::string& name) {
        SpawnRequest request;
        request.name = name;
        request.argv = {"sh"};
        return agents().spawn(team, lead, request);
    }
    pid_t pid_of(const AgentRecord& a) { return static_cast<pid_t>(*a.pid); }
};

}  // namespace

TEST_CASE("spawn over the seams: a pane, its supervisor's record, the first free colour",
          "[agents][seams]") {
    World w;
    auto a = w.spawn("w1");
    CHECK(a.status == AgentStatus::active);
    CHECK(a.color == "blue");
    REQUIRE(a.pane_id);
    CHECK(w.tmux.has_pane(*a.pane_id));
    CHECK(w.processes.is_alive(w.pid_of(a)));
    auto b = w.spawn("w2");
    CHECK(b.color == "green");
    CHECK(w.agents().list(w.team, false).size() == 2);

    // A name in use is refused, and nothing is made.
    int panes = static_cast<int>(w.tmux.panes().size());
    CHECK_THROWS_AS(w.spawn("w1"), Error);
    CHECK(static_cast<int>(w.tmux.panes().size()) == panes);

    // A pane tmux could not make leaves no record behind, and says why.
    w.tmux.fail_open = "create pane failed: no space for new pane";
    CHECK_THROWS_WITH(w.spawn("w3"), Catch::Contains("no space for new pane"));
    CHECK_FALSE(find_member(w.store, w.team, "w3"));
    CHECK(static_cast<int>(w.tmux.panes().size()) == panes);
    // A failure that passes: the second try makes the pane, and it is the agent's (it used to
    // be made, left behind, and the spawn failed with "tmux did not report the new pane").
    w.tmux.fail_open.clear();
    w.tmux.fail_next_opens = 1;
    auto c = w.spawn("w3");
    CHECK(c.status == AgentStatus::active);
    CHECK(static_cast<int>(w.tmux.panes().size()) == panes + 1);
    CHECK(w.tmux.has_pane(*c.pane_id));
}

TEST_CASE(
    "reconcile: an agent whose supervisor died is lost, its leftovers end, its tasks go "
    "back",
    "[agents][seams]") {
    World w;
    auto a = w.spawn("w1");
    tasks::TaskList list(w.store, w.clock);
    auto caller = w.teams.resolve_caller(w.team, "w1");
    list.add(w.team, w.lead, {"fix the build", "", std::nullopt, {}});
    list.claim(w.team, caller, std::nullopt);
    // A process it left below itself, with its identity in the environment.
    pid_t escapee = w.processes.spawn(
        0, {"TEAM_AGENT_ID=" + a.id_string(), "TEAM_HOME=" + w.store.home().string()});

    // Its supervisor is gone without recording anything (SIGKILLed from outside).
    w.supervisors_record_ends = false;
    w.processes.end(w.supervisor_of.at(a.id), SIGKILL);
    CHECK(w.agents().reconcile(w.team) == 1);

    auto now = load_agent(w.store, a.id);
    REQUIRE(now);
    CHECK(now->status == AgentStatus::terminated);
    CHECK(now->exit_reason == "lost");
    CHECK_FALSE(w.processes.is_alive(w.pid_of(a)));  // what was left of it was ended
    CHECK_FALSE(w.processes.is_alive(escapee));
    CHECK(w.processes.at(escapee).signals == std::vector<int>{SIGKILL});
    auto task = list.show(w.team, "1");
    CHECK(task.status == TaskStatus::pending);
    CHECK_FALSE(task.owner);
    CHECK(task.warning == "Reassigned: previous owner w1 terminated");
    // A second look changes nothing.
    CHECK(w.agents().reconcile(w.team) == 0);
}

TEST_CASE(
    "kill-agent --force over the seams: the whole tree ends, force_killed, tasks handed "
    "on",
    "[agents][seams]") {
    World w;
    auto a = w.spawn("w1");
    auto b = w.spawn("w2");
    pid_t grandchild = w.processes.spawn(w.pid_of(a));
    w.processes.at(w.pid_of(a)).ignores_term = true;  // only SIGKILL ends it
    tasks::TaskList list(w.store, w.clock);
    list.add(w.team, w.lead, {"t", "", std::string("w1"), {}});

    KillOptions o;
    o.name = "w1";
    o.force = true;
    o.grace = std::chrono::milliseconds(10);
    o.reassign_to = "w2";
    auto r = w.shutdowns().kill(w.team, w.lead, o);
    CHECK(r.success);
    CHECK(r.phase == ShutdownPhase::force_killed);
    CHECK(r.exit_reason == "force_killed");
    CHECK(r.reassigned == std::vector<std::string>{"1"});
    CHECK(w.processes.at(w.pid_of(a)).signals == std::vector<int>{SIGTERM, SIGKILL});
    CHECK_FALSE(w.processes.is_alive(grandchild));
    CHECK_FALSE(w.tmux.has_pane(*a.pane_id));
    CHECK(w.tmux.has_pane(*b.pane_id));  // nothing of another agent
    CHECK(w.processes.is_alive(w.pid_of(b)));
    CHECK(list.show(w.team, "1").owner == "w2");

    // Again: refused, nothing changed.
    CHECK_THROWS_AS(w.shutdowns().kill(w.team, w.lead, o), Error);
}

TEST_CASE("teardown over the seams: every agent ends, the team is dissolved", "[agents][seams]") {
    World w;
    auto a = w.spawn("w1");
    auto b = w.spawn("w2");
    w.processes.at(w.pid_of(b)).ignores_term = true;
    TeardownOptions o;
    o.grace = std::chrono::milliseconds(50);  // nobody answers: both are forced
    auto r = w.shutdowns().teardown(w.team, w.lead, o);
    CHECK(r.dissolved);
    CHECK(r.survivors == 0);
    CHECK(r.agents.size() == 2);
    CHECK_FALSE(w.processes.is_alive(w.pid_of(a)));
    CHECK_FALSE(w.processes.is_alive(w.pid_of(b)));
    CHECK(w.tmux.panes().empty());
    CHECK(w.teams.list(false).empty());  // dissolved
    CHECK(w.teams.list(true).size() == 1);
}
