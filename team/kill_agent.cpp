#include "team/shutdown.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>

#include "base/error.hpp"
#include "base/names.hpp"
#include "base/text.hpp"
#include "proc/pidfd.hpp"
#include "proc/terminate.hpp"
#include "state/change_watch.hpp"
#include "state/members.hpp"
#include "state/supervisor_bell.hpp"
#include "team/agent_end.hpp"
#include "team/messages.hpp"
#include "team/shutdown_parts.hpp"
#include "team/worktrees.hpp"
#include "tmux/server.hpp"

namespace team {

using namespace shutdown_parts;

KillResult Shutdowns::kill(const TeamRecord& team, const Caller& caller, const KillOptions& o) {
    require_leader(caller, "kill agents");
    check_name(o.name, "agent name");
    check_text(o.reason, kMaxReasonBytes, "the reason");
    if (o.reassign_to) check_name(*o.reassign_to, "--reassign-to");
    if (o.force && o.force_after) {
        throw usage_error(
            "--force-after sets a deadline for a graceful shutdown; --force ends "
            "the agent now: give one of them");
    }
    if (o.grace.count() <= 0) throw usage_error("--grace must be positive");

    std::optional<TeamLock> lock;
    lock.emplace(store_, team.name);
    Agents agents = this->agents();
    agents.reconcile(team);  // an agent whose process ended meanwhile is terminated by now
    auto agent = find_member(store_, team, o.name);
    if (!agent) member_not_found(store_, team, o.name);
    if (agent->is_leader) {
        throw refused("the leader " + quote(agent->id_string()) +
                      " cannot be killed with kill-agent; end the whole team with 'team "
                      "teardown'");
    }
    if (!agent->live()) {
        throw refused("agent " + quote(agent->name) + " is already terminated (" +
                      agent->exit_reason.value_or("exited") + ")");
    }
    if (o.reassign_to) {
        if (*o.reassign_to == agent->name) {
            throw usage_error("--reassign-to names the agent being killed");
        }
        auto to = find_member(store_, team, *o.reassign_to);
        if (!to) member_not_found(store_, team, *o.reassign_to);
        if (!to->live()) {
            throw refused("--reassign-to " + quote(*o.reassign_to) + " is terminated");
        }
    }
    KillResult result =
        o.force ? force(team, caller, *agent, o) : graceful(team, caller, *agent, o, lock);
    // Ended: its worktree is kept, with a snapshot of what it had not committed (SPEC 14). One
    // of another home is on that machine: its supervisor keeps it there.
    if (result.exit_reason && lives_here(store_, *agent)) {
        result.worktree = Worktrees(store_, clock_).keep(agent->id);
    }
    return result;
}

KillResult Shutdowns::graceful(const TeamRecord& team, const Caller& caller,
                               const AgentRecord& agent, const KillOptions& o,
                               std::optional<TeamLock>& lock) {
    if (agent.status == AgentStatus::shutting_down) {
        if (o.wait || o.timeout) return await_pending(team, agent, o, lock);
        auto open = newest_open_request(store_, agent.id);
        throw refused("agent " + quote(agent.name) + " is already shutting down" +
                      (open ? " (request " + open->id_string() + ", phase " + str(open->phase) + ")"
                            : std::string()) +
                      "; wait for it with --wait, or use --force to end it now");
    }
    if (agent.status != AgentStatus::active) {
        throw refused("agent " + quote(agent.name) + " is still starting; use --force to end it");
    }
    EpochMs now = clock_.now();
    ShutdownRequest request;
    store_.write([&] {
        if (!set_agent_shutting_down(store_, agent.id)) {
            throw refused("agent " + quote(agent.name) + " is no longer active");
        }
        std::optional<Deadline> deadline;
        if (o.force_after) deadline = deadline_after(clock_, *o.force_after);
        std::string text = "shutdown requested by " + caller.id() +
                           (o.reason.empty() ? std::string() : ": " + o.reason) +
                           ". Approve with 'team shutdown approve' then finish and run 'team "
                           "shutdown confirm' (or exit), or reject with 'team shutdown reject "
                           "--reason TEXT'.";
        request = request_shutdown(store_, team, caller, agent, o.reason, now, deadline, o.grace,
                                   o.reassign_to, text, false);
        // Its supervisor enforces the deadline from the commit on, whatever happens to this
        // command: woken before the commit (it waits for it), so no moment is left where this
        // command could die with the request stored and the supervisor unaware.
        if (o.force_after) wake_supervisor(store_, processes_, agent);
    });

    KillResult result;
    result.agent_id = agent.id_string();
    result.method = ShutdownMethod::graceful;
    result.phase = request.phase;
    result.request_id = request.id_string();
    // After the commit: an agent that reads its inbox at the notice finds the request there.
    if (wants_notice(agent, o.notify)) {
        result.notify_error = type_shutdown_notice(store_, tmux_, agent, request);
        result.notified = !result.notify_error;
    }
    if (!o.wait && !o.timeout) return result;
    lock.reset();  // waiting needs no lock: other commands on the team go on meanwhile
    return await_answer(team, agent, request, o, std::move(result));
}

KillResult Shutdowns::await_pending(const TeamRecord& team, const AgentRecord& agent,
                                    const KillOptions& o, std::optional<TeamLock>& lock) {
    auto open = newest_open_request(store_, agent.id);
    if (!open) throw refused("agent " + quote(agent.name) + " is no longer shutting down");
    if (o.force_after) {
        // A deadline for the request under way: brought forward, never pushed back.
        Deadline deadline = deadline_after(clock_, *o.force_after);
        store_.write([&] {
            bring_deadline_forward(store_, agent.id, deadline.wall,
                                   boot_deadline(store_, agent, deadline),
                                   static_cast<std::int64_t>(o.grace.count()));
            wake_supervisor(store_, processes_, agent);
        });
    }
    KillResult result;
    result.agent_id = agent.id_string();
    result.method = ShutdownMethod::graceful;
    result.phase = open->phase;
    result.request_id = open->id_string();
    // The request was noticed (or not) when it was made: typed again only when asked.
    if (o.notify.value_or(false)) {
        result.notify_error = type_shutdown_notice(store_, tmux_, agent, *open);
        result.notified = !result.notify_error;
    }
    lock.reset();
    return await_answer(team, agent, *open, o, std::move(result));
}

KillResult Shutdowns::await_answer(const TeamRecord& team, const AgentRecord& agent,
                                   ShutdownRequest request, const KillOptions& o,
                                   KillResult result) {
    // --wait's wait for the answer, asked for: a stopping server ends it (base/cancel.hpp); the
    // request stays made.
    AskedWait asked;
    ChangeWatch watch(store_);  // on the store's own connection
    auto deadline = o.timeout ? clock_.steady() + *o.timeout : SteadyClock::time_point::max();
    auto supervisor = live_supervisor(store_, processes_, agent);
    for (;;) {
        auto latest = find_request(store_, request.id);
        if (!latest) break;  // the team was purged meanwhile: nothing of the agent is left
        request = *latest;
        if (request.phase == ShutdownPhase::rejected || request.closed_at) break;
        std::vector<int> others;
        if (supervisor) {
            if (supervisor->exited()) {
                // It ended without recording the end (killed): the look records it.
                agents().reconcile(team);
                supervisor.reset();
                continue;
            }
            others.push_back(supervisor->fd());
        }
        if (!watch.wait_until(deadline, others) && clock_.steady() >= deadline) {
            result.success = false;
            result.phase = request.phase;
            result.error = "timed out after " + seconds_text(*o.timeout) + " waiting for " +
                           agent.id_string() + " to answer the shutdown request (phase " +
                           str(request.phase) + ")";
            result.exit_code = 124;
            return result;
        }
    }
    result.phase = request.phase;
    result.reassigned = request.reassigned;
    if (request.phase == ShutdownPhase::rejected) {
        result.success = false;
        result.error = agent.id_string() + " rejected the shutdown request" +
                       (request.reject_reason ? ": " + *request.reject_reason : std::string());
        result.exit_code = 4;
        return result;
    }
    // Ended: once its supervisor is gone too, nothing of it is left.
    std::optional<AgentRecord> last;
    await_end(agent.id, clock_.steady() + kSupervisorWait, &last);
    if (last) result.exit_reason = last->exit_reason;
    return result;
}

KillResult Shutdowns::force(const TeamRecord& team, const Caller& caller, const AgentRecord& agent,
                            const KillOptions& o) {
    EpochMs now = clock_.now();
    std::int64_t request_id = 0;
    store_.write([&] {
        NewShutdownRequest row;
        row.team_id = team.id;
        row.agent_id = agent.id;
        row.reason = o.reason;
        row.requested_by = caller.id();
        row.requested_at = now;
        row.grace_ms = static_cast<std::int64_t>(o.grace.count());
        row.reassign_to = o.reassign_to;
        auto id = insert_force_request(store_, row);
        if (!id) throw refused("agent " + quote(agent.name) + " is already terminated");
        request_id = *id;
        // Another home's: its supervisor, rung through the store, ends the tree (within the
        // grace) and records the end. Rung in the write, so that no moment is left where this
        // command could die with the force stored and that supervisor unaware.
        if (!lives_here(store_, agent)) ring_supervisor_bell(store_, agent.id);
    });
    KillResult result;
    result.agent_id = agent.id_string();
    result.method = ShutdownMethod::force;
    result.request_id = std::to_string(request_id);
    if (!lives_here(store_, agent)) {
        return forced_elsewhere(agent, request_id, o, std::move(result));
    }
    // The leader's command ends the tree itself: it does not depend on the supervisor, which
    // may be stopped, busy or gone.
    processes_.terminate_tree(agent_target(store_.home(), agent, false), SIGTERM, o.grace, true);
    std::optional<AgentRecord> last;
    bool ended = await_end(agent.id, clock_.steady() + kSupervisorWait, &last);
    if (!ended) {
        finish_here(team, agent.id, caller.id());
        last = load_agent(store_, agent.id);  // as finish_here left it
    } else if (agent.pane_id && agent.supervisor_pid &&
               tmux::TmuxServer::server_alive(store_.home())) {
        // The supervisor removes its pane before it records the end, but the `tmux kill-pane`
        // it runs for that is below it, in the tree this command was still ending: the last
        // sweep of the tree can kill it, and the pane stays (remain-on-exit). Whatever is left
        // of the pane goes here. When the server is gone (the team's last agent reaped it),
        // no pane is left and no tmux client need start: a connect() answers that.
        try {
            tmux::TmuxServer server(tmux_);
            server.kill_pane_run_by(server.list_panes(), *agent.pane_id, team.name,
                                    static_cast<pid_t>(*agent.supervisor_pid));
        } catch (const std::exception&) {
            // the agent has ended and is recorded; a pane left is dead and its session's to end
        }
    }

    auto request = find_request(store_, request_id);
    result.phase = request ? request->phase : ShutdownPhase::force_killed;
    if (request) result.reassigned = request->reassigned;
    if (last) result.exit_reason = last->exit_reason;
    auto left = processes_.find_tree(agent_target(store_.home(), agent, true));
    if (!left.empty()) {
        result.success = false;
        result.error = std::to_string(left.size()) + " process" + (left.size() == 1 ? "" : "es") +
                       " of " + agent.id_string() + " could not be ended (first: pid " +
                       std::to_string(left.front().pid) + ")";
        result.exit_code = 1;
    }
    return result;
}

KillResult Shutdowns::forced_elsewhere(const AgentRecord& agent, std::int64_t request_id,
                                       const KillOptions& o, KillResult result) {
    // Its end, recorded by its supervisor once the tree is gone: the grace, then the hand-over,
    // and a margin for the store's round trips.
    auto wait = o.elsewhere_wait.value_or(o.grace + kSupervisorWait + kSupervisorWait);
    std::optional<AgentRecord> last;
    bool ended = await_end(agent.id, clock_.steady() + wait, &last);
    auto request = find_request(store_, request_id);
    result.phase = request ? request->phase : ShutdownPhase::force_killed;
    if (request) result.reassigned = request->reassigned;
    if (last) result.exit_reason = last->exit_reason;
    if (!ended && o.elsewhere_wait) {
        // Its host did not answer (SPEC 16): never reported killed, and its tasks stay.
        result.success = false;
        result.phase = ShutdownPhase::unconfirmed;
        result.error = o.unanswered + ": the end of " + agent.id_string() +
                       " is not confirmed. The force stays requested (its supervisor carries it "
                       "out if it hears); its tasks go back once its end is confirmed, its "
                       "host's lease runs out, or `team host lost` is run";
        result.exit_code = kUnconfirmedExit;
    } else if (!ended) {
        result.success = false;
        result.error = agent.id_string() + " runs in another home (" + agent.home_id.value_or("") +
                       ") and its supervisor there did not record its end within " +
                       seconds_text(wait) +
                       ": the force stays requested, and is carried out when that supervisor " +
                       "hears it; if that machine is down, 'team agents' there records the end";
        result.exit_code = 1;
    }
    return result;
}

bool Shutdowns::await_end(std::int64_t agent_id, SteadyClock::time_point deadline,
                          std::optional<AgentRecord>* last) {
    ChangeWatch watch(store_);  // on the store's own connection: each read below follows it
    std::optional<AgentRecord> agent_slot;
    auto& agent = last ? *last : agent_slot;
    agent = load_agent(store_, agent_id);
    if (!agent) return true;
    if (!lives_here(store_, *agent)) {
        // Another home's: its supervisor records the end, seen through the store.
        for (;;) {
            if (!agent || !agent->live()) return true;
            if (!watch.wait_until(deadline) && clock_.steady() >= deadline) return false;
            agent = load_agent(store_, agent_id);
        }
    }
    auto supervisor = live_supervisor(store_, processes_, *agent);
    // The first read came before that look: a supervisor found gone may have recorded the end
    // in between, so it is read again before "nobody recorded it" is concluded.
    bool read_after_look = false;
    for (;;) {
        if (!agent) return true;
        bool supervisor_gone = !supervisor || supervisor->exited();
        if (!agent->live() && supervisor_gone) return true;
        if (supervisor_gone && read_after_look) return false;  // nobody left to record it
        if (!supervisor_gone && !watch.wait_until(deadline, {supervisor->fd()}) &&
            clock_.steady() >= deadline) {
            return false;
        }
        agent = load_agent(store_, agent_id);
        read_after_look = true;
    }
}

void Shutdowns::finish_here(const TeamRecord& team, std::int64_t agent_id,
                            const std::string& actor) {
    auto agent = load_agent(store_, agent_id);
    // Nothing of another home's agent is this machine's to end: its home records its end.
    if (!agent || !lives_here(store_, *agent)) return;
    // The supervisor too: it could not finish its work in time (stopped, or gone).
    processes_.terminate_tree(agent_target(store_.home(), *agent, true), SIGKILL, milliseconds(0),
                              true);
    store_.write([&] {
        auto now = load_agent(store_, agent_id);
        if (!now || !now->live()) return;
        finish_agent(store_, *now, clock_.now(),
                     {"lost", std::nullopt, std::nullopt, actor, std::nullopt, {}});
    });
    if (!agent->pane_id || !agent->supervisor_pid) return;
    tmux::TmuxServer server(tmux_);
    server.kill_pane_run_by(server.list_panes(), *agent->pane_id, team.name,
                            static_cast<pid_t>(*agent->supervisor_pid));
}

}  // namespace team
