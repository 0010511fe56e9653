#include "state/usage_rows.hpp"

#include "state/db.hpp"
#include "state/sql.hpp"

namespace team {

namespace {

const char* const kColumns =
    "SELECT u.agent_id, u.records, u.records_kind, u.cursor, u.agent_cost, u.turns, u.cpu_ms, "
    "u.rss, u.pss, u.peak_rss, u.peak_pss, u.sampled_at, u.max_tokens, u.max_cost, "
    "u.max_memory, u.max_runtime_ms, u.limit_grace_ms, u.warned, u.stopped, u.run_from, "
    "u.run_before_ms FROM agent_usage u ";

std::optional<double> real_or_null(const Column& c) {
    if (c.isNull()) return std::nullopt;
    return c.getDouble();
}

nlohmann::json json_or_null(const Column& c) {
    if (c.isNull()) return nullptr;
    auto j = nlohmann::json::parse(c.getString(), nullptr, false);
    return j.is_discarded() ? nlohmann::json(nullptr) : j;
}

AgentUsageRow read_row(Statement& s) {
    AgentUsageRow r;
    r.agent_id = s.getColumn(0).getInt64();
    r.records = column_or_null<std::string>(s.getColumn(1));
    r.records_kind = column_or_null<std::string>(s.getColumn(2));
    r.cursor = json_or_null(s.getColumn(3));
    r.agent_cost = real_or_null(s.getColumn(4));
    r.turns = s.getColumn(5).getInt64();
    r.cpu_ms = s.getColumn(6).getInt64();
    r.rss = column_or_null<std::int64_t>(s.getColumn(7));
    r.pss = column_or_null<std::int64_t>(s.getColumn(8));
    r.peak_rss = column_or_null<std::int64_t>(s.getColumn(9));
    r.peak_pss = column_or_null<std::int64_t>(s.getColumn(10));
    r.sampled_at = column_or_null<EpochMs>(s.getColumn(11));
    r.limits.max_tokens = column_or_null<std::int64_t>(s.getColumn(12));
    r.limits.max_cost = real_or_null(s.getColumn(13));
    r.limits.max_memory = column_or_null<std::int64_t>(s.getColumn(14));
    r.limits.max_runtime_ms = column_or_null<std::int64_t>(s.getColumn(15));
    r.limits.limit_grace_ms = s.getColumn(16).getInt64();
    auto warned = json_or_null(s.getColumn(17));
    if (warned.is_array()) {
        for (const auto& w : warned) {
            if (w.is_string()) r.warned.push_back(w.get<std::string>());
        }
    }
    r.stopped = column_or_null<std::string>(s.getColumn(18));
    r.run_from = column_or_null<EpochMs>(s.getColumn(19));
    r.run_before_ms = s.getColumn(20).getInt64();
    return r;
}

ModelTokens read_tokens(Statement& s, int first) {
    ModelTokens t;
    t.calls = s.getColumn(first).getInt64();
    t.input = s.getColumn(first + 1).getInt64();
    t.output = s.getColumn(first + 2).getInt64();
    t.cache_read = s.getColumn(first + 3).getInt64();
    t.cache_write = s.getColumn(first + 4).getInt64();
    return t;
}

void ensure_row(Store& store, std::int64_t agent_id) {
    Statement s(store.db(),
                "INSERT INTO agent_usage (agent_id) VALUES (?) ON CONFLICT (agent_id) DO NOTHING");
    s.bind(1, agent_id);
    s.exec();
}

std::string dump(const nlohmann::json& j) {
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::optional<AgentUsageRow> load_agent_usage(Store& store, std::int64_t agent_id) {
    std::string sql = kColumns;
    sql.append("WHERE u.agent_id = ?");
    Statement s(store.db(), sql);
    s.bind(1, agent_id);
    if (!s.executeStep()) return std::nullopt;
    AgentUsageRow row = read_row(s);
    Statement m(store.db(),
                "SELECT model, calls, input, output, cache_read, cache_write FROM usage_models "
                "WHERE agent_id = ?");
    m.bind(1, agent_id);
    while (m.executeStep()) row.models[m.getColumn(0).getString()] = read_tokens(m, 1);
    return row;
}

std::map<std::int64_t, AgentUsageRow> team_agent_usage(Store& store, std::int64_t team_id) {
    std::map<std::int64_t, AgentUsageRow> rows;
    std::string sql = kColumns;
    sql.append("JOIN agents g ON g.id = u.agent_id WHERE g.team_id = ?");
    Statement s(store.db(), sql);
    s.bind(1, team_id);
    while (s.executeStep()) {
        auto row = read_row(s);
        rows.emplace(row.agent_id, std::move(row));
    }
    Statement m(store.db(),
                "SELECT m.agent_id, m.model, m.calls, m.input, m.output, m.cache_read, "
                "m.cache_write FROM usage_models m JOIN agents g ON g.id = m.agent_id "
                "WHERE g.team_id = ?");
    m.bind(1, team_id);
    while (m.executeStep()) {
        auto it = rows.find(m.getColumn(0).getInt64());
        if (it != rows.end()) it->second.models[m.getColumn(1).getString()] = read_tokens(m, 2);
    }
    return rows;
}

std::map<std::int64_t, std::map<std::string, ModelTokens>> team_usage_since(Store& store,
                                                                            std::int64_t team_id,
                                                                            EpochMs since) {
    std::map<std::int64_t, std::map<std::string, ModelTokens>> out;
    Statement s(store.db(),
                "SELECT c.agent_id, c.model, COUNT(*), SUM(c.input), SUM(c.output), "
                "SUM(c.cache_read), SUM(c.cache_write) FROM usage_calls c JOIN agents g ON "
                "g.id = c.agent_id WHERE g.team_id = ? AND c.at >= ? GROUP BY c.agent_id, c.model");
    s.bind(1, team_id);
    s.bind(2, since);
    while (s.executeStep()) {
        out[s.getColumn(0).getInt64()][s.getColumn(1).getString()] = read_tokens(s, 2);
    }
    return out;
}

void create_agent_usage(Store& store, std::int64_t agent_id, const UsageLimits& limits) {
    Statement s(store.db(), R"sql(
        INSERT INTO agent_usage (agent_id, max_tokens, max_cost, max_memory, max_runtime_ms,
                                 limit_grace_ms)
        VALUES (?, ?, ?, ?, ?, ?)
        ON CONFLICT (agent_id) DO UPDATE SET max_tokens = excluded.max_tokens,
            max_cost = excluded.max_cost, max_memory = excluded.max_memory,
            max_runtime_ms = excluded.max_runtime_ms, limit_grace_ms = excluded.limit_grace_ms
    )sql");
    s.bind(1, agent_id);
    bind_or_null(s, 2, limits.max_tokens);
    bind_or_null(s, 3, limits.max_cost);
    bind_or_null(s, 4, limits.max_memory);
    bind_or_null(s, 5, limits.max_runtime_ms);
    s.bind(6, limits.limit_grace_ms);
    s.exec();
}

void restart_usage_run(Store& store, std::int64_t agent_id, EpochMs created, EpochMs ended,
                       EpochMs at) {
    ensure_row(store, agent_id);
    // The run that ended began at run_from, or at the agent's spawn when it is its first.
    Statement s(store.db(), R"sql(
        UPDATE agent_usage
        SET run_before_ms = run_before_ms + CASE WHEN ? > COALESCE(run_from, ?)
                                                 THEN ? - COALESCE(run_from, ?) ELSE 0 END,
            run_from = ?
        WHERE agent_id = ?
    )sql");
    s.bind(1, ended);
    s.bind(2, created);
    s.bind(3, ended);
    s.bind(4, created);
    s.bind(5, at);
    s.bind(6, agent_id);
    s.exec();
}

void save_usage_records(Store& store, std::int64_t agent_id, const std::string& path,
                        const std::string& kind) {
    ensure_row(store, agent_id);
    Statement s(store.db(),
                "UPDATE agent_usage SET records = ?, records_kind = ?, cursor = NULL "
                "WHERE agent_id = ? AND (records IS NULL OR records <> ? OR records_kind <> ?)");
    s.bind(1, path);
    s.bind(2, kind);
    s.bind(3, agent_id);
    s.bind(4, path);
    s.bind(5, kind);
    s.exec();
}

int add_usage_calls(Store& store, std::int64_t agent_id, const std::vector<UsageCall>& calls,
                    const nlohmann::json& cursor) {
    ensure_row(store, agent_id);
    int added = 0;
    Statement insert(store.db(), R"sql(
        INSERT INTO usage_calls (agent_id, key, at, model, input, output, cache_read, cache_write)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (agent_id, key) DO NOTHING
    )sql");
    Statement sum(store.db(), R"sql(
        INSERT INTO usage_models (agent_id, model, calls, input, output, cache_read, cache_write)
        VALUES (?, ?, 1, ?, ?, ?, ?)
        ON CONFLICT (agent_id, model) DO UPDATE SET calls = usage_models.calls + 1,
            input = usage_models.input + excluded.input,
            output = usage_models.output + excluded.output,
            cache_read = usage_models.cache_read + excluded.cache_read,
            cache_write = usage_models.cache_write + excluded.cache_write
    )sql");
    for (const auto& c : calls) {
        insert.reset();
        insert.bind(1, agent_id);
        insert.bind(2, c.key);
        insert.bind(3, c.at);
        insert.bind(4, c.model);
        insert.bind(5, c.input);
        insert.bind(6, c.output);
        insert.bind(7, c.cache_read);
        insert.bind(8, c.cache_write);
        if (insert.exec() == 0) continue;  // read before
        ++added;
        sum.reset();
        sum.bind(1, agent_id);
        sum.bind(2, c.model);
        sum.bind(3, c.input);
        sum.bind(4, c.output);
        sum.bind(5, c.cache_read);
        sum.bind(6, c.cache_write);
        sum.exec();
    }
    Statement s(store.db(), "UPDATE agent_usage SET cursor = ? WHERE agent_id = ?");
    if (cursor.is_null()) {
        s.bind(1);
    } else {
        s.bind(1, dump(cursor));
    }
    s.bind(2, agent_id);
    s.exec();
    return added;
}

void save_usage_sample(Store& store, std::int64_t agent_id, std::int64_t cpu_ms, std::int64_t rss,
                       std::int64_t pss, EpochMs at) {
    ensure_row(store, agent_id);
    Statement s(store.db(), R"sql(
        UPDATE agent_usage SET cpu_ms = CASE WHEN cpu_ms > ? THEN cpu_ms ELSE ? END, rss = ?,
            pss = ?, sampled_at = ?,
            peak_rss = CASE WHEN peak_rss IS NULL OR peak_rss < ? THEN ? ELSE peak_rss END,
            peak_pss = CASE WHEN peak_pss IS NULL OR peak_pss < ? THEN ? ELSE peak_pss END
        WHERE agent_id = ?
    )sql");
    s.bind(1, cpu_ms);
    s.bind(2, cpu_ms);
    s.bind(3, rss);
    s.bind(4, pss);
    s.bind(5, at);
    s.bind(6, rss);
    s.bind(7, rss);
    s.bind(8, pss);
    s.bind(9, pss);
    s.bind(10, agent_id);
    s.exec();
}

void save_agent_cost(Store& store, std::int64_t agent_id, double usd) {
    ensure_row(store, agent_id);
    Statement s(store.db(), "UPDATE agent_usage SET agent_cost = ? WHERE agent_id = ?");
    s.bind(1, usd);
    s.bind(2, agent_id);
    s.exec();
}

void add_usage_turn(Store& store, std::int64_t agent_id) {
    ensure_row(store, agent_id);
    Statement s(store.db(), "UPDATE agent_usage SET turns = turns + 1 WHERE agent_id = ?");
    s.bind(1, agent_id);
    s.exec();
}

void save_usage_marks(Store& store, std::int64_t agent_id, const std::vector<std::string>& warned,
                      const std::optional<std::string>& stopped) {
    ensure_row(store, agent_id);
    Statement s(store.db(), "UPDATE agent_usage SET warned = ?, stopped = ? WHERE agent_id = ?");
    if (warned.empty()) {
        s.bind(1);
    } else {
        s.bind(1, dump(nlohmann::json(warned)));
    }
    bind_or_null(s, 2, stopped);
    s.bind(3, agent_id);
    s.exec();
}

TeamBudgetMarks load_team_budget(Store& store, std::int64_t team_id) {
    Statement s(store.db(), "SELECT warned, stopped FROM team_budget WHERE team_id = ?");
    s.bind(1, team_id);
    TeamBudgetMarks marks;
    if (s.executeStep()) {
        marks.warned = s.getColumn(0).getInt64() != 0;
        marks.stopped = s.getColumn(1).getInt64() != 0;
    }
    return marks;
}

void save_team_budget(Store& store, std::int64_t team_id, const TeamBudgetMarks& marks) {
    Statement s(store.db(), R"sql(
        INSERT INTO team_budget (team_id, warned, stopped) VALUES (?, ?, ?)
        ON CONFLICT (team_id) DO UPDATE SET warned = excluded.warned, stopped = excluded.stopped
    )sql");
    s.bind(1, team_id);
    s.bind(2, marks.warned ? 1 : 0);
    s.bind(3, marks.stopped ? 1 : 0);
    s.exec();
}

}  // namespace team
