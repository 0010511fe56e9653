// `team wait A… --until working|waiting|idle|ended [--any] [--timeout D]` (SPEC 17): until
// every named agent (or, with any, one of them) is in that state. It looks, then sleeps on a
// ChangeWatch until the next commit (every report of an activity is one), so it wakes within a
// millisecond of the report that made it true and never polls the store. An agent that has ended
// will never be anything else: waiting for another state of it fails at once.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "state/records.hpp"
#include "state/store.hpp"

namespace team {

struct AgentWaitRequest {
    std::vector<std::string> names;
    std::string until;  // one of activity_states()
    bool any = false;
    std::optional<std::chrono::milliseconds> timeout;  // none: no limit
};

struct AgentWaitOutcome {
    bool reached = false;
    bool timed_out = false;
    nlohmann::json agents = nlohmann::json::array();  // [{agentId, name, activity}]
};

// Throws a usage error for an unknown state, not_found for an unknown agent, and refused when
// the state can no longer be reached (an agent it needs has ended).
AgentWaitOutcome wait_for_agents(Store& store, const TeamRecord& team,
                                 const AgentWaitRequest& request);

}  // namespace team
