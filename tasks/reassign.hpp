// Handing the tasks of a terminated agent back to the pool (SPEC 6, "Reassignment").
//
// Every path that terminates an agent (its process ending, reconciliation, kill-agent) calls
// this, in the same transaction as the termination. The task list arrives with issue 5; until
// then there are no tasks, so there is nothing to hand back and the result is always empty.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace SQLite {
class Database;
}

namespace team::tasks {

// Unowns every task of `agent` that is not completed or deleted (in_progress ones become
// pending, each gets the warning "Reassigned: previous owner NAME terminated"), or gives them
// to `to`. Returns the ids of those tasks.
std::vector<std::string> reassign_tasks(SQLite::Database& db, std::int64_t team_id,
                                        const std::string& agent,
                                        const std::optional<std::string>& to = std::nullopt);

}  // namespace team::tasks
