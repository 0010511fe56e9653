// What the rooms of stopping agents share (team/shutdown_requests.cpp, agent_end.cpp,
// kill_agent.cpp, shutdown_answers.cpp, teardown.cpp): not for use outside them.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "proc/pidfd.hpp"
#include "proc/processes.hpp"
#include "proc/terminate.hpp"
#include "team/shutdown.hpp"

namespace team::shutdown_parts {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// The longest reason a kill-agent, reject or teardown accepts.
inline constexpr std::size_t kMaxReasonBytes = 64 * 1024;
// How long a force waits for the agent's supervisor to record the end and remove its pane once
// the tree is gone, before doing both itself.
inline constexpr milliseconds kSupervisorWait{2000};

// A --force-after or teardown deadline, `after` from now: the wall-clock time users see
// (forceAt) and the boot-clock time it is armed from.
struct Deadline {
    EpochMs wall = 0;
    std::int64_t boot = 0;
};

// Whether the agent lives in this store's home: its processes and pane are this machine's. One
// of another home (a shared store, SPEC 16) is ended by its own supervisor, rung through the
// store: nothing here signals, types into or sweeps what belongs to another machine.
bool lives_here(Store& store, const AgentRecord& agent);

// The agent's pane supervisor, if it lives here, is still the process that was recorded and is
// alive.
std::optional<proc::Pidfd> live_supervisor(Store& store, proc::Processes& processes,
                                           const AgentRecord& agent);

// Wakes the agent's supervisor to look at its requests again: SIGUSR1 when it lives here, its
// bell rung through the store otherwise (in the caller's write: heard once it is committed).
void wake_supervisor(Store& store, proc::Processes& processes, const AgentRecord& agent);
// SIGUSR1 to the supervisor of an agent that lives here.
void signal_supervisor(proc::Processes& processes, const AgentRecord& agent);

// Everything of an agent: what its supervisor (a subreaper) has below it, its process group,
// and whatever carries its identity in the environment. `with_supervisor`: the supervisor too.
proc::TreeTarget agent_target(const std::filesystem::path& home, const AgentRecord& agent,
                              bool with_supervisor);

// Whether this process runs inside the tree of that supervisor (an ancestor of ours).
bool inside_tree_of(const AgentRecord& agent);

bool answered(ShutdownPhase phase);

std::string seconds_text(milliseconds d);

std::int64_t parse_request_id(const std::string& text);

Deadline deadline_after(const Clock& clock, milliseconds after);
// The deadline on the boot clock of the agent's machine: this one's, when the agent lives here;
// none for an agent of another home (each machine's boot clock is its own: that deadline stays
// on the wall clock, which the machines of a team are expected to keep in step).
std::optional<std::int64_t> boot_deadline(Store& store, const AgentRecord& agent,
                                          const Deadline& deadline);

// A graceful request to `agent` (in the caller's transaction): the row, the shutdown_request
// message in its inbox and the activity entry. `text` is the message; the agent's status is the
// caller's business.
ShutdownRequest request_shutdown(Store& store, const TeamRecord& team, const Caller& caller,
                                 const AgentRecord& agent, const std::string& reason, EpochMs now,
                                 std::optional<Deadline> deadline, milliseconds grace,
                                 const std::optional<std::string>& reassign_to,
                                 const std::string& text, bool teardown);

// Whether a graceful request to `agent` is also typed into its pane: as asked, else as its
// record says.
bool wants_notice(const AgentRecord& agent, std::optional<bool> asked);

// Types the notice of `request` into the agent's pane (never its reason: nothing a requester
// writes reaches a terminal). Returns why not when it could not (an agent of another home: its
// pane is that machine's, and the inbox carries the request); never throws.
std::optional<std::string> type_shutdown_notice(Store& store, tmux::Tmux& tmux,
                                                const AgentRecord& agent,
                                                const ShutdownRequest& request);

// An agent's row in teardown's result, from its newest request.
TeardownRow teardown_row(Store& store, const AgentRecord& agent);

}  // namespace team::shutdown_parts
