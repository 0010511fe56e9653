#include "state/acp_rows.hpp"

#include "state/db.hpp"

#include "state/sql.hpp"

namespace team {

using nlohmann::json;

namespace {

json json_column(const Column& c) {
    if (c.isNull()) return nullptr;
    json j = json::parse(c.getString(), nullptr, false);
    return j.is_discarded() ? json(nullptr) : j;
}

std::optional<std::string> json_text(const json& j) {
    if (j.is_null()) return std::nullopt;
    return j.dump();
}

const char* const kSessionColumns =
    "SELECT agent_id, team_id, policy, state, session_id, agent_info, auth_methods, end_reason, "
    "stderr_tail, cancels, load_from FROM acp_agents ";

AcpSessionRow read_session(Statement& s) {
    AcpSessionRow r;
    r.agent_id = s.getColumn(0).getInt64();
    r.team_id = s.getColumn(1).getInt64();
    r.policy = s.getColumn(2).getString();
    r.state = s.getColumn(3).getString();
    r.session_id = column_or_null<std::string>(s.getColumn(4));
    r.agent_info = json_column(s.getColumn(5));
    r.auth_methods = json_column(s.getColumn(6));
    r.end_reason = column_or_null<std::string>(s.getColumn(7));
    r.stderr_tail = column_or_null<std::string>(s.getColumn(8));
    r.cancels = s.getColumn(9).getInt64();
    r.load_from = column_or_null<std::string>(s.getColumn(10));
    return r;
}

const char* const kTurnColumns =
    "SELECT id, agent_id, text, source, state, stop_reason, error, created_at, ended_at "
    "FROM acp_turns ";

AcpTurnRow read_turn(Statement& s) {
    AcpTurnRow t;
    t.id = s.getColumn(0).getInt64();
    t.agent_id = s.getColumn(1).getInt64();
    t.text = s.getColumn(2).getString();
    t.source = s.getColumn(3).getString();
    t.state = s.getColumn(4).getString();
    t.stop_reason = column_or_null<std::string>(s.getColumn(5));
    t.error = column_or_null<std::string>(s.getColumn(6));
    t.created_at = s.getColumn(7).getInt64();
    t.ended_at = column_or_null<EpochMs>(s.getColumn(8));
    return t;
}

std::vector<AcpTurnRow> read_turns(Statement& s) {
    std::vector<AcpTurnRow> rows;
    while (s.executeStep()) rows.push_back(read_turn(s));
    return rows;
}

const char* const kPermissionColumns =
    "SELECT p.id, p.team_id, p.agent_id, a.name, p.number, p.tool_call, p.options, p.state, "
    "p.answer, p.answered_by, p.created_at, p.closed_at "
    "FROM acp_permissions p JOIN agents a ON a.id = p.agent_id ";

AcpPermissionRow read_permission(Statement& s) {
    AcpPermissionRow p;
    p.id = s.getColumn(0).getInt64();
    p.team_id = s.getColumn(1).getInt64();
    p.agent_id = s.getColumn(2).getInt64();
    p.agent = s.getColumn(3).getString();
    p.number = s.getColumn(4).getInt64();
    p.tool_call = json_column(s.getColumn(5));
    p.options = json_column(s.getColumn(6));
    if (!p.options.is_array()) p.options = json::array();
    p.state = s.getColumn(7).getString();
    p.answer = column_or_null<std::string>(s.getColumn(8));
    p.answered_by = column_or_null<std::string>(s.getColumn(9));
    p.created_at = s.getColumn(10).getInt64();
    p.closed_at = column_or_null<EpochMs>(s.getColumn(11));
    return p;
}

std::vector<AcpPermissionRow> read_permissions(Statement& s) {
    std::vector<AcpPermissionRow> rows;
    while (s.executeStep()) rows.push_back(read_permission(s));
    return rows;
}

}  // namespace

void insert_acp_session(Store& store, const AcpSessionRow& row) {
    Statement s(store.db(),
                "INSERT INTO acp_agents (agent_id, team_id, policy, state) "
                "VALUES (?, ?, ?, ?)");
    s.bind(1, row.agent_id);
    s.bind(2, row.team_id);
    s.bind(3, row.policy);
    s.bind(4, row.state);
    s.exec();
}

std::optional<AcpSessionRow> load_acp_session(Store& store, std::int64_t agent_id) {
    Statement s(store.db(), std::string(kSessionColumns) + "WHERE agent_id = ?");
    s.bind(1, agent_id);
    if (!s.executeStep()) return std::nullopt;
    return read_session(s);
}

std::vector<AcpSessionRow> acp_sessions_of_team(Store& store, std::int64_t team_id) {
    Statement s(store.db(), std::string(kSessionColumns) + "WHERE team_id = ?");
    s.bind(1, team_id);
    std::vector<AcpSessionRow> rows;
    while (s.executeStep()) rows.push_back(read_session(s));
    return rows;
}

void set_acp_session_state(Store& store, std::int64_t agent_id, const std::string& state,
                           const std::optional<std::string>& session_id, const json& agent_info,
                           const json& auth_methods) {
    Statement s(store.db(),
                "UPDATE acp_agents SET state = ?, session_id = ?, agent_info = ?, "
                "auth_methods = ? WHERE agent_id = ?");
    s.bind(1, state);
    bind_or_null(s, 2, session_id);
    bind_or_null(s, 3, json_text(agent_info));
    bind_or_null(s, 4, json_text(auth_methods));
    s.bind(5, agent_id);
    s.exec();
}

void set_acp_session_ended(Store& store, std::int64_t agent_id, const std::string& reason,
                           const std::string& stderr_tail) {
    Statement s(store.db(),
                "UPDATE acp_agents SET state = 'ended', end_reason = ?, stderr_tail = ? "
                "WHERE agent_id = ?");
    s.bind(1, reason);
    s.bind(2, stderr_tail);
    s.bind(3, agent_id);
    s.exec();
}

void end_acp_session(Store& store, std::int64_t agent_id, const std::string& reason, EpochMs at) {
    auto session = load_acp_session(store, agent_id);
    if (!session) return;
    if (session->state != "ended") {
        Statement s(store.db(),
                    "UPDATE acp_agents SET state = 'ended', end_reason = ? "
                    "WHERE agent_id = ?");
        s.bind(1, reason);
        s.bind(2, agent_id);
        s.exec();
    }
    fail_open_acp_turns(store, agent_id, reason, at);
    expire_acp_permissions(store, agent_id, at);
}

void reopen_acp_session(Store& store, std::int64_t agent_id,
                        const std::optional<std::string>& load_from) {
    Statement s(store.db(),
                "UPDATE acp_agents SET state = 'starting', end_reason = NULL, stderr_tail = NULL, "
                "load_from = ? WHERE agent_id = ?");
    bind_or_null(s, 1, load_from);
    s.bind(2, agent_id);
    s.exec();
}

void clear_acp_session_load(Store& store, std::int64_t agent_id) {
    Statement s(store.db(), "UPDATE acp_agents SET load_from = NULL WHERE agent_id = ?");
    s.bind(1, agent_id);
    s.exec();
}

std::int64_t add_acp_cancel(Store& store, std::int64_t agent_id) {
    Statement s(store.db(),
                "UPDATE acp_agents SET cancels = cancels + 1 WHERE agent_id = ? "
                "RETURNING cancels");
    s.bind(1, agent_id);
    return s.executeStep() ? s.getColumn(0).getInt64() : 0;
}

std::int64_t insert_acp_turn(Store& store, const AcpTurnRow& t) {
    Statement s(store.db(),
                "INSERT INTO acp_turns (agent_id, text, source, state, created_at) "
                "VALUES (?, ?, ?, 'queued', ?) RETURNING id");
    s.bind(1, t.agent_id);
    s.bind(2, t.text);
    s.bind(3, t.source);
    s.bind(4, t.created_at);
    s.executeStep();
    return s.getColumn(0).getInt64();
}

std::optional<AcpTurnRow> load_acp_turn(Store& store, std::int64_t id) {
    Statement s(store.db(), std::string(kTurnColumns) + "WHERE id = ?");
    s.bind(1, id);
    if (!s.executeStep()) return std::nullopt;
    return read_turn(s);
}

std::vector<AcpTurnRow> open_acp_turns(Store& store, std::int64_t agent_id) {
    Statement s(store.db(), std::string(kTurnColumns) +
                                "WHERE agent_id = ? AND state IN ('queued', 'running') "
                                "ORDER BY id");
    s.bind(1, agent_id);
    return read_turns(s);
}

std::vector<AcpTurnRow> queued_acp_turns(Store& store, std::int64_t agent_id, std::int64_t after) {
    Statement s(store.db(), std::string(kTurnColumns) +
                                "WHERE agent_id = ? AND state = 'queued' AND id > ? "
                                "ORDER BY id");
    s.bind(1, agent_id);
    s.bind(2, after);
    return read_turns(s);
}

void set_acp_turn_running(Store& store, std::int64_t id) {
    Statement s(store.db(),
                "UPDATE acp_turns SET state = 'running' WHERE id = ? AND state = 'queued'");
    s.bind(1, id);
    s.exec();
}

void end_acp_turn(Store& store, std::int64_t id, const std::optional<std::string>& stop_reason,
                  const std::optional<std::string>& error, EpochMs at) {
    Statement s(store.db(),
                "UPDATE acp_turns SET state = ?, stop_reason = ?, error = ?, ended_at = ? "
                "WHERE id = ? AND state IN ('queued', 'running')");
    s.bind(1, error ? "failed" : "done");
    bind_or_null(s, 2, stop_reason);
    bind_or_null(s, 3, error);
    s.bind(4, at);
    s.bind(5, id);
    s.exec();
}

int fail_open_acp_turns(Store& store, std::int64_t agent_id, const std::string& error, EpochMs at) {
    Statement s(store.db(),
                "UPDATE acp_turns SET state = 'failed', error = ?, ended_at = ? "
                "WHERE agent_id = ? AND state IN ('queued', 'running')");
    s.bind(1, error);
    s.bind(2, at);
    s.bind(3, agent_id);
    return s.exec();
}

std::int64_t insert_acp_permission(Store& store, const AcpPermissionRow& p) {
    Statement s(store.db(), R"sql(
        INSERT INTO acp_permissions (team_id, agent_id, number, tool_call, options, state,
                                     created_at)
        VALUES (?, ?, ?, ?, ?, 'open', ?)
        RETURNING id
    )sql");
    s.bind(1, p.team_id);
    s.bind(2, p.agent_id);
    s.bind(3, p.number);
    s.bind(4, p.tool_call.dump());
    s.bind(5, p.options.dump());
    s.bind(6, p.created_at);
    s.executeStep();
    return s.getColumn(0).getInt64();
}

std::optional<AcpPermissionRow> load_acp_permission(Store& store, std::int64_t id) {
    Statement s(store.db(), std::string(kPermissionColumns) + "WHERE p.id = ?");
    s.bind(1, id);
    if (!s.executeStep()) return std::nullopt;
    return read_permission(s);
}

std::vector<AcpPermissionRow> acp_permissions_of_team(Store& store, std::int64_t team_id,
                                                      bool all) {
    Statement s(store.db(), std::string(kPermissionColumns) + "WHERE p.team_id = ? " +
                                (all ? "" : "AND p.state IN ('open', 'answering') ") +
                                "ORDER BY p.id");
    s.bind(1, team_id);
    return read_permissions(s);
}

std::vector<AcpPermissionRow> answering_acp_permissions(Store& store, std::int64_t agent_id) {
    Statement s(store.db(), std::string(kPermissionColumns) +
                                "WHERE p.agent_id = ? AND p.state = 'answering' "
                                "ORDER BY p.id");
    s.bind(1, agent_id);
    return read_permissions(s);
}

std::optional<AcpPermissionRow> acp_permission_by_number(Store& store, std::int64_t agent_id,
                                                         std::int64_t number) {
    Statement s(store.db(), std::string(kPermissionColumns) +
                                "WHERE p.agent_id = ? AND p.number = ? "
                                "ORDER BY p.id DESC LIMIT 1");
    s.bind(1, agent_id);
    s.bind(2, number);
    if (!s.executeStep()) return std::nullopt;
    return read_permission(s);
}

bool answer_acp_permission(Store& store, std::int64_t id, const std::string& option,
                           const std::string& by) {
    Statement s(store.db(),
                "UPDATE acp_permissions SET state = 'answering', answer = ?, "
                "answered_by = ? WHERE id = ? AND state = 'open'");
    s.bind(1, option);
    s.bind(2, by);
    s.bind(3, id);
    return s.exec() == 1;
}

void close_acp_permission(Store& store, std::int64_t id, const std::string& state,
                          const std::optional<std::string>& answer, EpochMs at) {
    Statement s(store.db(),
                "UPDATE acp_permissions SET state = ?, answer = coalesce(?, answer), "
                "closed_at = ? WHERE id = ? AND state IN ('open', 'answering')");
    s.bind(1, state);
    bind_or_null(s, 2, answer);
    s.bind(3, at);
    s.bind(4, id);
    s.exec();
}

int expire_acp_permissions(Store& store, std::int64_t agent_id, EpochMs at) {
    Statement s(store.db(),
                "UPDATE acp_permissions SET state = 'expired', closed_at = ? "
                "WHERE agent_id = ? AND state IN ('open', 'answering')");
    s.bind(1, at);
    s.bind(2, agent_id);
    return s.exec();
}

void put_acp_transcript(Store& store, std::int64_t agent_id, std::int64_t seq, const json& record) {
    Statement s(store.db(),
                "INSERT INTO acp_transcript (agent_id, seq, record) VALUES (?, ?, ?) "
                "ON CONFLICT (agent_id, seq) DO UPDATE SET record = excluded.record");
    s.bind(1, agent_id);
    s.bind(2, seq);
    s.bind(3, record.dump());
    s.exec();
}

json acp_transcript(Store& store, std::int64_t agent_id) {
    Statement s(store.db(), "SELECT record FROM acp_transcript WHERE agent_id = ? ORDER BY seq");
    s.bind(1, agent_id);
    json out = json::array();
    while (s.executeStep()) out.push_back(json_column(s.getColumn(0)));
    return out;
}

std::int64_t next_acp_transcript_seq(Store& store, std::int64_t agent_id) {
    Statement s(store.db(),
                "SELECT COALESCE(MAX(seq) + 1, 0) FROM acp_transcript WHERE agent_id = ?");
    s.bind(1, agent_id);
    return s.executeStep() ? s.getColumn(0).getInt64() : 0;
}

json to_json(const AcpPermissionRow& p, const std::string& team) {
    auto opt = [](const auto& v) { return v ? json(*v) : json(nullptr); };
    return {{"id", p.id},
            {"agent", p.agent},
            {"agentId", p.agent + "@" + team},
            {"state", p.state},
            {"toolCall", p.tool_call},
            {"options", p.options},
            {"answer", opt(p.answer)},
            {"answeredBy", opt(p.answered_by)},
            {"createdAt", iso8601(p.created_at)},
            {"closedAt", p.closed_at ? json(iso8601(*p.closed_at)) : json(nullptr)}};
}

json to_json(const AcpTurnRow& t) {
    auto opt = [](const auto& v) { return v ? json(*v) : json(nullptr); };
    return {{"turn", t.id},
            {"state", t.state},
            {"stopReason", opt(t.stop_reason)},
            {"error", opt(t.error)},
            {"createdAt", iso8601(t.created_at)},
            {"endedAt", t.ended_at ? json(iso8601(*t.ended_at)) : json(nullptr)}};
}

}  // namespace team
