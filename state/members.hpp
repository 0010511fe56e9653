// The members repository: a team's members (its agents and its leader) as the store keeps them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "state/records.hpp"
#include "state/store.hpp"

namespace team {

// The member of that name, leader included: the live one, else the newest terminated one.
std::optional<AgentRecord> find_member(Store& store, const TeamRecord& team,
                                       const std::string& name);
// Throws not_found for an unknown member name of `team`, with did-you-mean over its live members.
[[noreturn]] void member_not_found(Store& store, const TeamRecord& team, const std::string& name);

// Agents of a team as stored, oldest first: the live ones, or all (leader excluded).
std::vector<AgentRecord> load_agents(Store& store, const TeamRecord& team, bool include_terminated);
// One agent by its row id.
std::optional<AgentRecord> load_agent(Store& store, std::int64_t id);

// The names of a team's live members (leader included), for did-you-mean.
std::vector<std::string> live_member_names(SQLite::Database& db, std::int64_t team_id);

}  // namespace team
