// The shutdown requests repository (SPEC 7): the requests to stop agents as the store keeps
// them. The protocol (who may answer what, when force begins) is team/'s (team/shutdown.hpp);
// these are the reads and writes it makes. Writes are called inside Store::write.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/states.hpp"
#include "base/time.hpp"
#include "state/store.hpp"

namespace team {

struct ShutdownRequest {
    std::int64_t id = 0;
    std::int64_t team_id = 0;
    std::int64_t agent_id = 0;
    std::string agent;  // name@team
    ShutdownMethod method = ShutdownMethod::graceful;
    ShutdownPhase phase = ShutdownPhase::requested;
    std::string reason;
    std::optional<std::string> reject_reason;
    std::string requested_by;
    EpochMs requested_at = 0;
    std::optional<EpochMs> responded_at, confirmed_at, force_at, forced_at, closed_at;
    // The deadline (force_at) on the boot clock (Clock::boot_ms), which is what arms it; null in
    // requests made before schema 7, whose deadline is armed from force_at.
    std::optional<std::int64_t> force_at_boot;
    std::int64_t grace_ms = 5000;
    std::optional<std::string> reassign_to;
    std::vector<std::string> reassigned;

    std::string id_string() const { return std::to_string(id); }
};

// One request by its id.
std::optional<ShutdownRequest> find_request(Store& store, std::int64_t id);
// The newest request to an agent (a member row id), open or closed.
std::optional<ShutdownRequest> newest_request(Store& store, std::int64_t agent_id);
// The newest open (not closed) request to an agent.
std::optional<ShutdownRequest> newest_open_request(Store& store, std::int64_t agent_id);
// Every request to an agent, oldest first; only the open ones when asked.
std::vector<ShutdownRequest> requests_of(Store& store, std::int64_t agent_id, bool open_only);
// The open requests of a team, oldest first (for `team status`).
std::vector<ShutdownRequest> open_requests(Store& store, std::int64_t team_id);

// Writes below: call them inside Store::write.

// A request to be stored, phase requested. `force_at`/`force_at_boot`: a graceful request's
// --force-after deadline on the wall clock and on the boot clock, both or neither.
struct NewShutdownRequest {
    std::int64_t team_id = 0;
    std::int64_t agent_id = 0;
    std::string reason;
    std::string requested_by;  // name@team
    EpochMs requested_at = 0;
    std::optional<EpochMs> force_at;
    std::optional<std::int64_t> force_at_boot;
    std::int64_t grace_ms = 0;
    std::optional<std::string> reassign_to;
};
// A graceful request; returns its id.
std::int64_t insert_graceful_request(Store& store, const NewShutdownRequest& request);

// A forced request (force begins at `request.requested_at`) to a live agent; none when the agent
// is terminated already. Returns its id. The deadline fields are not used.
std::optional<std::int64_t> insert_force_request(Store& store, const NewShutdownRequest& request);

// The answers: approved; rejected with its reason (closed); confirmed (responded if not yet).
void mark_request_approved(Store& store, std::int64_t id, EpochMs at);
void mark_request_rejected(Store& store, std::int64_t id, const std::string& reason, EpochMs at);
void mark_request_confirmed(Store& store, std::int64_t id, EpochMs at);

// An agent's open requests get the deadline `force_at` (wall) / `force_at_boot` at the latest,
// and a grace of `grace_ms` at most (teardown over a request already open). No `force_at_boot`
// (a deadline set from another home, whose boot clock is not the agent's machine's): a request
// whose deadline moves is left on the wall clock.
void bring_deadline_forward(Store& store, std::int64_t agent_id, EpochMs force_at,
                            std::optional<std::int64_t> force_at_boot, std::int64_t grace_ms);
// Force begins at `at` on the agent's newest request (reopened if closed), unless it had begun
// or the agent is terminated: teardown forces the agents it listed, and one may have ended since
// (its requests closed with it); reopening one would leave a terminated agent's request open.
void begin_force_newest(Store& store, std::int64_t agent_id, EpochMs at);
// Force begins at `at` on request `id` (reopened if closed), unless it had begun or its agent is
// terminated.
void begin_force_due(Store& store, std::int64_t id, std::int64_t agent_id, EpochMs at);

// Closes an agent's open requests at `at` with the tasks handed back: force_killed when
// `forced`, else confirmed when approved or confirmed (confirmed_at kept if set), else the phase
// stays.
void close_requests(Store& store, std::int64_t agent_id, bool forced, EpochMs at,
                    const std::vector<std::string>& reassigned);

}  // namespace team
