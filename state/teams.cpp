#include "state/teams.hpp"

#include "state/db.hpp"

#include "state/sql.hpp"

namespace team {

namespace {

const char* const kTeamColumns = R"sql(
    t.id, t.name, t.description, t.cwd, t.leader, t.status, t.created_at, t.dissolved_at,
    (SELECT count(*) FROM agents a WHERE a.team_id = t.id AND a.is_leader = 0
                                     AND a.status <> 'terminated'),
    (SELECT count(*) FROM agents a WHERE a.team_id = t.id AND a.is_leader = 0)
)sql";

// "SELECT <the team columns><rest>". Not inlined: GCC 12 warns falsely of array bounds
// (-Warray-bounds) on chains of std::string operator+ once they are inlined here.
[[gnu::noinline]] std::string select_teams(const char* rest) {
    std::string sql = "SELECT ";
    sql += kTeamColumns;
    sql += rest;
    return sql;
}

TeamRecord read_team(Statement& row) {
    TeamRecord t;
    t.id = row.getColumn(0).getInt64();
    t.name = row.getColumn(1).getString();
    t.description = row.getColumn(2).getString();
    t.cwd = row.getColumn(3).getString();
    t.leader = row.getColumn(4).getString();
    t.status = state_from<TeamState>(row.getColumn(5).getString());
    t.created_at = row.getColumn(6).getInt64();
    t.dissolved_at = column_or_null<EpochMs>(row.getColumn(7));
    t.live_agents = row.getColumn(8).getInt();
    t.total_agents = row.getColumn(9).getInt();
    return t;
}

}  // namespace

bool team_is_active(Store& store, std::int64_t team_id) {
    Statement live_team(store.db(), "SELECT 1 FROM teams WHERE id = ? AND status = 'active'");
    live_team.bind(1, team_id);
    return live_team.executeStep();
}

std::optional<TeamRecord> find_team(Store& store, const std::string& name) {
    Statement select(store.db(), select_teams(R"sql(
        FROM teams t WHERE t.name = ? ORDER BY t.status = 'active' DESC, t.id DESC LIMIT 1
    )sql"));
    select.bind(1, name);
    if (select.executeStep()) return read_team(select);
    return std::nullopt;
}

std::optional<TeamRecord> find_team_by_id(Store& store, std::int64_t id) {
    Statement select(store.db(), select_teams(" FROM teams t WHERE t.id = ?"));
    select.bind(1, id);
    if (select.executeStep()) return read_team(select);
    return std::nullopt;
}

std::vector<std::string> team_names(Store& store) {
    Statement names(store.db(), "SELECT DISTINCT name FROM teams ORDER BY name");
    std::vector<std::string> out;
    while (names.executeStep()) out.push_back(names.getColumn(0).getString());
    return out;
}

std::vector<TeamRecord> list_teams(Store& store, bool include_dissolved) {
    // Open tasks from the counts the triggers keep (state/task_rows), in the same query.
    std::string sql = select_teams(R"sql(,
        (SELECT COALESCE(sum(c.n), 0) FROM task_counts c
         WHERE c.team_id = t.id AND c.status IN ('pending', 'in_progress'))
        FROM teams t)sql");
    if (!include_dissolved) sql += " WHERE t.status = 'active'";
    sql += " ORDER BY t.id";
    Statement select(store.db(), sql);
    std::vector<TeamRecord> teams;
    while (select.executeStep()) {
        teams.push_back(read_team(select));
        teams.back().open_tasks = select.getColumn(10).getInt();
    }
    return teams;
}

bool team_exists(Store& store, std::int64_t team_id) {
    Statement select(store.db(), "SELECT 1 FROM teams WHERE id = ?");
    select.bind(1, team_id);
    return select.executeStep();
}

bool active_team_exists(Store& store, const std::string& name) {
    Statement exists(store.db(), "SELECT 1 FROM teams WHERE name = ? AND status = 'active'");
    exists.bind(1, name);
    return exists.executeStep();
}

std::int64_t insert_team(Store& store, const TeamRecord& team) {
    Statement insert(store.db(), R"sql(
        INSERT INTO teams (name, description, cwd, leader, created_at) VALUES (?, ?, ?, ?, ?)
        RETURNING id
    )sql");
    insert.bind(1, team.name);
    insert.bind(2, team.description);
    insert.bind(3, team.cwd);
    insert.bind(4, team.leader);
    insert.bind(5, team.created_at);
    insert.executeStep();
    return insert.getColumn(0).getInt64();
}

void mark_team_dissolved(Store& store, std::int64_t team_id, EpochMs at) {
    Statement dissolve(store.db(),
                       "UPDATE teams SET status = 'dissolved', dissolved_at = ? "
                       "WHERE id = ? AND status = 'active'");
    dissolve.bind(1, at);
    dissolve.bind(2, team_id);
    dissolve.exec();
}

bool delete_team(Store& store, std::int64_t team_id) {
    Statement del(store.db(), "DELETE FROM teams WHERE id = ?");
    del.bind(1, team_id);
    return del.exec() != 0;
}

}  // namespace team
