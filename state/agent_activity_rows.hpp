// The rows of what each agent is doing (SPEC 17; schema 14's agent_activity): one row per agent
// that has one, written by team/agent_activity.cpp alone.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/time.hpp"
#include "state/store.hpp"

namespace team {

struct AgentActivityRow {
    std::int64_t agent_id = 0;
    std::string state = "starting";  // starting | working | waiting | idle
    EpochMs since = 0;
    std::string source;  // hooks | acp | screen
    nlohmann::json waiting_on = nullptr;
    EpochMs reported_at = 0;
    std::optional<EpochMs> prompted_at;
};

std::optional<AgentActivityRow> load_agent_activity(Store& store, std::int64_t agent_id);
// The rows of a team's agents, by agent id: one query.
std::map<std::int64_t, AgentActivityRow> team_agent_activity(Store& store, std::int64_t team_id);
// Inserts or replaces the agent's row.
void save_agent_activity(Store& store, const AgentActivityRow& row);

}  // namespace team
