#include "state/task_rows.hpp"

#include <algorithm>

#include "state/db.hpp"

#include "state/sql.hpp"

namespace team {

namespace {

// The columns read_task reads, in its order.
#define TEAM_TASK_COLUMNS \
    "id, subject, description, status, owner, claimed_at, warning, created_at, updated_at, epoch"

// True (as SQL) while a blocker of the task `outer`.id is unfinished.
std::string blocked_sql(const std::string& outer) {
    return "EXISTS (SELECT 1 FROM task_blockers b JOIN tasks x ON x.team_id = b.team_id AND "
           "x.id = b.blocker WHERE b.team_id = " +
           outer + ".team_id AND b.task_id = " + outer +
           ".id AND x.status IN ('pending', 'in_progress'))";
}

TaskRecord read_task(Statement& row) {
    TaskRecord t;
    t.id = row.getColumn(0).getInt64();
    t.subject = row.getColumn(1).getString();
    t.description = row.getColumn(2).getString();
    t.status = state_from<TaskStatus>(row.getColumn(3).getString());
    t.owner = column_or_null<std::string>(row.getColumn(4));
    t.claimed_at = column_or_null<EpochMs>(row.getColumn(5));
    t.warning = column_or_null<std::string>(row.getColumn(6));
    t.created_at = row.getColumn(7).getInt64();
    t.updated_at = row.getColumn(8).getInt64();
    t.epoch = row.getColumn(9).getInt64();
    return t;
}

}  // namespace

std::optional<TaskRecord> find_task(Store& store, std::int64_t team_id, std::int64_t id) {
    // The task and its blockers in one statement (one round trip to a server): a row a blocker,
    // or one row with a null blocker.
    Statement select(store.db(), "SELECT " TEAM_TASK_COLUMNS
                                 ", b.blocker FROM tasks t LEFT JOIN task_blockers b ON "
                                 "b.team_id = t.team_id AND b.task_id = t.id "
                                 "WHERE t.team_id = ? AND t.id = ? ORDER BY b.blocker");
    select.bind(1, team_id);
    select.bind(2, id);
    if (!select.executeStep()) return std::nullopt;
    TaskRecord t = read_task(select);
    do {
        if (!select.getColumn(10).isNull()) {
            t.blocked_by.push_back(select.getColumn(10).getInt64());
        }
    } while (select.executeStep());
    return t;
}

std::vector<TaskRecord> list_tasks(Store& store, std::int64_t team_id, const TaskQuery& query) {
    // Named indexes: without statistics, SQLite would rather walk the whole team in id order
    // (the primary key) than sort a few rows, which is 100,000 rows for 10 available ones.
    std::string sql = "SELECT " TEAM_TASK_COLUMNS " FROM tasks t";
    if (query.available || query.status) {
        sql += " INDEXED BY tasks_status";
    } else if (query.owner) {
        sql += " INDEXED BY tasks_owner";
    }
    sql += " WHERE team_id = ?";
    if (query.status) {
        sql += " AND status = ?";
    } else if (!query.available) {
        sql += " AND status <> 'deleted'";
    }
    if (query.owner) sql += " AND owner = ?";
    if (query.available) {
        sql += " AND status = 'pending' AND owner IS NULL AND NOT " + blocked_sql("t");
    }
    sql += " ORDER BY id";
    Statement select(store.db(), sql);
    int i = 0;
    select.bind(++i, team_id);
    if (query.status) select.bind(++i, std::string(str(*query.status)));
    if (query.owner) select.bind(++i, *query.owner);
    std::vector<TaskRecord> out;
    while (select.executeStep()) out.push_back(read_task(select));
    if (out.empty()) return out;

    // Blockers of the listed tasks, in one pass over the team's blocker rows.
    Statement blockers(store.db(), R"sql(
        SELECT task_id, blocker FROM task_blockers
        WHERE team_id = ? AND task_id BETWEEN ? AND ? ORDER BY task_id, blocker
    )sql");
    blockers.bind(1, team_id);
    blockers.bind(2, out.front().id);
    blockers.bind(3, out.back().id);
    auto it = out.begin();
    while (blockers.executeStep()) {
        auto task_id = blockers.getColumn(0).getInt64();
        while (it != out.end() && it->id < task_id) ++it;
        if (it == out.end()) break;
        if (it->id == task_id) it->blocked_by.push_back(blockers.getColumn(1).getInt64());
    }
    return out;
}

std::optional<std::int64_t> first_available_task(Store& store, std::int64_t team_id) {
    Statement first(
        store.db(),
        "SELECT id FROM tasks t INDEXED BY tasks_status WHERE team_id = ? AND status = "
        "'pending' AND owner IS NULL AND NOT " +
            blocked_sql("t") + " ORDER BY id LIMIT 1" +
            (store.engine() == Db::Engine::postgresql ? " FOR UPDATE OF t SKIP LOCKED" : ""));
    first.bind(1, team_id);
    if (!first.executeStep()) return std::nullopt;
    return first.getColumn(0).getInt64();
}

std::string unfinished_blockers(Store& store, std::int64_t team_id, std::int64_t id) {
    Statement select(store.db(), R"sql(
        SELECT x.id, x.status FROM task_blockers b
        JOIN tasks x ON x.team_id = b.team_id AND x.id = b.blocker
        WHERE b.team_id = ? AND b.task_id = ? AND x.status IN ('pending', 'in_progress')
        ORDER BY x.id
    )sql");
    select.bind(1, team_id);
    select.bind(2, id);
    std::string out;
    while (select.executeStep()) {
        if (!out.empty()) out += ", ";
        out += std::to_string(select.getColumn(0).getInt64()) + " (" +
               select.getColumn(1).getString() + ")";
    }
    return out;
}

std::int64_t insert_task(Store& store, std::int64_t team_id, const std::string& subject,
                         const std::string& description, const std::optional<std::string>& owner,
                         const std::vector<std::int64_t>& blockers, EpochMs now) {
    auto& db = store.db();
    Statement next(db, "SELECT COALESCE(MAX(id), 0) + 1 FROM tasks WHERE team_id = ?");
    next.bind(1, team_id);
    next.executeStep();
    std::int64_t id = next.getColumn(0).getInt64();
    Statement insert(db, R"sql(
        INSERT INTO tasks (team_id, id, subject, description, status, owner, created_at,
                           updated_at)
        VALUES (?, ?, ?, ?, 'pending', ?, ?, ?)
    )sql");
    insert.bind(1, team_id);
    insert.bind(2, id);
    insert.bind(3, subject);
    insert.bind(4, description);
    bind_or_null(insert, 5, owner);
    insert.bind(6, now);
    insert.bind(7, now);
    insert.exec();
    Statement block(db, "INSERT INTO task_blockers (team_id, task_id, blocker) VALUES (?, ?, ?)");
    for (auto b : blockers) {
        block.bind(1, team_id);
        block.bind(2, id);
        block.bind(3, b);
        block.exec();
        block.reset();
    }
    return id;
}

bool claim_task_row(Store& store, std::int64_t team_id, std::int64_t id, const std::string& owner,
                    EpochMs now) {
    Statement take(store.db(), R"sql(
        UPDATE tasks SET status = 'in_progress', owner = ?, claimed_at = ?, updated_at = ?,
                         handed_back_from = NULL
        WHERE team_id = ? AND id = ? AND status = 'pending' AND (owner IS NULL OR owner = ?)
          AND NOT )sql" + blocked_sql("tasks"));
    take.bind(1, owner);
    take.bind(2, now);
    take.bind(3, now);
    take.bind(4, team_id);
    take.bind(5, id);
    take.bind(6, owner);
    return take.exec() != 0;
}

void update_task_row(Store& store, std::int64_t team_id, std::int64_t id, TaskStatus status,
                     const std::optional<std::string>& owner, std::optional<EpochMs> claimed_at,
                     const std::string& subject, const std::string& description, EpochMs now) {
    Statement up(store.db(), R"sql(
        UPDATE tasks SET handed_back_from = NULL, status = ?, owner = ?, claimed_at = ?,
                         subject = ?, description = ?,
                         updated_at = ?
        WHERE team_id = ? AND id = ?
    )sql");
    up.bind(1, std::string(str(status)));
    bind_or_null(up, 2, owner);
    bind_or_null(up, 3, claimed_at);
    up.bind(4, subject);
    up.bind(5, description);
    up.bind(6, now);
    up.bind(7, team_id);
    up.bind(8, id);
    up.exec();
}

std::vector<std::string> hand_back_tasks(Db& db, std::int64_t team_id, const std::string& agent,
                                         EpochMs at, const std::optional<std::string>& to) {
    Statement select(db, R"sql(
        SELECT id FROM tasks INDEXED BY tasks_owner
        WHERE team_id = ? AND owner = ? AND status IN ('pending', 'in_progress') ORDER BY id
    )sql");
    select.bind(1, team_id);
    select.bind(2, agent);
    std::vector<std::string> ids;
    while (select.executeStep()) ids.push_back(std::to_string(select.getColumn(0).getInt64()));
    if (ids.empty()) return ids;

    Statement hand_back(db, R"sql(
        UPDATE tasks INDEXED BY tasks_owner
        SET owner = ?, claimed_at = NULL, status = 'pending', warning = ?, updated_at = ?,
            handed_back_from = ?, handed_back_status = status, epoch = epoch + 1
        WHERE team_id = ? AND owner = ? AND status IN ('pending', 'in_progress')
    )sql");
    bind_or_null(hand_back, 1, to);
    hand_back.bind(2, "Reassigned: previous owner " + agent + " terminated");
    hand_back.bind(3, at);
    // Remembered for the agent's resume (SPEC 19), when nobody was given them.
    bind_or_null(hand_back, 4, to ? std::nullopt : std::optional<std::string>(agent));
    hand_back.bind(5, team_id);
    hand_back.bind(6, agent);
    hand_back.exec();
    return ids;
}

std::vector<std::string> take_back_tasks(Db& db, std::int64_t team_id, const std::string& agent,
                                         EpochMs at) {
    Statement take(db, R"sql(
        UPDATE tasks
        SET owner = handed_back_from, status = handed_back_status,
            claimed_at = CASE WHEN handed_back_status = 'in_progress' THEN CAST(? AS BIGINT)
                              ELSE NULL END,
            warning = NULL, updated_at = ?, epoch = epoch + 1, handed_back_from = NULL
        WHERE team_id = ? AND handed_back_from = ? AND owner IS NULL AND status = 'pending'
        RETURNING id
    )sql");
    take.bind(1, at);
    take.bind(2, at);
    take.bind(3, team_id);
    take.bind(4, agent);
    std::vector<std::int64_t> ids;
    while (take.executeStep()) ids.push_back(take.getColumn(0).getInt64());
    std::sort(ids.begin(), ids.end());
    std::vector<std::string> out;
    for (auto id : ids) out.push_back(std::to_string(id));
    return out;
}

std::map<std::string, int> count_tasks_by_status(Store& store, std::int64_t team_id) {
    std::map<std::string, int> counts{
        {"pending", 0}, {"in_progress", 0}, {"completed", 0}, {"deleted", 0}};
    Statement select(store.db(), "SELECT status, n FROM task_counts WHERE team_id = ?");
    select.bind(1, team_id);
    while (select.executeStep()) {
        counts[select.getColumn(0).getString()] = select.getColumn(1).getInt();
    }
    return counts;
}

std::map<std::string, int> open_tasks_by_owner(Store& store, std::int64_t team_id) {
    std::map<std::string, int> counts;
    Statement select(store.db(), R"sql(
        SELECT a.name, (SELECT count(*) FROM tasks t INDEXED BY tasks_owner
                        WHERE t.team_id = a.team_id AND t.owner = a.name
                          AND t.status IN ('pending', 'in_progress'))
        FROM agents a WHERE a.team_id = ? AND a.status <> 'terminated'
    )sql");
    select.bind(1, team_id);
    while (select.executeStep()) {
        if (int n = select.getColumn(1).getInt()) counts[select.getColumn(0).getString()] = n;
    }
    return counts;
}

}  // namespace team
