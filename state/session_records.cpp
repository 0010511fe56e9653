#include "state/session_records.hpp"

#include "state/db.hpp"

#include "state/activity.hpp"
#include "state/sql.hpp"

namespace team {

namespace {

const char* const kSessionColumns =
    "id, name, state, team_id, created_by, created_at, updated_at, commands";

StoredSession read_session(Statement& row) {
    StoredSession s;
    s.id = row.getColumn(0).getInt64();
    s.name = row.getColumn(1).getString();
    s.state = nlohmann::json::parse(row.getColumn(2).getString());
    s.team_id = column_or_null<std::int64_t>(row.getColumn(3));
    s.created_by = row.getColumn(4).getString();
    s.created_at = row.getColumn(5).getInt64();
    s.updated_at = row.getColumn(6).getInt64();
    s.commands = row.getColumn(7).getInt64();
    return s;
}

std::optional<StoredSession> select_session(Db& db, const std::string& name) {
    Statement select(db,
                     std::string("SELECT ") + kSessionColumns + " FROM sessions WHERE name = ?");
    select.bind(1, name);
    if (!select.executeStep()) return std::nullopt;
    return read_session(select);
}

std::vector<SessionExec> select_execs(Db& db, std::int64_t session_id) {
    Statement select(db, R"sql(
        SELECT id, command, actor, supervisor_pid, supervisor_start, started_at
        FROM session_execs WHERE session_id = ? ORDER BY id
    )sql");
    select.bind(1, session_id);
    std::vector<SessionExec> execs;
    while (select.executeStep()) {
        SessionExec e;
        e.id = select.getColumn(0).getInt64();
        e.command = select.getColumn(1).getString();
        e.actor = select.getColumn(2).getString();
        e.supervisor_pid = select.getColumn(3).getInt64();
        e.supervisor_start = select.getColumn(4).getInt64();
        e.started_at = select.getColumn(5).getInt64();
        execs.push_back(std::move(e));
    }
    return execs;
}

void delete_exec(Db& db, std::int64_t exec_id) {
    Statement del(db, "DELETE FROM session_execs WHERE id = ?");
    del.bind(1, exec_id);
    del.exec();
}

}  // namespace

std::optional<StoredSession> SessionRecords::find(const std::string& name) {
    return select_session(store_.db(), name);
}

std::vector<StoredSession> SessionRecords::list() {
    Statement select(store_.db(),
                     std::string("SELECT ") + kSessionColumns + " FROM sessions ORDER BY name");
    std::vector<StoredSession> sessions;
    while (select.executeStep()) sessions.push_back(read_session(select));
    return sessions;
}

std::vector<SessionExec> SessionRecords::execs(std::int64_t session_id) {
    return select_execs(store_.db(), session_id);
}

StoredSession SessionRecords::open_in_write(const std::string& name,
                                            std::optional<std::int64_t> team_id,
                                            const std::string& actor, EpochMs at,
                                            const std::function<NewSession()>& fresh) {
    auto session = select_session(store_.db(), name);
    if (!session) {
        Statement insert(store_.db(), R"sql(
            INSERT INTO sessions (name, state, team_id, created_by, created_at, updated_at)
            VALUES (?, ?, ?, ?, ?, ?)
        )sql");
        insert.bind(1, name);
        NewSession made = fresh();
        insert.bind(2, made.state.dump());
        bind_or_null(insert, 3, team_id);
        insert.bind(4, actor);
        insert.bind(5, at);
        insert.bind(6, at);
        insert.exec();
        append_activity(store_.db(), team_id, at, actor, "session_created",
                        {{"session", name}, {"cwd", made.cwd}});
        session = select_session(store_.db(), name);
    }
    Statement touch(store_.db(),
                    "UPDATE sessions SET commands = commands + 1, updated_at = ? WHERE id = ?");
    touch.bind(1, at);
    touch.bind(2, session->id);
    touch.exec();
    session->commands += 1;
    session->updated_at = at;
    return *session;
}

StoredSession SessionRecords::open(const std::string& name, std::optional<std::int64_t> team_id,
                                   const std::string& actor, EpochMs at,
                                   const std::function<NewSession()>& fresh) {
    return store_.write([&] { return open_in_write(name, team_id, actor, at, fresh); });
}

std::pair<StoredSession, std::int64_t> SessionRecords::open_exec(
    const std::string& name, std::optional<std::int64_t> team_id, const std::string& actor,
    EpochMs at, const std::function<NewSession()>& fresh, const std::string& command,
    std::int64_t supervisor_pid, std::int64_t supervisor_start) {
    return store_.write([&] {
        auto s = open_in_write(name, team_id, actor, at, fresh);
        Statement insert(store_.db(), R"sql(
            INSERT INTO session_execs (session_id, command, actor, supervisor_pid,
                                       supervisor_start, started_at)
            VALUES (?, ?, ?, ?, ?, ?)
            RETURNING id
        )sql");
        insert.bind(1, s.id);
        insert.bind(2, command);
        insert.bind(3, actor);
        insert.bind(4, supervisor_pid);
        insert.bind(5, supervisor_start);
        insert.bind(6, at);
        insert.executeStep();
        return std::pair(s, insert.getColumn(0).getInt64());
    });
}

void SessionRecords::remove_exec(std::int64_t exec_id) {
    store_.write([&] { delete_exec(store_.db(), exec_id); });
}

void SessionRecords::finish_exec(
    std::int64_t exec_id, std::int64_t session_id,
    const std::function<std::optional<nlohmann::json>(nlohmann::json)>& merge) {
    store_.write([&] {
        delete_exec(store_.db(), exec_id);
        if (!merge) return;
        Statement select(store_.db(), "SELECT state FROM sessions WHERE id = ?");
        select.bind(1, session_id);
        if (!select.executeStep()) return;  // closed meanwhile
        auto now = nlohmann::json::parse(select.getColumn(0).getString());
        select.reset();
        auto merged = merge(std::move(now));
        if (!merged) return;
        Statement up(store_.db(), "UPDATE sessions SET state = ? WHERE id = ?");
        up.bind(1, merged->dump());
        up.bind(2, session_id);
        up.exec();
    });
}

std::optional<ClosedSession> SessionRecords::close(const std::string& name, EpochMs at,
                                                   const std::string& actor) {
    return store_.write([&]() -> std::optional<ClosedSession> {
        auto now = select_session(store_.db(), name);
        if (!now) return std::nullopt;
        ClosedSession closed;
        closed.execs = select_execs(store_.db(), now->id);
        Statement shells(store_.db(), R"sql(
            SELECT id FROM shells WHERE session = ? AND status IN ('starting', 'running')
            ORDER BY started_at, id
        )sql");
        shells.bind(1, name);
        while (shells.executeStep()) closed.shell_ids.push_back(shells.getColumn(0).getString());
        Statement del(store_.db(), "DELETE FROM sessions WHERE id = ?");
        del.bind(1, now->id);
        del.exec();
        append_activity(store_.db(), now->team_id, at, actor, "session_closed",
                        {{"session", name},
                         {"execs", static_cast<std::int64_t>(closed.execs.size())},
                         {"shells", closed.shell_ids}});
        return closed;
    });
}

}  // namespace team
