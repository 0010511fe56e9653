#include "team/shutdown.hpp"

#include <SQLiteCpp/SQLiteCpp.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "base/error.hpp"
#include "base/names.hpp"
#include "base/text.hpp"
#include "proc/pidfd.hpp"
#include "proc/process_table.hpp"
#include "proc/terminate.hpp"
#include "state/activity.hpp"
#include "state/change_watch.hpp"
#include "state/sql.hpp"
#include "team/messages.hpp"
#include "team/shutdown_parts.hpp"
#include "tmux/server.hpp"

namespace team {

using namespace shutdown_parts;

namespace {

const char* const kRequestColumns = R"sql(
    SELECT r.id, r.team_id, r.agent_id, a.name || '@' || t.name, r.method, r.phase, r.reason,
           r.reject_reason, r.requested_by, r.requested_at, r.responded_at, r.confirmed_at,
           r.force_at, r.forced_at, r.grace_ms, r.reassign_to, r.reassigned, r.closed_at,
           r.force_at_boot
    FROM shutdown_requests r JOIN agents a ON a.id = r.agent_id JOIN teams t ON t.id = r.team_id
)sql";

std::optional<EpochMs> optional_ms(const SQLite::Column& c) {
    if (c.isNull()) return std::nullopt;
    return c.getInt64();
}

ShutdownRequest request_from(SQLite::Statement& row) {
    ShutdownRequest r;
    r.id = row.getColumn(0).getInt64();
    r.team_id = row.getColumn(1).getInt64();
    r.agent_id = row.getColumn(2).getInt64();
    r.agent = row.getColumn(3).getString();
    r.method = state_from<ShutdownMethod>(row.getColumn(4).getString());
    r.phase = state_from<ShutdownPhase>(row.getColumn(5).getString());
    r.reason = row.getColumn(6).getString();
    if (!row.getColumn(7).isNull()) r.reject_reason = row.getColumn(7).getString();
    r.requested_by = row.getColumn(8).getString();
    r.requested_at = row.getColumn(9).getInt64();
    r.responded_at = optional_ms(row.getColumn(10));
    r.confirmed_at = optional_ms(row.getColumn(11));
    r.force_at = optional_ms(row.getColumn(12));
    r.forced_at = optional_ms(row.getColumn(13));
    r.grace_ms = row.getColumn(14).getInt64();
    if (!row.getColumn(15).isNull()) r.reassign_to = row.getColumn(15).getString();
    if (!row.getColumn(16).isNull()) {
        r.reassigned =
            nlohmann::json::parse(row.getColumn(16).getString()).get<std::vector<std::string>>();
    }
    r.closed_at = optional_ms(row.getColumn(17));
    r.force_at_boot = optional_ms(row.getColumn(18));
    return r;
}

}  // namespace

namespace shutdown_parts {

std::vector<ShutdownRequest> select_requests(SQLite::Database& db, const std::string& where,
                                             std::int64_t key) {
    SQLite::Statement select(db, std::string(kRequestColumns) + " WHERE " + where);
    select.bind(1, key);
    std::vector<ShutdownRequest> out;
    while (select.executeStep()) out.push_back(request_from(select));
    return out;
}

std::optional<ShutdownRequest> load_request(SQLite::Database& db, std::int64_t id) {
    auto rows = select_requests(db, "r.id = ?", id);
    if (rows.empty()) return std::nullopt;
    return rows.front();
}

std::optional<ShutdownRequest> newest_open_request(SQLite::Database& db, std::int64_t agent_id) {
    auto rows = select_requests(
        db, "r.agent_id = ? AND r.closed_at IS NULL ORDER BY r.id DESC LIMIT 1", agent_id);
    if (rows.empty()) return std::nullopt;
    return rows.front();
}

// The agent's pane supervisor, if it is still the process that was recorded and alive.
std::optional<proc::Pidfd> live_supervisor(proc::Processes& processes, const AgentRecord& agent) {
    return processes.live(agent.supervisor_pid, agent.supervisor_start);
}

void wake_supervisor(proc::Processes& processes, const AgentRecord& agent) {
    if (auto supervisor = live_supervisor(processes, agent)) supervisor->signal(SIGUSR1);
}

// Everything of an agent: what its supervisor (a subreaper) has below it, its process group,
// and whatever carries its identity in the environment. `with_supervisor`: the supervisor too.
proc::TreeTarget agent_target(const std::filesystem::path& home, const AgentRecord& agent,
                              bool with_supervisor) {
    return proc::tree_of_record(
        agent.supervisor_pid, agent.supervisor_start, agent.pid, agent.pid_start,
        {"TEAM_AGENT_ID=" + agent.id_string(), "TEAM_HOME=" + home.string()}, with_supervisor);
}

// Whether this process runs inside the tree of that supervisor (an ancestor of ours).
bool inside_tree_of(const AgentRecord& agent) {
    if (!agent.supervisor_pid) return false;
    pid_t p = ::getppid();
    for (int depth = 0; depth < 128 && p > 1; ++depth) {
        auto info = proc::read_process(p);
        if (!info) return false;
        if (p == static_cast<pid_t>(*agent.supervisor_pid)) {
            return !agent.supervisor_start ||
                   info->start_time == static_cast<std::uint64_t>(*agent.supervisor_start);
        }
        p = info->ppid;
    }
    return false;
}

std::optional<AgentRecord> leader_of(Store& store, std::int64_t team_id) {
    SQLite::Statement select(store.db(),
                             "SELECT id FROM agents WHERE team_id = ? AND is_leader "
                             "ORDER BY status = 'terminated', id DESC LIMIT 1");
    select.bind(1, team_id);
    if (!select.executeStep()) return std::nullopt;
    return load_agent(store, select.getColumn(0).getInt64());
}

bool answered(ShutdownPhase phase) {
    return phase == ShutdownPhase::approved || phase == ShutdownPhase::confirmed;
}

std::string seconds_text(milliseconds d) {
    if (d.count() % 1000 == 0) return std::to_string(d.count() / 1000) + "s";
    return std::to_string(d.count()) + "ms";
}

std::int64_t parse_request_id(const std::string& text) {
    bool digits =
        !text.empty() && text.size() <= 18 &&
        std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits) {
        throw usage_error("invalid request id " + quote(text) +
                          ": a number, as 'team shutdown status' shows it");
    }
    return std::stoll(text);
}

Deadline deadline_after(const Clock& clock, milliseconds after) {
    return {clock.now() + after.count(), clock.boot_ms() + after.count()};
}

// A graceful request to `agent` (in the caller's transaction): the row, the shutdown_request
// message in its inbox and the activity entry. `text` is the message; the agent's status is the
// caller's business.
ShutdownRequest request_shutdown(SQLite::Database& db, const TeamRecord& team, const Caller& caller,
                                 const AgentRecord& agent, const std::string& reason, EpochMs now,
                                 std::optional<Deadline> deadline, milliseconds grace,
                                 const std::optional<std::string>& reassign_to,
                                 const std::string& text, bool teardown) {
    SQLite::Statement insert(db, R"sql(
        INSERT INTO shutdown_requests (team_id, agent_id, method, phase, reason, requested_by,
                                       requested_at, force_at, force_at_boot, grace_ms, reassign_to)
        VALUES (?, ?, 'graceful', 'requested', ?, ?, ?, ?, ?, ?, ?)
    )sql");
    insert.bind(1, team.id);
    insert.bind(2, agent.id);
    insert.bind(3, reason);
    insert.bind(4, caller.id());
    insert.bind(5, now);
    std::optional<EpochMs> force_at;
    if (deadline) {
        force_at = deadline->wall;
        insert.bind(6, deadline->wall);
        insert.bind(7, deadline->boot);
    } else {
        insert.bind(6);
        insert.bind(7);
    }
    insert.bind(8, static_cast<std::int64_t>(grace.count()));
    bind_or_null(insert, 9, reassign_to);
    insert.exec();
    ShutdownRequest request = *load_request(db, db.getLastInsertRowid());
    post_message(db, team, caller.name, agent, "shutdown_request", text,
                 {{"requestId", request.id_string()}, {"reason", reason}}, now);
    nlohmann::json details = {{"agentId", agent.id_string()},
                              {"requestId", request.id_string()},
                              {"reason", reason},
                              {"forceAt", force_at ? nlohmann::json(iso8601(*force_at)) : nullptr},
                              {"graceMs", request.grace_ms}};
    if (teardown) details["teardown"] = true;
    append_activity(db, team.id, now, caller.id(), "shutdown_requested", details);
    return request;
}

// An agent's row in teardown's result, from its newest request.
TeardownRow teardown_row(SQLite::Database& db, const AgentRecord& agent) {
    TeardownRow row;
    row.agent_id = agent.id_string();
    row.method = ShutdownMethod::graceful;
    row.phase = ShutdownPhase::requested;
    auto rows = select_requests(db, "r.agent_id = ? ORDER BY r.id DESC LIMIT 1", agent.id);
    if (!rows.empty()) {
        row.method = rows.front().forced_at ? ShutdownMethod::force : ShutdownMethod::graceful;
        row.phase = rows.front().phase;
        row.reassigned = rows.front().reassigned;
    }
    row.exit_reason = agent.exit_reason;
    return row;
}

}  // namespace shutdown_parts

nlohmann::json to_json(const ShutdownRequest& r) {
    auto time = [](const std::optional<EpochMs>& t) {
        return t ? nlohmann::json(iso8601(*t)) : nlohmann::json(nullptr);
    };
    return {{"requestId", r.id_string()},
            {"agentId", r.agent},
            {"method", str(r.method)},
            {"phase", str(r.phase)},
            {"reason", r.reason},
            {"rejectReason", r.reject_reason ? nlohmann::json(*r.reject_reason) : nullptr},
            {"requestedBy", r.requested_by},
            {"requestedAt", iso8601(r.requested_at)},
            {"respondedAt", time(r.responded_at)},
            {"confirmedAt", time(r.confirmed_at)},
            {"forceAt", time(r.force_at)},
            {"forcedAt", time(r.forced_at)},
            {"graceMs", r.grace_ms},
            {"reassignTo", r.reassign_to ? nlohmann::json(*r.reassign_to) : nullptr},
            {"reassignedTasks", r.reassigned},
            {"closedAt", time(r.closed_at)}};
}

nlohmann::json to_json(const KillResult& r) {
    nlohmann::json j = {
        {"success", r.success},  {"agentId", r.agent_id},           {"method", str(r.method)},
        {"phase", str(r.phase)}, {"reassignedTasks", r.reassigned}, {"requestId", r.request_id}};
    if (r.exit_reason) j["exitReason"] = *r.exit_reason;
    if (r.error) j["error"] = *r.error;
    return j;
}

nlohmann::json to_json(const TeardownRow& row) {
    return {{"agentId", row.agent_id},
            {"method", str(row.method)},
            {"phase", str(row.phase)},
            {"reassignedTasks", row.reassigned},
            {"exitReason", row.exit_reason ? nlohmann::json(*row.exit_reason) : nullptr}};
}

std::vector<ShutdownRequest> open_requests(SQLite::Database& db, std::int64_t team_id) {
    return select_requests(db, "r.team_id = ? AND r.closed_at IS NULL ORDER BY r.id", team_id);
}

}  // namespace team
