#include "state/config_rows.hpp"

#include "state/db.hpp"
#include "state/sql.hpp"

namespace team {

namespace {

ConfigRow read_row(Statement& s) {
    ConfigRow r;
    r.team_id = column_or_null<std::int64_t>(s.getColumn(0));
    r.key = s.getColumn(1).getString();
    r.value = s.getColumn(2).getString();
    r.set_at = s.getColumn(3).getInt64();
    r.set_by = s.getColumn(4).getString();
    return r;
}

}  // namespace

std::vector<ConfigRow> load_config(Store& store, std::optional<std::int64_t> team_id) {
    Statement s(store.db(),
                "SELECT team_id, key, value, set_at, set_by FROM config "
                "WHERE team_id IS NULL OR team_id = ? ORDER BY key");
    s.bind(1, team_id.value_or(-1));
    std::vector<ConfigRow> rows;
    while (s.executeStep()) rows.push_back(read_row(s));
    return rows;
}

std::optional<ConfigRow> load_config_value(Store& store, std::optional<std::int64_t> team_id,
                                           const std::string& key) {
    Statement s(store.db(),
                "SELECT team_id, key, value, set_at, set_by FROM config "
                "WHERE COALESCE(team_id, 0) = ? AND key = ?");
    s.bind(1, team_id.value_or(0));
    s.bind(2, key);
    if (s.executeStep()) return read_row(s);
    return std::nullopt;
}

void save_config(Store& store, const ConfigRow& r) {
    Statement s(store.db(), R"sql(
        INSERT INTO config (team_id, key, value, set_at, set_by) VALUES (?, ?, ?, ?, ?)
        ON CONFLICT (COALESCE(team_id, 0), key) DO UPDATE SET value = excluded.value,
            set_at = excluded.set_at, set_by = excluded.set_by
    )sql");
    bind_or_null(s, 1, r.team_id);
    s.bind(2, r.key);
    s.bind(3, r.value);
    s.bind(4, r.set_at);
    s.bind(5, r.set_by);
    s.exec();
}

bool delete_config(Store& store, std::optional<std::int64_t> team_id, const std::string& key) {
    Statement s(store.db(), "DELETE FROM config WHERE COALESCE(team_id, 0) = ? AND key = ?");
    s.bind(1, team_id.value_or(0));
    s.bind(2, key);
    return s.exec() > 0;
}

}  // namespace team
