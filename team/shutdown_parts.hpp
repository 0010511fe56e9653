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

// The agent's pane supervisor, if it is still the process that was recorded and alive.
std::optional<proc::Pidfd> live_supervisor(proc::Processes& processes, const AgentRecord& agent);

void wake_supervisor(proc::Processes& processes, const AgentRecord& agent);

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
// writes reaches a terminal). Returns why not when it could not; never throws.
std::optional<std::string> type_shutdown_notice(tmux::Tmux& tmux, const AgentRecord& agent,
                                                const ShutdownRequest& request);

// An agent's row in teardown's result, from its newest request.
TeardownRow teardown_row(Store& store, const AgentRecord& agent);

}  // namespace team::shutdown_parts
