#include "state/activity.hpp"
#include "state/sql.hpp"

#include "state/db.hpp"

namespace team {

namespace {
thread_local const std::string* t_via = nullptr;
}

ActivityVia::ActivityVia(const std::optional<std::string>& via) : previous_(t_via) {
    if (via) t_via = &*via;
}

ActivityVia::~ActivityVia() {
    t_via = previous_;
}

std::int64_t last_activity_id(Db& db) {
    Statement select(db, "SELECT COALESCE(MAX(id), 0) FROM activity");
    select.executeStep();
    return select.getColumn(0).getInt64();
}

void append_activity(Db& db, std::optional<std::int64_t> team_id, EpochMs at,
                     const std::string& actor, const std::string& type,
                     const nlohmann::json& given) {
    nlohmann::json marked;
    if (t_via && given.is_object()) {
        marked = given;
        marked["via"] = *t_via;
    }
    const nlohmann::json& details = marked.is_null() ? given : marked;
    db.writes(Db::Change::activity);  // a shared write takes the appenders' lock first (Db::Turn)
    Statement insert(
        db, "INSERT INTO activity (team_id, at, actor, type, details) VALUES (?, ?, ?, ?, ?)");
    bind_or_null(insert, 1, team_id);
    insert.bind(2, at);
    insert.bind(3, actor);
    insert.bind(4, type);
    insert.bind(5, details.dump());
    insert.exec();
}

std::vector<ActivityEntry> list_activity(Db& db, std::optional<std::int64_t> team_id,
                                         const ActivityQuery& query) {
    std::string sql =
        "SELECT a.id, a.at, a.actor, a.type, a.details, t.name FROM activity a"
        " LEFT JOIN teams t ON t.id = a.team_id WHERE a.id > ?";
    if (team_id) sql += " AND a.team_id = ?";
    if (query.type) sql += " AND a.type = ?";
    sql += " ORDER BY a.id";
    if (query.limit) sql += " LIMIT ?";
    Statement select(db, sql);
    int i = 1;
    select.bind(i++, query.since_id);
    if (team_id) select.bind(i++, *team_id);
    if (query.type) select.bind(i++, *query.type);
    if (query.limit) select.bind(i++, *query.limit);
    std::vector<ActivityEntry> entries;
    while (select.executeStep()) {
        ActivityEntry e;
        e.id = select.getColumn(0).getInt64();
        e.at = select.getColumn(1).getInt64();
        e.actor = select.getColumn(2).getString();
        e.type = select.getColumn(3).getString();
        e.details = nlohmann::json::parse(select.getColumn(4).getString(), nullptr, false);
        if (!select.getColumn(5).isNull()) e.team = select.getColumn(5).getString();
        entries.push_back(std::move(e));
    }
    return entries;
}

nlohmann::json to_json(const ActivityEntry& e) {
    return {{"id", e.id},
            {"at", iso8601(e.at)},
            {"actor", e.actor},
            {"type", e.type},
            {"details", e.details}};
}

}  // namespace team
