#include "tasks/reassign.hpp"

#include <SQLiteCpp/SQLiteCpp.h>

#include "state/sql.hpp"

namespace team::tasks {

std::vector<std::string> reassign_tasks(SQLite::Database& db, std::int64_t team_id,
                                        const std::string& agent, EpochMs at,
                                        const std::optional<std::string>& to) {
    SQLite::Statement select(db, R"sql(
        SELECT id FROM tasks INDEXED BY tasks_owner
        WHERE team_id = ? AND owner = ? AND status IN ('pending', 'in_progress') ORDER BY id
    )sql");
    select.bind(1, team_id);
    select.bind(2, agent);
    std::vector<std::string> ids;
    while (select.executeStep()) ids.push_back(std::to_string(select.getColumn(0).getInt64()));
    if (ids.empty()) return ids;

    SQLite::Statement hand_back(db, R"sql(
        UPDATE tasks INDEXED BY tasks_owner
        SET owner = ?, claimed_at = NULL, status = 'pending', warning = ?, updated_at = ?
        WHERE team_id = ? AND owner = ? AND status IN ('pending', 'in_progress')
    )sql");
    bind_or_null(hand_back, 1, to);
    hand_back.bind(2, "Reassigned: previous owner " + agent + " terminated");
    hand_back.bind(3, at);
    hand_back.bind(4, team_id);
    hand_back.bind(5, agent);
    hand_back.exec();
    return ids;
}

}  // namespace team::tasks
