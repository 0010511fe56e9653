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
#include "state/task_rows.hpp"

namespace team::tasks {

// Every task of `agent` (a member name) that is not completed or deleted goes back to the pool
// (or to `to`): state/task_rows.hpp, hand_back_tasks. Returns their ids, lowest first.
inline std::vector<std::string> reassign_tasks(
    SQLite::Database& db, std::int64_t team_id, const std::string& agent, EpochMs at,
    const std::optional<std::string>& to = std::nullopt) {
    return hand_back_tasks(db, team_id, agent, at, to);
}

}  // namespace team::tasks
