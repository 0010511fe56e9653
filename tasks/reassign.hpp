// Handing the tasks of a terminated agent back to the pool (SPEC 6, "Reassignment").
//
// Every path that terminates an agent (its process ending, reconciliation, kill-agent) calls
// this, in the same transaction as the termination, so no task is ever left owned by a
// terminated agent.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/time.hpp"

namespace SQLite {
class Database;
}

namespace team::tasks {

// Every task of `agent` (a member name) that is not completed or deleted loses its owner and its
// claim time, becomes pending, and gets the warning "Reassigned: previous owner NAME
// terminated"; with `to`, they are given to that member instead (still pending). Returns the
// ids of those tasks, as strings, lowest first.
std::vector<std::string> reassign_tasks(SQLite::Database& db, std::int64_t team_id,
                                        const std::string& agent, EpochMs at,
                                        const std::optional<std::string>& to = std::nullopt);

}  // namespace team::tasks
