// Stopping agents (SPEC 7) and tearing a team down (SPEC 3).
//
// The stop path, step by step: who writes each transition, and how the next writer learns of it.
// Three kinds of process take part: the leader's command (kill-agent, teardown), the agent (its
// `team shutdown ...` commands, or `team mcp`'s shutdown_respond acting as it), and the agent's
// pane supervisor (`team __agent ID`, the parent of the agent's process in its pane).
//
//  step              agent status / request phase          written by          then
//  ----------------  ------------------------------------  ------------------  -------------------
//  request           active -> shutting_down; requested,   leader's command    a notice typed into
//                    shutdown_request in the agent's       (one tx)            the pane (--notify,
//                    inbox                                                     a preset's agents);
//                                                                              --force-after:
//                                                                              SIGUSR1 to the
//                                                                              supervisor (in tx)
//  approve           requested -> approved,                the agent (one tx)  -
//                    shutdown_approved to the leader
//  reject            -> rejected (closed); back to         the agent (one tx)  a --wait returns 4
//                    active; shutdown_rejected to leader
//  confirm           -> confirmed                          the agent (one tx)  SIGUSR1 to the
//                                                                              supervisor (in tx);
//                                                                              from inside the
//                                                                              agent's tree a
//                                                                              second one once its
//                                                                              reply is out (the
//                                                                              supervisor goes on
//                                                                              at that, or 1 s
//                                                                              after the first)
//  end, confirmed    tree SIGTERM, SIGKILL after grace;    the supervisor      finish_agent: one
//                    pane closed; terminated (confirmed)   (stop plan: now)    tx; tasks back, the
//                                                                              request closed,
//                                                                              shutdown_confirmed
//  deadline due      forced_at set, tree ended;            the supervisor      finish_agent
//                    terminated (force_killed)             (stop plan: timer)
//  force             a forced request; tree ended          leader's command    waits for the
//                                                          (SIGTERM+SIGCONT,   supervisor's record
//                                                          SIGKILL at grace)   (kSupervisorWait),
//                                                                              else finish_here
//  force, agent of   a forced request                      the agent's own     the supervisor
//  another home                                            supervisor, its     (finish_agent); the
//                                                          bell rung through   leader's command
//                                                          the store           waits for it
//  own exit          terminated (exited; confirmed once    the supervisor      finish_agent
//                    approved; force_killed once forced)
//  pane closed       terminated (lost): a hangup, not an   the supervisor      finish_agent
//  from outside      end of its own
//  supervisor gone   terminated (lost); leftovers killed   the next command    reconcile
//                                                          that looks
//
// Every end goes through finish_agent, which changes nothing for an agent already terminated: when
// the leader's command and the supervisor race to record one end, the first commit wins and the
// second is a no-op. The exit reason follows from the requests, not from who writes: a forced
// request makes it force_killed, an approved or confirmed one confirmed.
//
// The hand-over (kSupervisorWait, 2 s): after a force has ended the tree, the supervisor normally
// records the end within milliseconds (it is woken by its child's exit). The leader's command
// waits on the supervisor's pidfd and the store's commits, not on the clock, and returns the
// moment both the record and the supervisor's exit are seen. The 2 s bound is only for a
// supervisor that cannot act (SIGSTOPped, or in the grace of a hangup after its pane was killed
// from outside): then the leader's command kills it and records the end itself (finish_here).
//
// Graceful: `kill-agent` stores a shutdown request, sends `shutdown_request` to the agent's inbox
// and sets it `shutting_down`; the agent answers with `shutdown approve` or `reject`, and
// confirms with `shutdown confirm` or by exiting. The agent's pane supervisor ends its process
// tree when the request is confirmed, and enforces a --force-after deadline on its own, so the
// deadline holds whatever happens to the leader's command. Force: the leader's command ends the
// tree itself (SIGTERM with SIGCONT, SIGKILL after the grace, escapees found below the
// supervisor, which is a subreaper, and by the marker in their environment), then waits for the
// supervisor to record the end and remove its pane, doing both itself if the supervisor cannot.
//
// However an agent ends, `finish_agent` records it: the exit reason follows from its shutdown
// requests (force began: force_killed; approved or confirmed: confirmed), its tasks are handed
// back (to --reassign-to if given), its requests are closed, and a confirmed end puts
// `shutdown_confirmed` in the leader's inbox.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/time.hpp"
#include "proc/processes.hpp"
#include "state/shutdown_rows.hpp"
#include "state/store.hpp"
#include "state/team_lock.hpp"
#include "team/agents.hpp"
#include "team/teams.hpp"
#include "tmux/tmux.hpp"

namespace team {

nlohmann::json to_json(const ShutdownRequest& request);

struct KillOptions {
    std::string name;
    bool force = false;
    std::string reason;
    bool wait = false;  // graceful: until rejected, confirmed or force-killed
    std::optional<std::chrono::milliseconds> timeout;
    std::optional<std::chrono::milliseconds> force_after;
    std::chrono::milliseconds grace{5000};
    std::optional<std::string> reassign_to;
    // Graceful: a notice typed into the agent's pane too, so that an idle coding agent reads
    // its inbox; unset: as its record says (AgentRecord::notify, on for a preset's agents).
    std::optional<bool> notify;
    // --force of another home's agent: how long to wait for its end (default: the grace and
    // two supervisor hand-overs). Set when that agent's host did not answer (SPEC 16): the
    // force is stored for its supervisor, and an end not seen in time is `unconfirmed`.
    std::optional<std::chrono::milliseconds> elsewhere_wait;
    std::string unanswered;  // why the host did not answer, for the error
};

// kill-agent's exit code when the agent's end is not confirmed (its host did not answer).
inline constexpr int kUnconfirmedExit = exit_code(ErrorCode::unconfirmed);

// SPEC 7's result. `exit_code` is the process exit code it stands for (0, 4 for a rejection
// that was waited for, 124 for a --timeout that ran out).
struct KillResult {
    bool success = true;
    std::string agent_id;
    ShutdownMethod method = ShutdownMethod::graceful;
    ShutdownPhase phase = ShutdownPhase::requested;
    std::vector<std::string> reassigned;
    std::string request_id;
    std::optional<std::string> error;
    std::optional<std::string> exit_reason;  // once the agent is terminated
    // Whether the notice reached the pane, when one was typed; and why not.
    std::optional<bool> notified;
    std::optional<std::string> notify_error;
    int exit_code = 0;
    // The agent's kept worktree (team/worktrees.hpp's JSON), once it has ended; null when it
    // has none.
    nlohmann::json worktree = nullptr;
};

nlohmann::json to_json(const KillResult& result);

struct TeardownOptions {
    std::chrono::milliseconds grace{30000};
    std::string reason;
    bool purge = false;
    std::optional<bool> notify;  // as KillOptions::notify, for every agent asked
};

struct TeardownRow {
    std::string agent_id;
    ShutdownMethod method = ShutdownMethod::graceful;
    ShutdownPhase phase = ShutdownPhase::requested;
    std::vector<std::string> reassigned;
    std::optional<std::string> exit_reason;
    nlohmann::json worktree = nullptr;  // as KillResult::worktree
};

struct TeardownResult {
    std::vector<TeardownRow> agents;
    int survivors = 0;  // processes of the team still alive at the end (then nothing dissolved)
    bool dissolved = false;
    bool purged = false;
};

nlohmann::json to_json(const TeardownRow& row);

// How long teardown's force gives SIGTERM before SIGKILL, once its grace has run out.
inline constexpr std::chrono::milliseconds kTeardownKillGrace{500};

class Shutdowns {
  public:
    Shutdowns(Store& store, const Clock& clock, tmux::Tmux& tmux,
              proc::Processes& processes = proc::system_processes())
        : store_(store), clock_(clock), tmux_(tmux), processes_(processes) {}

    // `team kill-agent` (leader only). Throws for the errors of SPEC 7.1 (nothing changed);
    // otherwise returns the result, which may carry success false (a force that left
    // processes, a rejection waited for, a timeout).
    KillResult kill(const TeamRecord& team, const Caller& caller, const KillOptions& options);

    // `team shutdown approve | reject | confirm`: the caller answers its own open request (or
    // the one named). Confirm, run outside the agent's own process tree, returns once the agent
    // has ended; run inside it (from its pane), it returns at once and the agent's supervisor
    // completes the shutdown: then `after_reply` (when given) gets the supervisor's go-ahead,
    // which the caller runs once its own answer is out (ops::Result::after_reply); without it,
    // or when it is never run, the supervisor goes ahead after kReplyWindow.
    ShutdownRequest approve(const TeamRecord& team, const Caller& caller,
                            const std::optional<std::string>& request_id);
    ShutdownRequest reject(const TeamRecord& team, const Caller& caller, const std::string& reason,
                           const std::optional<std::string>& request_id);
    ShutdownRequest confirm(const TeamRecord& team, const Caller& caller,
                            const std::optional<std::string>& request_id,
                            std::function<void()>* after_reply = nullptr);

    // `team shutdown status [NAME]`: the newest request of NAME (the caller when it is an agent
    // and no NAME is given); for the leader without NAME, every open request of the team.
    std::vector<ShutdownRequest> status(const TeamRecord& team, const Caller& caller,
                                        const std::optional<std::string>& name);

    // `team teardown` (leader only). `on_row` is called as each agent's end is known.
    TeardownResult teardown(const TeamRecord& team, const Caller& caller,
                            const TeardownOptions& options,
                            const std::function<void(const TeardownRow&)>& on_row = {});

  private:
    KillResult graceful(const TeamRecord& team, const Caller& caller, const AgentRecord& agent,
                        const KillOptions& options, std::optional<TeamLock>& lock);
    KillResult force(const TeamRecord& team, const Caller& caller, const AgentRecord& agent,
                     const KillOptions& options);
    // kill-agent --wait on an agent already shutting down: waits on its open request.
    KillResult await_pending(const TeamRecord& team, const AgentRecord& agent,
                             const KillOptions& options, std::optional<TeamLock>& lock);
    // Until the request is rejected or closed (the agent ended), or the timeout: the result.
    KillResult await_answer(const TeamRecord& team, const AgentRecord& agent,
                            ShutdownRequest request, const KillOptions& options, KillResult result);
    // A force on an agent of another home (SPEC 16): its supervisor there, rung through the
    // store, ends it; waits for the end it records.
    KillResult forced_elsewhere(const AgentRecord& agent, std::int64_t request_id,
                                const KillOptions& o, KillResult result);
    // Waits until the agent is terminated and its supervisor has exited (an agent of another
    // home: until it is terminated), or `deadline`. `last`, when given, gets the record it read
    // last (empty when there is none), so that the caller need not read it again.
    bool await_end(std::int64_t agent_id, std::chrono::steady_clock::time_point deadline,
                   std::optional<AgentRecord>* last = nullptr);
    // The agent's end when its supervisor could not record it: kills what is left of it,
    // records it (finish_agent) and removes its pane.
    void finish_here(const TeamRecord& team, std::int64_t agent_id, const std::string& actor);
    // Force for several agents at once (teardown's grace is over): within one kill grace.
    void force_all(const TeamRecord& team, const std::vector<AgentRecord>& agents,
                   const std::string& actor);
    // Marks the team dissolved (with --purge: deletes its records and pane logs).
    void dissolve(const TeamRecord& team, const Caller& caller, const TeardownOptions& options,
                  int agents);

    Store& store_;
    const Clock& clock_;
    tmux::Tmux& tmux_;
    proc::Processes& processes_;
    // The agents of this home as this room sees them: the same store, clock, tmux and processes.
    Agents agents() { return Agents(store_, clock_, tmux_, processes_); }
};

}  // namespace team
