#include "state/agent_activity_rows.hpp"

#include "state/db.hpp"
#include "state/sql.hpp"

namespace team {

namespace {

const char* const kColumns =
    "SELECT a.agent_id, a.state, a.since, a.source, a.waiting_on, a.reported_at, a.prompted_at "
    "FROM agent_activity a ";

AgentActivityRow read_row(Statement& s) {
    AgentActivityRow r;
    r.agent_id = s.getColumn(0).getInt64();
    r.state = s.getColumn(1).getString();
    r.since = s.getColumn(2).getInt64();
    r.source = s.getColumn(3).getString();
    if (!s.getColumn(4).isNull()) {
        r.waiting_on = nlohmann::json::parse(s.getColumn(4).getString(), nullptr, false);
        if (r.waiting_on.is_discarded()) r.waiting_on = nullptr;
    }
    r.reported_at = s.getColumn(5).getInt64();
    r.prompted_at = column_or_null<EpochMs>(s.getColumn(6));
    return r;
}

}  // namespace

std::optional<AgentActivityRow> load_agent_activity(Store& store, std::int64_t agent_id) {
    std::string sql = kColumns;
    sql.append("WHERE a.agent_id = ?");
    Statement s(store.db(), sql);
    s.bind(1, agent_id);
    if (s.executeStep()) return read_row(s);
    return std::nullopt;
}

std::map<std::int64_t, AgentActivityRow> team_agent_activity(Store& store, std::int64_t team_id) {
    std::string sql = kColumns;
    sql.append("JOIN agents g ON g.id = a.agent_id WHERE g.team_id = ?");
    Statement s(store.db(), sql);
    s.bind(1, team_id);
    std::map<std::int64_t, AgentActivityRow> rows;
    while (s.executeStep()) {
        auto row = read_row(s);
        rows.emplace(row.agent_id, std::move(row));
    }
    return rows;
}

void save_agent_activity(Store& store, const AgentActivityRow& r) {
    Statement s(store.db(), R"sql(
        INSERT INTO agent_activity (agent_id, state, since, source, waiting_on, reported_at,
                                    prompted_at)
        VALUES (?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (agent_id) DO UPDATE SET state = excluded.state, since = excluded.since,
            source = excluded.source, waiting_on = excluded.waiting_on,
            reported_at = excluded.reported_at, prompted_at = excluded.prompted_at
    )sql");
    s.bind(1, r.agent_id);
    s.bind(2, r.state);
    s.bind(3, r.since);
    s.bind(4, r.source);
    if (r.waiting_on.is_null()) {
        s.bind(5);
    } else {
        s.bind(5, r.waiting_on.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    }
    s.bind(6, r.reported_at);
    bind_or_null(s, 7, r.prompted_at);
    s.exec();
}

}  // namespace team
