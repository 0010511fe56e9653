// The teams repository: teams as the store keeps them (SPEC 3). The rules (names, who may delete)
// are team/'s (team/teams.hpp); these are the reads and writes it makes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "state/records.hpp"
#include "state/store.hpp"

namespace team {

// Whether the team of that row id is active (not dissolved).
bool team_is_active(Store& store, std::int64_t team_id);

// The live team of that name, else the newest dissolved one, with its agent counts.
std::optional<TeamRecord> find_team(Store& store, const std::string& name);
// The team of that row id (live or dissolved), with its agent counts.
std::optional<TeamRecord> find_team_by_id(Store& store, std::int64_t id);
// The names of every team, live or dissolved, sorted, each once (for did-you-mean).
std::vector<std::string> team_names(Store& store);
// Every team (the live ones only unless asked), oldest first, with its agent and open task
// counts.
std::vector<TeamRecord> list_teams(Store& store, bool include_dissolved);
// Whether the team of that row id still exists.
bool team_exists(Store& store, std::int64_t team_id);

// Writes below: call them inside Store::write.

// Whether there is an active team of that name.
bool active_team_exists(Store& store, const std::string& name);
// Inserts `team` (name, description, cwd, leader, created_at) as active; returns its row id.
std::int64_t insert_team(Store& store, const TeamRecord& team);
// Marks an active team dissolved at `at`.
void mark_team_dissolved(Store& store, std::int64_t team_id, EpochMs at);
// Deletes a team and, through the foreign keys, all its records; false when it was not there.
bool delete_team(Store& store, std::int64_t team_id);

}  // namespace team
