// Reconciliation: every live agent of a team checked against its supervisor, the OS and tmux.
#include <signal.h>

#include "proc/terminate.hpp"
#include "state/change_watch.hpp"
#include "state/host_rows.hpp"
#include "state/members.hpp"
#include "team/agent_end.hpp"
#include "team/agents.hpp"
#include "team/env_file.hpp"
#include "team/worktrees.hpp"

namespace team {

namespace {

// How long a look waits for a supervisor that is recording its agent's end (it gives the
// agent's leftovers one second after SIGTERM).
constexpr auto kRecordWait = std::chrono::seconds(3);
// A `spawning` record made before schema 7 (which does not say who is making it), with no
// supervisor, is lost this long after its creation.
constexpr EpochMs kStaleSpawnMs = 30'000;

// Whether an agent that has no supervisor yet is still being made: the `team spawn` that made
// its record lives (a record from before schema 7 does not name it: then for kStaleSpawnMs).
bool spawn_under_way(proc::Processes& processes, const AgentRecord& agent, EpochMs now) {
    if (agent.spawner_pid) return processes.alive(agent.spawner_pid, agent.spawner_start);
    return now - agent.created_at < kStaleSpawnMs;
}

}  // namespace

bool Agents::end_if_host_lost(const std::vector<HostRecord>& hosts, const AgentRecord& agent) {
    auto host = std::find_if(hosts.begin(), hosts.end(),
                             [&](const HostRecord& h) { return h.home_id == agent.home_id; });
    if (host == hosts.end() || !lease_run_out(*host, clock_.now(), agent.created_at)) return false;
    return store_.write([&] {
        // Read again inside the write: a renewal or the agent's end may have come since.
        auto fresh_host = find_host(store_, host->name);
        auto now = load_agent(store_, agent.id);
        if (!fresh_host || !now || !now->live()) return false;
        auto at = clock_.now();
        if (!lease_run_out(*fresh_host, at, agent.created_at)) return false;
        mark_host_lost(store_, fresh_host->name, at);
        nlohmann::json details = {{"host", fresh_host->name}};
        return finish_agent(store_, *now, at,
                            {"lost", std::nullopt, std::nullopt, "team", {}, details, true});
    });
}

int Agents::reconcile(const TeamRecord& team) {
    int changed = 0;
    std::optional<std::vector<tmux::PaneInfo>> panes;
    std::optional<std::vector<HostRecord>> hosts;
    for (const auto& agent : load_agents(store_, team, false)) {
        // Another home's agent (a shared store): its processes are not ours to look at. On a
        // host whose lease has run out (SPEC 16), it is taken as ended: its tasks go back, with
        // a new epoch, and the host is lost (its keeper, if it ever renews again, is refused
        // and ends what it still runs).
        if (!agent.lives_in(store_.home_id())) {
            if (!hosts) hosts = list_hosts(store_);
            if (end_if_host_lost(*hosts, agent)) ++changed;
            continue;
        }
        if (auto supervisor = processes_.live(agent.supervisor_pid, agent.supervisor_start)) {
            // Its command has ended and its supervisor is recording that (it ends what is left
            // and writes the record): wait for it, so that the command that looks sees the end.
            if (!agent.pid || processes_.alive(agent.pid, agent.pid_start)) continue;
            ChangeWatch watch(store_.home());
            auto deadline = clock_.steady() + kRecordWait;
            for (;;) {
                auto now = load_agent(store_, agent.id);
                if (!now || !now->live() || supervisor->exited()) break;
                if (!watch.wait_until(deadline, {supervisor->fd()}) &&
                    clock_.steady() >= deadline) {
                    break;
                }
            }
            ++changed;
            // A supervisor that died meanwhile without writing the end (killed with everything
            // else: a machine going down) is gone like one found dead: on to record it lost.
            if (!supervisor->exited()) continue;
            auto fresh = load_agent(store_, agent.id);
            if (!fresh || !fresh->live()) continue;
        }
        if (!agent.supervisor_pid) {
            if (spawn_under_way(processes_, agent, clock_.now())) continue;
            // Its spawn is gone. A spawn ends only once the record shows the supervisor (or is
            // deleted), so read it again: what was read before may be older than that end.
            auto fresh = load_agent(store_, agent.id);
            if (!fresh || !fresh->live() || fresh->supervisor_pid) continue;
        }
        // Its supervisor is gone without recording an end: record it as lost, then end what is
        // left of it. In that order: a supervisor that its dead spawn's pane was still starting
        // can record the start up to the write (then it is live, and nothing of it is ended),
        // and not after it (the record is no longer `spawning`: it stops its command itself).
        bool marked = store_.write([&] {
            auto now = load_agent(store_, agent.id);
            // Not if its supervisor recorded the start meanwhile (it ends by itself otherwise).
            if (!now || !now->live() || now->supervisor_pid != agent.supervisor_pid) return false;
            return finish_agent(store_, *now, clock_.now(),
                                {"lost", std::nullopt, std::nullopt, "team", {}, {}});
        });
        if (!marked) continue;
        auto target = proc::tree_of_record(std::nullopt, std::nullopt, agent.pid, agent.pid_start,
                                           agent_marker(store_.home(), agent));
        processes_.terminate_tree(target, SIGKILL, std::chrono::milliseconds(0), true);
        if (agent.spawner_pid) drop_env_file(store_.home(), agent.id, *agent.spawner_pid);
        ++changed;
        if (agent.pane_id && agent.supervisor_pid) {
            if (!panes) panes = server().list_panes();
            server().kill_pane_run_by(*panes, *agent.pane_id, team.name,
                                      static_cast<pid_t>(*agent.supervisor_pid));
        }
    }
    // The snapshots still owed (an agent found lost above, a stopper that died before taking
    // one): one query when there are none.
    Worktrees(store_, clock_).settle(team);
    return changed;
}

}  // namespace team
