// The activity log (SPEC 10): an append-only audit trail per team, written in the same
// transaction as the change it records.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/time.hpp"
#include "state/db.hpp"

namespace team {

struct ActivityEntry {
    std::int64_t id = 0;
    std::optional<std::string> team;  // the team's name; none for an entry of the home itself
    EpochMs at = 0;
    std::string actor;  // name@team of whoever asked for it
    std::string type;   // team_created, agent_spawned, ...
    nlohmann::json details = nlohmann::json::object();
};

// `team_id` none: an entry of the home itself (a shell started outside any team). While an
// ActivityVia is alive on this thread, `details` also gets "via" (the face the request came
// through, "web" for `team serve`), so the log shows where a change was asked for.
void append_activity(Db& db, std::optional<std::int64_t> team_id, EpochMs at,
                     const std::string& actor, const std::string& type,
                     const nlohmann::json& details);

// Marks every entry this thread appends while it lives as asked for through `via` (none: no
// mark). The HTTP API sets it around each operation it runs; faces that say nothing add nothing.
class ActivityVia {
  public:
    explicit ActivityVia(const std::optional<std::string>& via);
    ~ActivityVia();
    ActivityVia(const ActivityVia&) = delete;
    ActivityVia& operator=(const ActivityVia&) = delete;

  private:
    const std::string* previous_;
};

// The id of the newest entry of the home; 0 when there is none.
std::int64_t last_activity_id(Db& db);

struct ActivityQuery {
    std::optional<std::string> type;
    std::int64_t since_id = 0;  // only entries with a greater id
    std::optional<int> limit;
};

// Oldest first: the entries of one team, or with `team_id` none every entry of the home.
std::vector<ActivityEntry> list_activity(Db& db, std::optional<std::int64_t> team_id,
                                         const ActivityQuery& query);

nlohmann::json to_json(const ActivityEntry& entry);

}  // namespace team
