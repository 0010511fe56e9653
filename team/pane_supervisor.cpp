// The supervisor inside each agent's pane: the body of the hidden `team __agent ID`.
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>

#include "base/error.hpp"
#include "base/programs.hpp"
#include "proc/companion.hpp"
#include "proc/pidfd.hpp"
#include "proc/process_table.hpp"
#include "proc/signals.hpp"
#include "proc/supervisor.hpp"
#include "state/acp_rows.hpp"
#include "state/agent_activity_rows.hpp"
#include "state/members.hpp"
#include "state/supervisor_bell.hpp"
#include "state/worktree_rows.hpp"
#include "team/agent_end.hpp"
#include "team/agent_screen.hpp"
#include "team/agents.hpp"
#include "team/claude_state_watch.hpp"
#include "team/env_file.hpp"
#include "team/screen_watch.hpp"
#include "team/usage.hpp"
#include "team/worktrees.hpp"

namespace team {

int Agents::supervise(Store& store, std::int64_t agent_id, std::optional<std::int64_t> spawner) {
    SystemClock clock;
    const char* pane = std::getenv("TMUX_PANE");
    std::string pane_id = pane ? pane : "";
    tmux::TmuxClient client(tmux::TmuxServer::socket_args(store.home()),
                            tmux::TmuxServer::ensure_config(store.home()));
    tmux::TmuxServer server(client);
    // Leaving without a command to supervise: the pane goes too (remain-on-exit would keep it,
    // and its spawn may be gone, so no one else would remove it).
    auto leave = [&] {
        if (!pane_id.empty()) server.kill_pane(pane_id);
        return 1;
    };
    auto agent = load_agent(store, agent_id);
    if (!agent || agent->status != AgentStatus::spawning) return leave();
    // A pane opened by a resume that died, for a record another resume has started again since.
    if (spawner && agent->spawner_pid != spawner) return leave();

    proc::Supervisor supervisor;
    proc::LaunchSpec spec;
    spec.argv = agent->command.get<std::vector<std::string>>();
    if (load_acp_session(store, agent_id)) {
        // An ACP agent: its host runs the command (team/acp_host.hpp), in this pane.
        spec.argv = {own_binary(), "__acp", "--home", store.home().string(),
                     std::to_string(agent_id)};
    }
    spec.cwd = agent->cwd.value_or("/");
    spec.capture_output = false;
    spec.null_stdin = false;
    spec.foreground_tty = true;
    // --env, then the agent's identity, which --env cannot change; TEAM_* variables of whoever
    // started the tmux server do not leak in.
    // (Their values come from the file its spawn wrote: the store keeps their names only.)
    std::vector<std::string> overrides =
        take_env_file(store.home(), agent_id, spawner.value_or(agent->spawner_pid.value_or(0)));
    overrides.insert(overrides.end(),
                     {"TEAM_HOME=" + store.home().string(), "TEAM_NAME=" + agent->team,
                      "TEAM_AGENT_ID=" + agent->id_string(), "TEAM_AGENT_NAME=" + agent->name,
                      "TEAM_AGENT_COLOR=" + agent->color.value_or("")});
    spec.env = proc::merged_environment(overrides, {"TEAM_"});
    // A confirmed shutdown or a --force-after deadline: this supervisor ends the agent's tree
    // (woken by SIGUSR1 from whoever changed its requests, or by the deadline coming due). Woken,
    // it waits for the write that woke it to end: the signal is sent inside the write, just
    // before the commit, so that a command killed in between leaves no deadline unenforced, and
    // a slow commit is still seen. When the store cannot be read, it asks again a second later.
    // A confirmation ends the tree at the confirmer's second wake, once its answer is out
    // (team/agent_end.hpp): `memory` keeps the confirmation seen between the wakes.
    StopMemory memory;
    spec.stop_plan = [&store, &agent, &clock, &memory](bool woken) {
        try {
            return agent_stop_plan(store, *agent, clock,
                                   std::chrono::milliseconds(woken ? 1000 : 0), &memory);
        } catch (const std::exception&) {
            proc::StopPlan again;
            again.at = std::chrono::steady_clock::now() + std::chrono::seconds(1);
            return again;
        }
    };
    // On a shared store, commands of other homes cannot signal this process: they ring its bell
    // through the store instead (state/supervisor_bell.hpp), heard from before the agent starts.
    SupervisorBell bell(store.home(), agent_id);
    if (bell.present()) {
        spec.bell_fd = [&bell] { return bell.fd(); };
        spec.bell_rang = [&bell] { return bell.check(); };
        spec.bell_retry = SupervisorBell::kRetry;
    }
    try {
        supervisor.start(spec);
    } catch (const Error& e) {
        store.write([&] { set_agent_spawn_error(store, agent_id, e.what()); });
        return leave();
    }
    AgentStart start;
    start.pid = static_cast<std::int64_t>(supervisor.child_pid());
    start.pid_start = static_cast<std::int64_t>(supervisor.child_start_time());
    start.supervisor_pid = static_cast<std::int64_t>(::getpid());
    start.supervisor_start = static_cast<std::int64_t>(proc::start_time_of(::getpid()).value_or(0));
    if (!pane_id.empty()) start.pane_id = pane_id;
    start.spawner = spawner;
    bool recorded = store.write([&] { return record_agent_started(store, agent_id, start); });
    if (!recorded) {
        // The record was ended while the command started (its spawn died and a look declared
        // it lost, or a force-kill came first): nothing of it may run on unrecorded.
        supervisor.stop(std::chrono::milliseconds(1000));
        return leave();
    }

    // An agent that says nothing of itself: its pane's output says whether it works
    // (team/screen_watch.hpp; what it printed before the watch counts), in a child that ends
    // with this process. Started once the spawn has its answer, off its path.
    // Claude Code with hooks: its own state file too (team/claude_state_watch.hpp), which says
    // what no hook does (a dialog answered or refused).
    if (!pane_id.empty()) {
        auto activity = load_agent_activity(store, agent_id);
        if (activity && activity->source == "screen") start_screen_watch(store.home(), agent_id);
        if (activity && activity->source == "hooks" && runs_claude_code(spec.argv)) {
            start_claude_state_watch(store.home(), agent_id, start.pid,
                                     claude_config_dir(spec.env));
        }
    }

    // An agent with a worktree: its watcher keeps the worktree's git state in the store for the
    // looks (team/worktree_watch.hpp), a child of this process that ends with it (the
    // Supervisor ends what is left below it once the command ends).
    if (worktree_of_agent(store, agent_id)) {
        try {
            proc::start_companion(own_binary(), {own_binary(), "__watch", "--home",
                                                 store.home().string(), std::to_string(agent_id)});
        } catch (const std::exception&) {
            // no watcher: a look asks git
        }
    }

    // What it spends, and its limits held (team/usage.hpp): a thread of this process, stopped
    // once the agent has ended.
    std::optional<UsageSampler> sampler;
    try {
        sampler.emplace(store.home(), store.url(), agent_id, static_cast<pid_t>(start.pid));
    } catch (const std::exception&) {
        // no thread: no samples (its figures stay as the record reads them at the end)
    }

    proc::RunOutcome outcome = supervisor.run([](std::string_view) {});
    sampler.reset();
    // A hangup waiting now (blocked, so it stays pending) came before this process closed its own
    // pane: the pane was closed from outside, and the agent died of that (of the hangup, or of
    // reading a terminal that had gone), whatever its status says.
    sigset_t pending;
    bool hung_up = ::sigpending(&pending) == 0 && ::sigismember(&pending, SIGHUP) == 1;

    // The pane goes with its agent, before the record says the agent ended: whoever sees the end
    // sees no pane of it left (the session and the server go with their last pane). The hangup
    // that this sends to this process waits in the Supervisor's blocked signals; should this
    // process die before the record, a look records the agent as lost.
    bool pane_left = false;
    if (!pane_id.empty()) {
        // What the pane rendered, kept for `team logs` once the pane is gone (team/agent_screen).
        if (agent->log_file) keep_screen(client, pane_id, *agent->log_file);
        try {
            server.kill_pane(pane_id);
        } catch (const std::exception&) {
            // tmux refused twice, or a force's sweep of the tree killed the tmux client this
            // ran (it is below this process): the record of the end first, then once more.
            pane_left = true;
        }
    }
    store.write([&] {
        auto now = load_agent(store, agent_id);
        if (!now || !now->live()) return;
        std::optional<std::string> signal;
        if (outcome.status.signal) signal = proc::signal_name(*outcome.status.signal);
        // SPEC 4 keeps `exited` for an end of the agent's own. A hangup is its pane closed from
        // outside (tmux kill-pane, the server killed): this supervisor was interrupted and
        // ended the tree, or the agent died of it first. No stop of ours sends SIGHUP.
        bool from_outside = outcome.interrupted || outcome.hung_up || hung_up ||
                            (outcome.status.signal && *outcome.status.signal == SIGHUP);
        if (from_outside) {
            // Its status says what the hangup (or this supervisor's SIGTERM after it) did, not
            // how the agent ended: `lost` carries neither, as SPEC 4 has it.
            finish_agent(store, *now, clock.now(),
                         {"lost",
                          std::nullopt,
                          std::nullopt,
                          "team",
                          {},
                          {{"cause", "its pane was closed from outside"}}});
        } else {
            finish_agent(store, *now, clock.now(),
                         {"exited", outcome.status.exit_code, signal, now->id_string(), {}, {}});
        }
    });
    if (pane_left) {
        // The force's command removes a pane left so, unless it was killed first (the crash
        // proof saw one stay): by now its sweep is over, or it is the one that takes the pane.
        try {
            server.kill_pane(pane_id);
        } catch (const std::exception&) {
        }
    }
    // The last of its usage record, written as it ended (its final turn's calls).
    try {
        read_agent_records(store, agent_id);
    } catch (const std::exception&) {
    }
    // Nothing of the agent runs now: its worktree's snapshot, if it has one (SPEC 14). Should
    // this fail (a kill-agent still sweeping the tree ends git too), it stays owed and the next
    // to come takes it; the work is in the worktree meanwhile.
    try {
        Worktrees(store, clock).keep(agent_id);
    } catch (const std::exception&) {
    }
    return 0;
}

}  // namespace team
