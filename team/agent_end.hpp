// An agent's end, however it comes (SPEC 4, 7): the record of it (status, exit fields, tasks
// handed back, requests closed, the activity entry) and the stop plan its pane supervisor
// follows. Below both the agents (spawn, supervisor, reconcile) and the shutdown rooms, which
// each end agents.
#pragma once

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/time.hpp"
#include "proc/supervisor.hpp"
#include "state/records.hpp"
#include "state/store.hpp"

namespace team {

// How an agent ended, as mark_terminated records it.
struct Termination {
    std::string reason;  // confirmed | force_killed | exited | lost (SPEC 4 exitReason)
    std::optional<int> exit_code;
    std::optional<std::string> signal;
    std::string actor;                       // who ended it, for the activity log
    std::optional<std::string> reassign_to;  // its tasks go to this member (still pending)
    nlohmann::json details = nlohmann::json::object();  // more for the activity entry
    // The reason stands whatever the agent's shutdown requests say (an agent lost with its
    // host: a force asked of a host that never answered did not end it).
    bool reason_stands = false;
};

// Marks a live agent terminated (in the caller's transaction): exit fields, its tasks handed
// back, an activity entry (agent_exited, agent_force_killed or shutdown_confirmed by reason).
// Returns the ids of the tasks handed back, or nothing when it was already terminated.
std::optional<std::vector<std::string>> mark_terminated(Store& store, const AgentRecord& agent,
                                                        EpochMs at, const Termination& how);

// Records the end of a live agent (in the caller's transaction), whatever ended it: the exit
// reason is `natural` (exited, lost) unless the agent's shutdown requests say otherwise.
// Returns false when it was already terminated.
bool finish_agent(Store& store, const AgentRecord& agent, EpochMs at, const Termination& natural);

// How long a supervisor that has seen its agent's confirmation waits for the confirmer's second
// wake (sent once the confirmer's answer is written: the confirmer may be a process of the
// agent's own tree, `team mcp` or `team shutdown confirm`) before it ends the tree anyway.
inline constexpr std::chrono::milliseconds kReplyWindow{1000};

// What a supervisor remembers between its looks at the requests.
struct StopMemory {
    std::optional<std::int64_t> confirmation;  // the confirmed request it has seen
    std::chrono::steady_clock::time_point seen_at;
};

// The stop plan of an agent's pane supervisor: stop now when force began, or when its request is
// confirmed and the supervisor is woken again after having seen it (without `memory`: at once);
// a confirmation seen the first time, at kReplyWindow from then at the latest. Otherwise the
// nearest --force-after deadline, which it then enforces. With a `wait_for_commit` (the
// supervisor was woken), it first waits for the write that woke it to end (whoever changes the
// requests wakes the supervisor inside its write, just before committing); where the writers'
// turn lock cannot be used, it waits up to `wait_for_commit` for a commit that brings something.
proc::StopPlan agent_stop_plan(Store& store, const AgentRecord& agent, const Clock& clock,
                               std::chrono::milliseconds wait_for_commit = {},
                               StopMemory* memory = nullptr);

}  // namespace team
