// The activity log (SPEC 10): an append-only audit trail per team, written in the same
// transaction as the change it records.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/time.hpp"

namespace SQLite {
class Database;
}

namespace team {

struct ActivityEntry {
    std::int64_t id = 0;
    EpochMs at = 0;
    std::string actor;  // name@team of whoever asked for it
    std::string type;   // team_created, agent_spawned, ...
    nlohmann::json details = nlohmann::json::object();
};

void append_activity(SQLite::Database& db, std::int64_t team_id, EpochMs at,
                     const std::string& actor, const std::string& type,
                     const nlohmann::json& details);

struct ActivityQuery {
    std::optional<std::string> type;
    std::int64_t since_id = 0;  // only entries with a greater id
    std::optional<int> limit;
};

// Oldest first.
std::vector<ActivityEntry> list_activity(SQLite::Database& db, std::int64_t team_id,
                                         const ActivityQuery& query);

nlohmann::json to_json(const ActivityEntry& entry);

}  // namespace team
