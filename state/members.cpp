#include "state/members.hpp"

#include "state/db.hpp"

#include "base/error.hpp"
#include "base/names.hpp"
#include "state/sql.hpp"

namespace team {

namespace {

AgentRecord read_agent(Statement& row, const std::string& team, const std::string& home) {
    AgentRecord a;
    a.id = row.getColumn(0).getInt64();
    a.name = row.getColumn(1).getString();
    a.team = team;
    a.role = row.getColumn(2).getString();
    a.is_leader = row.getColumn(3).getInt() != 0;
    a.status = state_from<AgentStatus>(row.getColumn(4).getString());
    a.pane_id = column_or_null<std::string>(row.getColumn(5));
    a.pid = column_or_null<std::int64_t>(row.getColumn(6));
    a.color = column_or_null<std::string>(row.getColumn(7));
    a.command = nlohmann::json::parse(row.getColumn(8).getString(), nullptr, false);
    a.cwd = column_or_null<std::string>(row.getColumn(9));
    a.created_at = row.getColumn(10).getInt64();
    a.terminated_at = column_or_null<EpochMs>(row.getColumn(11));
    a.exit_code = column_or_null<int>(row.getColumn(12));
    a.signal = column_or_null<std::string>(row.getColumn(13));
    a.exit_reason = column_or_null<std::string>(row.getColumn(14));
    a.team_id = row.getColumn(15).getInt64();
    a.env = nlohmann::json::parse(row.getColumn(16).getString(), nullptr, false)
                .get<std::vector<std::string>>();
    a.pid_start = column_or_null<std::int64_t>(row.getColumn(17));
    a.supervisor_pid = column_or_null<std::int64_t>(row.getColumn(18));
    a.supervisor_start = column_or_null<std::int64_t>(row.getColumn(19));
    a.log_file = column_or_null<std::string>(row.getColumn(20));
    a.spawn_error = column_or_null<std::string>(row.getColumn(21));
    a.spawner_pid = column_or_null<std::int64_t>(row.getColumn(22));
    a.spawner_start = column_or_null<std::int64_t>(row.getColumn(23));
    a.notify = row.getColumn(24).getInt() != 0;
    a.home_id = column_or_null<std::string>(row.getColumn(25));
    // Another home's pane id names a pane of that home's tmux server, not of ours (where the
    // same id may be one of our own agents'): never handed to anything that types or looks.
    if (!a.lives_in(home)) a.pane_id.reset();
    return a;
}

const char* const kAgentColumns = R"sql(
    id, name, role, is_leader, status, pane_id, pid, color, command, cwd, created_at,
    terminated_at, exit_code, signal, exit_reason, team_id, env, pid_start_time, supervisor_pid,
    supervisor_start, log_file, spawn_error, spawner_pid, spawner_start, notify, home_id
)sql";
// How many columns kAgentColumns has: a query's own columns come after them.
constexpr int kAgentColumnCount = 26;

}  // namespace

std::vector<std::string> live_member_names(Db& db, std::int64_t team_id) {
    Statement names(db, "SELECT name FROM agents WHERE team_id = ? AND status <> 'terminated'");
    names.bind(1, team_id);
    std::vector<std::string> out;
    while (names.executeStep()) out.push_back(names.getColumn(0).getString());
    return out;
}

std::vector<AgentRecord> load_agents(Store& store, const TeamRecord& team,
                                     bool include_terminated) {
    std::string sql =
        std::string("SELECT ") + kAgentColumns + " FROM agents WHERE team_id = ? AND is_leader = 0";
    if (!include_terminated) sql += " AND status <> 'terminated'";
    sql += " ORDER BY id";
    Statement select(store.db(), sql);
    select.bind(1, team.id);
    std::vector<AgentRecord> agents;
    while (select.executeStep()) agents.push_back(read_agent(select, team.name, store.home_id()));
    return agents;
}

std::optional<AgentRecord> load_agent(Store& store, std::int64_t id) {
    Statement select(store.db(), std::string("SELECT ") + kAgentColumns +
                                     ", (SELECT name FROM teams t WHERE t.id = a.team_id)"
                                     " FROM agents a WHERE id = ?");
    select.bind(1, id);
    if (!select.executeStep()) return std::nullopt;
    return read_agent(select, select.getColumn(kAgentColumnCount).getString(), store.home_id());
}

std::optional<AgentRecord> find_member(Store& store, const TeamRecord& team,
                                       const std::string& name) {
    Statement select(store.db(), std::string("SELECT ") + kAgentColumns + R"sql(
        FROM agents WHERE team_id = ? AND name = ?
        ORDER BY status = 'terminated', id DESC LIMIT 1
    )sql");
    select.bind(1, team.id);
    select.bind(2, name);
    if (!select.executeStep()) return std::nullopt;
    return read_agent(select, team.name, store.home_id());
}

std::vector<AgentRecord> live_member_panes(Store& store, const TeamRecord& team) {
    std::vector<AgentRecord> out;
    Statement select(store.db(), R"sql(
        SELECT id, name, pane_id FROM agents
        WHERE team_id = ? AND status <> 'terminated' AND (home_id IS NULL OR home_id = ?)
        ORDER BY id
    )sql");
    select.bind(1, team.id);
    select.bind(2, store.home_id());
    while (select.executeStep()) {
        AgentRecord a;
        a.id = select.getColumn(0).getInt64();
        a.name = select.getColumn(1).getString();
        a.team = team.name;
        a.team_id = team.id;
        a.status = AgentStatus::active;
        a.pane_id = column_or_null<std::string>(select.getColumn(2));
        out.push_back(std::move(a));
    }
    return out;
}

bool live_member_exists(Store& store, std::int64_t team_id, const std::string& name) {
    Statement exists(
        store.db(),
        "SELECT 1 FROM agents WHERE team_id = ? AND name = ? AND status <> 'terminated'");
    exists.bind(1, team_id);
    exists.bind(2, name);
    return exists.executeStep();
}

std::vector<std::string> live_member_colors(Store& store, std::int64_t team_id) {
    std::vector<std::string> used;
    Statement colors(store.db(),
                     "SELECT color FROM agents WHERE team_id = ? AND status <> "
                     "'terminated' AND color IS NOT NULL");
    colors.bind(1, team_id);
    while (colors.executeStep()) used.push_back(colors.getColumn(0).getString());
    return used;
}

std::int64_t insert_spawning_agent(Store& store, const AgentRecord& agent, const Spawner& spawner) {
    Statement insert(store.db(), R"sql(
        INSERT INTO agents (team_id, name, role, status, color, command, cwd, env, created_at,
                            spawner_pid, spawner_start, notify, home_id)
        VALUES (?, ?, ?, 'spawning', ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id
    )sql");
    insert.bind(1, agent.team_id);
    insert.bind(2, agent.name);
    insert.bind(3, agent.role);
    bind_or_null(insert, 4, agent.color);
    insert.bind(5, agent.command.dump());
    bind_or_null(insert, 6, agent.cwd);
    insert.bind(7, nlohmann::json(agent.env).dump());
    insert.bind(8, agent.created_at);
    insert.bind(9, spawner.pid);
    insert.bind(10, spawner.start);
    insert.bind(11, agent.notify ? 1 : 0);
    insert.bind(12, store.home_id());
    insert.executeStep();
    return insert.getColumn(0).getInt64();
}

bool restart_agent(Store& store, std::int64_t agent_id, const nlohmann::json& command,
                   const Spawner& spawner) {
    Statement up(store.db(), R"sql(
        UPDATE agents SET status = 'spawning', command = ?, pane_id = NULL, pid = NULL,
            pid_start_time = NULL, supervisor_pid = NULL, supervisor_start = NULL,
            terminated_at = NULL, exit_code = NULL, signal = NULL, exit_reason = NULL,
            spawn_error = NULL, spawner_pid = ?, spawner_start = ?, home_id = ?
        WHERE id = ? AND status = 'terminated'
          AND NOT EXISTS (SELECT 1 FROM agents o WHERE o.team_id = agents.team_id
                          AND o.name = agents.name AND o.status <> 'terminated')
    )sql");
    up.bind(1, command.dump());
    up.bind(2, spawner.pid);
    up.bind(3, spawner.start);
    up.bind(4, store.home_id());
    up.bind(5, agent_id);
    return up.exec() > 0;
}

void set_agent_log_file(Store& store, std::int64_t agent_id, const std::string& log_file) {
    Statement log(store.db(), "UPDATE agents SET log_file = ? WHERE id = ?");
    log.bind(1, log_file);
    log.bind(2, agent_id);
    log.exec();
}

void set_agent_spawn_error(Store& store, std::int64_t agent_id, const std::string& error) {
    Statement up(store.db(), "UPDATE agents SET spawn_error = ? WHERE id = ?");
    up.bind(1, error);
    up.bind(2, agent_id);
    up.exec();
}

void delete_agent(Store& store, std::int64_t agent_id) {
    Statement del(store.db(), "DELETE FROM agents WHERE id = ?");
    del.bind(1, agent_id);
    del.exec();
}

bool record_agent_started(Store& store, std::int64_t agent_id, const AgentStart& start) {
    Statement up(store.db(), std::string(R"sql(
        UPDATE agents SET status = 'active', pid = ?, pid_start_time = ?, supervisor_pid = ?,
                          supervisor_start = ?, pane_id = ?
        WHERE id = ? AND status = 'spawning')sql") +
                                 (start.spawner ? " AND spawner_pid = ?" : ""));
    up.bind(1, start.pid);
    up.bind(2, start.pid_start);
    up.bind(3, start.supervisor_pid);
    up.bind(4, start.supervisor_start);
    bind_or_null(up, 5, start.pane_id);
    up.bind(6, agent_id);
    if (start.spawner) up.bind(7, *start.spawner);
    return up.exec() == 1;
}

void member_not_found(Store& store, const TeamRecord& team, const std::string& name) {
    throw not_found("agent " + quote(name) + " not found in team " + quote(team.name) +
                    did_you_mean(name, live_member_names(store.db(), team.id)));
}

std::optional<AgentRecord> find_leader(Store& store, std::int64_t team_id) {
    Statement select(store.db(),
                     "SELECT id FROM agents WHERE team_id = ? AND is_leader = 1 "
                     "ORDER BY status = 'terminated', id DESC LIMIT 1");
    select.bind(1, team_id);
    if (!select.executeStep()) return std::nullopt;
    return load_agent(store, select.getColumn(0).getInt64());
}

std::optional<AgentRecord> live_leader_name(Store& store, std::int64_t team_id) {
    Statement leader(store.db(),
                     "SELECT id, name FROM agents WHERE team_id = ? AND is_leader = 1 "
                     "AND status <> 'terminated' LIMIT 1");
    leader.bind(1, team_id);
    if (!leader.executeStep()) return std::nullopt;
    AgentRecord to;
    to.id = leader.getColumn(0).getInt64();
    to.name = leader.getColumn(1).getString();
    return to;
}

int count_live_agents(Store& store, std::int64_t team_id) {
    Statement live(store.db(), R"sql(
        SELECT count(*) FROM agents WHERE team_id = ? AND is_leader = 0
                                      AND status <> 'terminated'
    )sql");
    live.bind(1, team_id);
    live.executeStep();
    return live.getColumn(0).getInt();
}

std::optional<Caller> find_live_caller(Store& store, const TeamRecord& team,
                                       const std::string& name) {
    Statement select(store.db(), R"sql(
        SELECT is_leader, id FROM agents WHERE team_id = ? AND name = ? AND status <> 'terminated'
    )sql");
    select.bind(1, team.id);
    select.bind(2, name);
    if (!select.executeStep()) return std::nullopt;
    return Caller{name, team.name, select.getColumn(0).getInt() != 0,
                  select.getColumn(1).getInt64()};
}

std::vector<std::string> agent_log_files(Store& store, std::int64_t team_id) {
    Statement logs(store.db(),
                   "SELECT log_file FROM agents WHERE team_id = ? AND "
                   "log_file IS NOT NULL");
    logs.bind(1, team_id);
    std::vector<std::string> out;
    while (logs.executeStep()) out.push_back(logs.getColumn(0).getString());
    return out;
}

bool other_live_member_exists(Store& store, std::int64_t team_id, const std::string& name,
                              std::int64_t except) {
    Statement live(store.db(), R"sql(
        SELECT 1 FROM agents WHERE team_id = ? AND name = ? AND status <> 'terminated'
                               AND id <> ?
    )sql");
    live.bind(1, team_id);
    live.bind(2, name);
    live.bind(3, except);
    return live.executeStep();
}

void insert_leader(Store& store, std::int64_t team_id, const std::string& name,
                   const std::string& cwd, EpochMs at) {
    Statement leader(store.db(), R"sql(
        INSERT INTO agents (team_id, name, role, is_leader, status, cwd, created_at)
        VALUES (?, ?, 'leader', 1, 'active', ?, ?)
    )sql");
    leader.bind(1, team_id);
    leader.bind(2, name);
    leader.bind(3, cwd);
    leader.bind(4, at);
    leader.exec();
}

bool set_agent_shutting_down(Store& store, std::int64_t agent_id) {
    Statement status(
        store.db(),
        "UPDATE agents SET status = 'shutting_down' WHERE id = ? AND status = 'active'");
    status.bind(1, agent_id);
    return status.exec() != 0;
}

void set_agent_active_again(Store& store, std::int64_t agent_id) {
    Statement back(store.db(),
                   "UPDATE agents SET status = 'active' WHERE id = ? AND status = 'shutting_down'");
    back.bind(1, agent_id);
    back.exec();
}

bool mark_agent_terminated(Store& store, std::int64_t agent_id, const AgentExit& exit) {
    Statement up(store.db(), R"sql(
        UPDATE agents SET status = 'terminated', terminated_at = ?, exit_reason = ?,
                          exit_code = ?, signal = ?
        WHERE id = ? AND status <> 'terminated'
    )sql");
    up.bind(1, exit.at);
    up.bind(2, exit.reason);
    bind_or_null(up, 3, exit.exit_code);
    bind_or_null(up, 4, exit.signal);
    up.bind(5, agent_id);
    return up.exec() != 0;
}

}  // namespace team
