#include "team/teams.hpp"

#include <SQLiteCpp/SQLiteCpp.h>
#include <sys/stat.h>

#include "base/error.hpp"
#include "base/names.hpp"
#include "state/activity.hpp"
#include "state/sql.hpp"
#include "state/team_lock.hpp"
#include "tasks/tasks.hpp"

namespace team {

namespace {

constexpr size_t kMaxText = 1 << 20;  // 1 MiB, as for message texts (SPEC 5)

const char* const kTeamColumns = R"sql(
    t.id, t.name, t.description, t.cwd, t.leader, t.status, t.created_at, t.dissolved_at,
    (SELECT count(*) FROM agents a WHERE a.team_id = t.id AND NOT a.is_leader
                                     AND a.status <> 'terminated'),
    (SELECT count(*) FROM agents a WHERE a.team_id = t.id AND NOT a.is_leader)
)sql";

// "SELECT <the team columns><rest>". Not inlined: GCC 12 warns falsely of array bounds
// (-Warray-bounds) on chains of std::string operator+ once they are inlined here.
[[gnu::noinline]] std::string select_teams(const char* rest) {
    std::string sql = "SELECT ";
    sql += kTeamColumns;
    sql += rest;
    return sql;
}

TeamRecord read_team(SQLite::Statement& row) {
    TeamRecord t;
    t.id = row.getColumn(0).getInt64();
    t.name = row.getColumn(1).getString();
    t.description = row.getColumn(2).getString();
    t.cwd = row.getColumn(3).getString();
    t.leader = row.getColumn(4).getString();
    t.status = state_from<TeamState>(row.getColumn(5).getString());
    t.created_at = row.getColumn(6).getInt64();
    if (!row.getColumn(7).isNull()) t.dissolved_at = row.getColumn(7).getInt64();
    t.live_agents = row.getColumn(8).getInt();
    t.total_agents = row.getColumn(9).getInt();
    return t;
}

std::vector<std::string> team_names(SQLite::Database& db) {
    SQLite::Statement names(db, "SELECT DISTINCT name FROM teams ORDER BY name");
    std::vector<std::string> out;
    while (names.executeStep()) out.push_back(names.getColumn(0).getString());
    return out;
}

}  // namespace

TeamRecord Teams::create(const CreateRequest& request) {
    check_name(request.name, "team name");
    check_name(request.leader, "leader name");
    if (request.description.size() > kMaxText) {
        throw usage_error("the description is longer than 1 MiB");
    }
    struct stat st {};
    if (::stat(request.cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        throw usage_error("--cwd " + quote(request.cwd) + " is not an existing directory");
    }
    std::string cwd = std::filesystem::canonical(request.cwd).string();
    EpochMs now = clock_.now();

    std::int64_t id = store_.write([&] {
        auto& db = store_.db();
        SQLite::Statement exists(db, "SELECT 1 FROM teams WHERE name = ? AND status = 'active'");
        exists.bind(1, request.name);
        if (exists.executeStep()) {
            throw refused("team " + quote(request.name) + " already exists");
        }
        SQLite::Statement insert(db, R"sql(
            INSERT INTO teams (name, description, cwd, leader, created_at) VALUES (?, ?, ?, ?, ?)
        )sql");
        insert.bind(1, request.name);
        insert.bind(2, request.description);
        insert.bind(3, cwd);
        insert.bind(4, request.leader);
        insert.bind(5, now);
        insert.exec();
        std::int64_t team_id = db.getLastInsertRowid();
        SQLite::Statement leader(db, R"sql(
            INSERT INTO agents (team_id, name, role, is_leader, status, cwd, created_at)
            VALUES (?, ?, 'leader', 1, 'active', ?, ?)
        )sql");
        leader.bind(1, team_id);
        leader.bind(2, request.leader);
        leader.bind(3, cwd);
        leader.bind(4, now);
        leader.exec();
        append_activity(db, team_id, now, request.leader + "@" + request.name, "team_created",
                        {{"description", request.description},
                         {"cwd", cwd},
                         {"leader", request.leader + "@" + request.name}});
        return team_id;
    });

    TeamRecord t;
    t.id = id;
    t.name = request.name;
    t.description = request.description;
    t.cwd = cwd;
    t.leader = request.leader;
    t.status = TeamState::active;
    t.created_at = now;
    return t;
}

TeamRecord Teams::find(const std::string& name) {
    check_name(name, "team name");
    auto& db = store_.db();
    SQLite::Statement select(db, select_teams(R"sql(
        FROM teams t WHERE t.name = ? ORDER BY t.status = 'active' DESC, t.id DESC LIMIT 1
    )sql"));
    select.bind(1, name);
    if (select.executeStep()) return read_team(select);
    throw team_not_found(name, team_names(db));
}

std::optional<TeamRecord> Teams::find_by_id(std::int64_t id) {
    SQLite::Statement select(store_.db(), select_teams(" FROM teams t WHERE t.id = ?"));
    select.bind(1, id);
    if (select.executeStep()) return read_team(select);
    return std::nullopt;
}

Error team_not_found(const std::string& name, const std::vector<std::string>& known) {
    check_name(name, "team name");
    return not_found("team " + quote(name) + " not found" + did_you_mean(name, known));
}

Error no_team_given(const std::vector<std::string>& live) {
    if (live.empty()) {
        return usage_error(
            "no team given, and there is no live team: create one with 'team create NAME' (a "
            "dissolved team is named explicitly: --team NAME)");
    }
    std::string names;
    for (const auto& t : live) names += (names.empty() ? "" : ", ") + t;
    return usage_error("no team given, and there are " + std::to_string(live.size()) + " teams (" +
                       names + "): name one with --team NAME or TEAM_NAME");
}

TeamRecord Teams::resolve(const std::optional<std::string>& name) {
    if (name) return find(*name);
    auto live = list(false);
    if (live.size() == 1) return live.front();
    std::vector<std::string> names;
    for (const auto& t : live) names.push_back(t.name);
    throw no_team_given(names);
}

std::vector<TeamRecord> Teams::list(bool include_dissolved) {
    // Open tasks from the counts the triggers keep (tasks/tasks.hpp), in the same query.
    std::string sql = select_teams(R"sql(,
        (SELECT COALESCE(sum(c.n), 0) FROM task_counts c
         WHERE c.team_id = t.id AND c.status IN ('pending', 'in_progress'))
        FROM teams t)sql");
    if (!include_dissolved) sql += " WHERE t.status = 'active'";
    sql += " ORDER BY t.id";
    SQLite::Statement select(store_.db(), sql);
    std::vector<TeamRecord> teams;
    while (select.executeStep()) {
        teams.push_back(read_team(select));
        teams.back().open_tasks = select.getColumn(10).getInt();
    }
    return teams;
}

TeamStatus Teams::status(const TeamRecord& team) {
    TeamStatus s{team, load_agents(store_, team, false), count_tasks_by_status(store_, team.id)};
    s.team.open_tasks = s.tasks["pending"] + s.tasks["in_progress"];
    return s;
}

bool Teams::exists(const TeamRecord& team) {
    SQLite::Statement select(store_.db(), "SELECT 1 FROM teams WHERE id = ?");
    select.bind(1, team.id);
    return select.executeStep();
}

void Teams::remove(const TeamRecord& team, const Caller& caller) {
    require_leader(caller, "delete the team");
    TeamLock lock(store_.home(), team.name);
    store_.write([&] {
        auto& db = store_.db();
        SQLite::Statement live(db, R"sql(
            SELECT count(*) FROM agents WHERE team_id = ? AND NOT is_leader
                                          AND status <> 'terminated'
        )sql");
        live.bind(1, team.id);
        live.executeStep();
        int n = live.getColumn(0).getInt();
        if (n > 0) {
            throw refused("team " + quote(team.name) + " has " + std::to_string(n) + " live agent" +
                          (n == 1 ? "" : "s") + "; stop them first with 'team teardown " +
                          team.name + "'");
        }
        SQLite::Statement del(db, "DELETE FROM teams WHERE id = ?");
        del.bind(1, team.id);
        if (del.exec() == 0) throw not_found("team " + quote(team.name) + " not found");
    });
}

Caller Teams::resolve_caller(const TeamRecord& team, const std::optional<std::string>& as) {
    std::string name = as && !as->empty() ? *as : team.leader;
    if (auto at = name.find('@'); at != std::string::npos) {
        std::string team_part = name.substr(at + 1);
        name = name.substr(0, at);
        if (team_part != team.name) {
            throw usage_error("caller " + quote(*as) + " belongs to team " + quote(team_part) +
                              ", but this command acts on team " + quote(team.name));
        }
    }
    check_name(name, "agent name");
    SQLite::Statement select(store_.db(), R"sql(
        SELECT is_leader, id FROM agents WHERE team_id = ? AND name = ? AND status <> 'terminated'
    )sql");
    select.bind(1, team.id);
    select.bind(2, name);
    if (select.executeStep()) {
        return Caller{name, team.name, select.getColumn(0).getInt() != 0,
                      select.getColumn(1).getInt64()};
    }
    throw not_found("caller " + quote(name) + " is not a live member of team " + quote(team.name) +
                    did_you_mean(name, live_member_names(store_.db(), team.id)));
}

void require_leader(const Caller& caller, const std::string& action) {
    if (!caller.is_leader) {
        throw refused("only the team leader can " + action + " (you are " + quote(caller.id()) +
                      ")");
    }
}

}  // namespace team
