#include "state/shell_records.hpp"

#include "state/db.hpp"

#include "base/error.hpp"
#include "state/activity.hpp"
#include "state/sql.hpp"

namespace team {

namespace {

const char* const kColumns = R"sql(
    id, team_id, agent, command, cwd, env, status, pid, pid_start, supervisor_pid,
    supervisor_start, timeout_ms, output_limit, output_file, output_truncated, kill_requested_by,
    started_at, ended_at, exit_code, signal, error, session
)sql";

ShellRecord read_shell(Statement& row) {
    ShellRecord s;
    s.id = row.getColumn(0).getString();
    s.team_id = column_or_null<std::int64_t>(row.getColumn(1));
    s.agent = column_or_null<std::string>(row.getColumn(2));
    s.command = nlohmann::json::parse(row.getColumn(3).getString()).get<std::vector<std::string>>();
    s.cwd = row.getColumn(4).getString();
    s.env = nlohmann::json::parse(row.getColumn(5).getString()).get<std::vector<std::string>>();
    s.status = state_from<ShellStatus>(row.getColumn(6).getString());
    s.pid = column_or_null<std::int64_t>(row.getColumn(7));
    s.pid_start = column_or_null<std::int64_t>(row.getColumn(8));
    s.supervisor_pid = column_or_null<std::int64_t>(row.getColumn(9));
    s.supervisor_start = column_or_null<std::int64_t>(row.getColumn(10));
    s.timeout_ms = column_or_null<std::int64_t>(row.getColumn(11));
    s.output_limit = column_or_null<std::int64_t>(row.getColumn(12));
    s.output_file = row.getColumn(13).getString();
    s.output_truncated = row.getColumn(14).getInt() != 0;
    s.kill_requested_by = column_or_null<std::string>(row.getColumn(15));
    s.started_at = row.getColumn(16).getInt64();
    s.ended_at = column_or_null<EpochMs>(row.getColumn(17));
    s.exit_code = column_or_null<int>(row.getColumn(18));
    s.signal = column_or_null<std::string>(row.getColumn(19));
    s.error = column_or_null<std::string>(row.getColumn(20));
    s.session = column_or_null<std::string>(row.getColumn(21));
    return s;
}

std::optional<ShellRecord> select_shell(Db& db, const std::string& id) {
    Statement select(db, std::string("SELECT ") + kColumns + " FROM shells WHERE id = ?");
    select.bind(1, id);
    if (!select.executeStep()) return std::nullopt;
    return read_shell(select);
}

}  // namespace

std::optional<ShellRecord> ShellRecords::find(const std::string& id) {
    // A shell is its home's: one another home of a shared store runs is not found here.
    auto shell = select_shell(store_.db(), id);
    if (shell && !mine(id)) return std::nullopt;
    return shell;
}

bool ShellRecords::mine(const std::string& id) {
    Statement select(store_.db(), "SELECT home_id FROM shells WHERE id = ?");
    select.bind(1, id);
    return select.executeStep() &&
           (select.getColumn(0).isNull() || select.getColumn(0).getString() == store_.home_id());
}

std::vector<ShellRecord> ShellRecords::list(bool running_only,
                                            const std::optional<std::string>& agent,
                                            const std::optional<std::string>& session) {
    std::string sql =
        std::string("SELECT ") + kColumns + " FROM shells WHERE (home_id IS NULL OR home_id = ?)";
    if (running_only) sql += " AND status IN ('starting', 'running')";
    if (agent) sql += " AND agent = ?";
    if (session) sql += " AND session = ?";
    sql += " ORDER BY started_at, id";
    Statement select(store_.db(), sql);
    int index = 0;
    select.bind(++index, store_.home_id());
    if (agent) select.bind(++index, *agent);
    if (session) select.bind(++index, *session);
    std::vector<ShellRecord> shells;
    while (select.executeStep()) shells.push_back(read_shell(select));
    return shells;
}

std::optional<std::string> ShellRecords::script(const std::string& id) {
    Statement select(store_.db(), "SELECT script FROM shells WHERE id = ?");
    select.bind(1, id);
    if (!select.executeStep() || select.getColumn(0).isNull()) return std::nullopt;
    return select.getColumn(0).getString();
}

void ShellRecords::insert(ShellRecord& shell, const std::optional<std::string>& script,
                          const std::function<std::string()>& new_id,
                          const std::filesystem::path& dir, const std::string& actor,
                          nlohmann::json details) {
    store_.write([&] {
        for (int attempt = 0;; ++attempt) {
            shell.id = new_id();
            if (!select_shell(store_.db(), shell.id)) break;
            if (attempt > 100) throw failed("cannot find a free shell id");
        }
        shell.output_file = (dir / (shell.id + ".out")).string();
        Statement insert(store_.db(), R"sql(
            INSERT INTO shells (id, team_id, agent, command, cwd, env, status, timeout_ms,
                                output_limit, output_file, started_at, session, script, home_id)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        )sql");
        insert.bind(1, shell.id);
        bind_or_null(insert, 2, shell.team_id);
        bind_or_null(insert, 3, shell.agent);
        insert.bind(4, nlohmann::json(shell.command).dump());
        insert.bind(5, shell.cwd);
        insert.bind(6, nlohmann::json(shell.env).dump());
        insert.bind(7, str(ShellStatus::starting));
        bind_or_null(insert, 8, shell.timeout_ms);
        bind_or_null(insert, 9, shell.output_limit);
        insert.bind(10, shell.output_file);
        insert.bind(11, shell.started_at);
        bind_or_null(insert, 12, shell.session);
        bind_or_null(insert, 13, script);
        insert.bind(14, store_.home_id());
        insert.exec();
        nlohmann::json logged = {{"shellId", shell.id}};
        logged.update(details);
        append_activity(store_.db(), shell.team_id, shell.started_at, actor, "shell_started",
                        logged);
    });
}

void ShellRecords::mark_running(const std::string& id, std::int64_t pid, std::int64_t pid_start,
                                std::int64_t supervisor_pid, std::int64_t supervisor_start) {
    store_.write([&] {
        Statement up(store_.db(), R"sql(
            UPDATE shells SET status = 'running', pid = ?, pid_start = ?, supervisor_pid = ?,
                              supervisor_start = ?, script = NULL
            WHERE id = ? AND status = 'starting'
        )sql");
        up.bind(1, pid);
        up.bind(2, pid_start);
        up.bind(3, supervisor_pid);
        up.bind(4, supervisor_start);
        up.bind(5, id);
        up.exec();
    });
}

void ShellRecords::mark_truncated(const std::string& id) {
    store_.write([&] {
        Statement up(store_.db(), "UPDATE shells SET output_truncated = 1 WHERE id = ?");
        up.bind(1, id);
        up.exec();
    });
}

ShellRecord ShellRecords::mark_finished(
    const std::string& id, const ShellEnd& end, const std::string& actor,
    const std::function<nlohmann::json(const ShellRecord&)>& details) {
    return store_.write([&] {
        auto shell = select_shell(store_.db(), id);
        if (!shell) throw not_found("Shell not found: " + id);
        if (!shell->running()) return *shell;
        shell->status = end.status;
        shell->ended_at = end.at;
        shell->exit_code = end.exit_code;
        shell->signal = end.signal;
        shell->error = end.error;
        // Conditional as well as checked above: an end once recorded (a cancelled shell recorded
        // killed) is never overwritten, whoever records second (SPEC 13).
        Statement up(store_.db(), R"sql(
            UPDATE shells SET status = ?, ended_at = ?, exit_code = ?, signal = ?, error = ?
            WHERE id = ? AND status IN ('starting', 'running')
        )sql");
        up.bind(1, str(shell->status));
        up.bind(2, *shell->ended_at);
        bind_or_null(up, 3, shell->exit_code);
        bind_or_null(up, 4, shell->signal);
        bind_or_null(up, 5, shell->error);
        up.bind(6, id);
        if (up.exec() == 0) return *select_shell(store_.db(), id);
        append_activity(store_.db(), shell->team_id, *shell->ended_at, actor, "shell_exited",
                        details(*shell));
        return *shell;
    });
}

void ShellRecords::request_kill(const ShellRecord& shell, EpochMs at, const std::string& actor,
                                const nlohmann::json& details) {
    store_.write([&] {
        Statement up(
            store_.db(),
            "UPDATE shells SET kill_requested_by = ? WHERE id = ? AND kill_requested_by IS NULL");
        up.bind(1, actor);
        up.bind(2, shell.id);
        up.exec();
        if (!details.is_null()) {
            append_activity(store_.db(), shell.team_id, at, actor, "execution_cancelled", details);
        }
    });
}

void ShellRecords::log_cancelled(const ShellRecord& shell, EpochMs at, const std::string& actor,
                                 const nlohmann::json& details) {
    store_.write([&] {
        append_activity(store_.db(), shell.team_id, at, actor, "execution_cancelled", details);
    });
}

bool ShellRecords::remove(const ShellRecord& shell, EpochMs at, const std::string& actor) {
    return store_.write([&] {
        Statement del(store_.db(), "DELETE FROM shells WHERE id = ?");
        del.bind(1, shell.id);
        if (del.exec() == 0) return false;
        append_activity(store_.db(), shell.team_id, at, actor, "shell_released",
                        {{"shellId", shell.id}});
        return true;
    });
}

}  // namespace team
