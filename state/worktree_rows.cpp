#include "state/worktree_rows.hpp"

#include "state/db.hpp"

#include "state/sql.hpp"

namespace team {

namespace {

const char* const kColumns =
    "SELECT id, team_id, agent_id, agent, repo, path, branch, base, base_name, state, "
    "created_at, snapshot_owed, snapshot, removed_at, trash_path, git_state, git_state_at, "
    "git_conflicts FROM worktrees ";

// A JSON column; null when NULL or not JSON.
nlohmann::json json_or_null(const Column& c) {
    if (c.isNull()) return nullptr;
    auto doc = nlohmann::json::parse(c.getString(), nullptr, false);
    return doc.is_discarded() ? nlohmann::json(nullptr) : doc;
}

WorktreeRow read_row(Statement& s) {
    WorktreeRow w;
    w.id = s.getColumn(0).getInt64();
    w.team_id = s.getColumn(1).getInt64();
    w.agent_id = column_or_null<std::int64_t>(s.getColumn(2));
    w.agent = s.getColumn(3).getString();
    w.repo = s.getColumn(4).getString();
    w.path = s.getColumn(5).getString();
    w.branch = s.getColumn(6).getString();
    w.base = s.getColumn(7).getString();
    w.base_name = s.getColumn(8).getString();
    w.state = s.getColumn(9).getString();
    w.created_at = s.getColumn(10).getInt64();
    w.snapshot_owed = s.getColumn(11).getInt() != 0;
    w.snapshot = json_or_null(s.getColumn(12));
    w.removed_at = column_or_null<EpochMs>(s.getColumn(13));
    w.trash_path = column_or_null<std::string>(s.getColumn(14));
    w.git_state = json_or_null(s.getColumn(15));
    w.git_state_at = column_or_null<EpochMs>(s.getColumn(16));
    w.git_conflicts = json_or_null(s.getColumn(17));
    if (!w.git_conflicts.is_array()) w.git_conflicts = nlohmann::json::array();
    return w;
}

std::vector<WorktreeRow> read_all(Statement& s) {
    std::vector<WorktreeRow> rows;
    while (s.executeStep()) rows.push_back(read_row(s));
    return rows;
}

}  // namespace

std::optional<TeamRepo> load_team_repo(Store& store, std::int64_t team_id) {
    Statement s(store.db(), "SELECT repo, base, base_name FROM team_repos WHERE team_id = ?");
    s.bind(1, team_id);
    if (!s.executeStep()) return std::nullopt;
    return TeamRepo{s.getColumn(0).getString(), s.getColumn(1).getString(),
                    s.getColumn(2).getString()};
}

void insert_team_repo(Store& store, std::int64_t team_id, const TeamRepo& repo) {
    Statement s(store.db(),
                "INSERT INTO team_repos (team_id, repo, base, base_name) VALUES (?, ?, ?, ?)");
    s.bind(1, team_id);
    s.bind(2, repo.repo);
    s.bind(3, repo.base);
    s.bind(4, repo.base_name);
    s.exec();
}

std::int64_t insert_worktree(Store& store, const WorktreeRow& w) {
    Statement s(store.db(), R"sql(
        INSERT INTO worktrees (team_id, agent_id, agent, repo, path, branch, base, base_name,
                               state, created_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id
    )sql");
    s.bind(1, w.team_id);
    bind_or_null(s, 2, w.agent_id);
    s.bind(3, w.agent);
    s.bind(4, w.repo);
    s.bind(5, w.path);
    s.bind(6, w.branch);
    s.bind(7, w.base);
    s.bind(8, w.base_name);
    s.bind(9, w.state);
    s.bind(10, w.created_at);
    s.executeStep();
    return s.getColumn(0).getInt64();
}

std::optional<WorktreeRow> load_worktree(Store& store, std::int64_t id) {
    Statement s(store.db(), std::string(kColumns) + "WHERE id = ?");
    s.bind(1, id);
    if (s.executeStep()) return read_row(s);
    return std::nullopt;
}

std::optional<WorktreeRow> worktree_of_agent(Store& store, std::int64_t agent_id) {
    Statement s(store.db(), std::string(kColumns) + "WHERE agent_id = ? ORDER BY id DESC LIMIT 1");
    s.bind(1, agent_id);
    if (s.executeStep()) return read_row(s);
    return std::nullopt;
}

std::vector<WorktreeRow> team_worktrees(Store& store, std::int64_t team_id, bool all) {
    std::string sql = std::string(kColumns) + "WHERE team_id = ?";
    if (!all) sql += " AND state IN ('creating', 'present')";
    sql += " ORDER BY id";
    Statement s(store.db(), sql);
    s.bind(1, team_id);
    return read_all(s);
}

bool worktree_path_taken(Store& store, const std::string& path) {
    Statement s(store.db(),
                "SELECT 1 FROM worktrees WHERE path = ? AND state IN ('creating', 'present')");
    s.bind(1, path);
    return s.executeStep();
}

std::vector<WorktreeRow> owed_snapshots(Store& store, std::int64_t team_id) {
    Statement s(store.db(),
                std::string(kColumns) + "WHERE team_id = ? AND snapshot_owed = 1 ORDER BY id");
    s.bind(1, team_id);
    return read_all(s);
}

void set_worktree_state(Store& store, std::int64_t id, const std::string& state,
                        std::optional<EpochMs> removed_at,
                        const std::optional<std::string>& trash_path) {
    Statement s(store.db(),
                "UPDATE worktrees SET state = ?, removed_at = ?, trash_path = ?, "
                "snapshot_owed = CASE WHEN ? IN ('creating', 'present') "
                "THEN snapshot_owed ELSE 0 END WHERE id = ?");
    s.bind(1, state);
    bind_or_null(s, 2, removed_at);
    bind_or_null(s, 3, trash_path);
    s.bind(4, state);
    s.bind(5, id);
    s.exec();
}

void owe_snapshot(Store& store, std::int64_t agent_id) {
    Statement s(store.db(),
                "UPDATE worktrees SET snapshot_owed = 1 "
                "WHERE agent_id = ? AND state IN ('creating', 'present')");
    s.bind(1, agent_id);
    s.exec();
}

void record_snapshot(Store& store, std::int64_t id, const nlohmann::json& snapshot) {
    Statement s(store.db(), "UPDATE worktrees SET snapshot = ?, snapshot_owed = 0 WHERE id = ?");
    s.bind(1, snapshot.dump());
    s.bind(2, id);
    s.exec();
}

void give_worktree(Store& store, std::int64_t id, std::int64_t agent_id, const std::string& agent) {
    Statement s(store.db(),
                "UPDATE worktrees SET agent_id = ?, agent = ?, snapshot_owed = 0 WHERE id = ?");
    s.bind(1, agent_id);
    s.bind(2, agent);
    s.bind(3, id);
    s.exec();
}

void record_git_state(Store& store, std::int64_t id, const nlohmann::json& state, EpochMs at) {
    Statement s(store.db(), "UPDATE worktrees SET git_state = ?, git_state_at = ? WHERE id = ?");
    s.bind(1, state.dump());
    s.bind(2, at);
    s.bind(3, id);
    s.exec();
}

void record_git_conflicts(Store& store, std::int64_t id, const nlohmann::json& conflicts) {
    Statement s(store.db(), "UPDATE worktrees SET git_conflicts = ? WHERE id = ?");
    s.bind(1, conflicts.dump());
    s.bind(2, id);
    s.exec();
}

void delete_worktree_row(Store& store, std::int64_t id) {
    Statement s(store.db(), "DELETE FROM worktrees WHERE id = ?");
    s.bind(1, id);
    s.exec();
}

}  // namespace team
