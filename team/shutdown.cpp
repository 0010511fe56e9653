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
#include "tmux/server.hpp"

namespace team {

namespace {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// The longest reason a kill-agent, reject or teardown accepts.
constexpr std::size_t kMaxReasonBytes = 64 * 1024;
// How long a force waits for the agent's supervisor to record the end and remove its pane once
// the tree is gone, before doing both itself.
constexpr milliseconds kSupervisorWait{2000};

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
    r.method = row.getColumn(4).getString();
    r.phase = row.getColumn(5).getString();
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
std::optional<proc::Pidfd> live_supervisor(const AgentRecord& agent) {
    if (!agent.supervisor_pid) return std::nullopt;
    auto fd = proc::Pidfd::open(static_cast<pid_t>(*agent.supervisor_pid),
                                static_cast<std::uint64_t>(agent.supervisor_start.value_or(0)));
    if (fd && fd->exited()) return std::nullopt;
    return fd;
}

void wake_supervisor(const AgentRecord& agent) {
    if (auto supervisor = live_supervisor(agent)) supervisor->signal(SIGUSR1);
}

// Everything of an agent: what its supervisor (a subreaper) has below it, its process group,
// and whatever carries its identity in the environment. `with_supervisor`: the supervisor too.
proc::TreeTarget agent_target(const std::filesystem::path& home, const AgentRecord& agent,
                              bool with_supervisor) {
    proc::TreeTarget target;
    if (agent.supervisor_pid) {
        target.root = static_cast<pid_t>(*agent.supervisor_pid);
        target.root_start = static_cast<std::uint64_t>(agent.supervisor_start.value_or(0));
        target.include_root = with_supervisor;
    }
    if (agent.pid) {
        auto fd = proc::Pidfd::open(static_cast<pid_t>(*agent.pid),
                                    static_cast<std::uint64_t>(agent.pid_start.value_or(0)));
        if (fd && !fd->exited()) target.pgid = static_cast<pid_t>(*agent.pid);
    }
    target.marker = {"TEAM_AGENT_ID=" + agent.id_string(), "TEAM_HOME=" + home.string()};
    return target;
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

bool answered(const std::string& phase) {
    return phase == "approved" || phase == "confirmed";
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

// A --force-after or teardown deadline, `after` from now: the wall-clock time users see
// (forceAt) and the boot-clock time it is armed from.
struct Deadline {
    EpochMs wall = 0;
    std::int64_t boot = 0;
};

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
    row.method = "graceful";
    row.phase = "requested";
    auto rows = select_requests(db, "r.agent_id = ? ORDER BY r.id DESC LIMIT 1", agent.id);
    if (!rows.empty()) {
        row.method = rows.front().forced_at ? "force" : "graceful";
        row.phase = rows.front().phase;
        row.reassigned = rows.front().reassigned;
    }
    row.exit_reason = agent.exit_reason;
    return row;
}

}  // namespace

nlohmann::json to_json(const ShutdownRequest& r) {
    auto time = [](const std::optional<EpochMs>& t) {
        return t ? nlohmann::json(iso8601(*t)) : nlohmann::json(nullptr);
    };
    return {{"requestId", r.id_string()},
            {"agentId", r.agent},
            {"method", r.method},
            {"phase", r.phase},
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
        {"success", r.success}, {"agentId", r.agent_id},           {"method", r.method},
        {"phase", r.phase},     {"reassignedTasks", r.reassigned}, {"requestId", r.request_id}};
    if (r.exit_reason) j["exitReason"] = *r.exit_reason;
    if (r.error) j["error"] = *r.error;
    return j;
}

nlohmann::json to_json(const TeardownRow& row) {
    return {{"agentId", row.agent_id},
            {"method", row.method},
            {"phase", row.phase},
            {"reassignedTasks", row.reassigned},
            {"exitReason", row.exit_reason ? nlohmann::json(*row.exit_reason) : nullptr}};
}

std::vector<ShutdownRequest> open_requests(SQLite::Database& db, std::int64_t team_id) {
    return select_requests(db, "r.team_id = ? AND r.closed_at IS NULL ORDER BY r.id", team_id);
}

bool finish_agent(SQLite::Database& db, const AgentRecord& agent, EpochMs at,
                  const Termination& natural) {
    auto open =
        select_requests(db, "r.agent_id = ? AND r.closed_at IS NULL ORDER BY r.id", agent.id);
    const ShutdownRequest* forced = nullptr;
    const ShutdownRequest* confirmed = nullptr;
    for (const auto& r : open) {
        if (r.forced_at) forced = &r;
        if (answered(r.phase)) confirmed = &r;
    }
    Termination how = natural;
    const ShutdownRequest* decisive = forced ? forced : confirmed;
    if (forced) {
        how.reason = "force_killed";
        how.actor = forced->requested_by;
    } else if (confirmed) {
        how.reason = "confirmed";
        how.actor = agent.id_string();
    }
    if (!decisive && !open.empty()) decisive = &open.back();
    if (decisive) {
        how.details["requestId"] = decisive->id_string();
        if (decisive->force_at && forced) how.details["deadline"] = iso8601(*decisive->force_at);
        if (decisive->reassign_to) {
            // Only to a member that is still there; otherwise the tasks go back to the pool.
            SQLite::Statement live(db, R"sql(
                SELECT 1 FROM agents WHERE team_id = ? AND name = ? AND status <> 'terminated'
                                       AND id <> ?
            )sql");
            live.bind(1, agent.team_id);
            live.bind(2, *decisive->reassign_to);
            live.bind(3, agent.id);
            if (live.executeStep()) how.reassign_to = decisive->reassign_to;
        }
    }
    auto tasks = mark_terminated(db, agent, at, how);
    if (!tasks) return false;

    SQLite::Statement close(db, R"sql(
        UPDATE shutdown_requests
        SET phase = CASE WHEN ?1 THEN 'force_killed'
                         WHEN phase IN ('approved', 'confirmed') THEN 'confirmed'
                         ELSE phase END,
            confirmed_at = CASE WHEN NOT ?1 AND phase IN ('approved', 'confirmed')
                                THEN coalesce(confirmed_at, ?2) ELSE confirmed_at END,
            closed_at = ?2, reassigned = ?3
        WHERE agent_id = ?4 AND closed_at IS NULL
    )sql");
    close.bind(1, forced != nullptr);
    close.bind(2, at);
    close.bind(3, nlohmann::json(*tasks).dump());
    close.bind(4, agent.id);
    close.exec();

    if (how.reason == "confirmed") {
        SQLite::Statement leader(db,
                                 "SELECT id, name FROM agents WHERE team_id = ? AND is_leader "
                                 "AND status <> 'terminated' LIMIT 1");
        leader.bind(1, agent.team_id);
        if (leader.executeStep()) {
            AgentRecord to;
            to.id = leader.getColumn(0).getInt64();
            to.name = leader.getColumn(1).getString();
            TeamRecord team;
            team.id = agent.team_id;
            team.name = agent.team;
            post_message(db, team, agent.name, to, "shutdown_confirmed",
                         agent.id_string() + " confirmed the shutdown and has ended",
                         {{"requestId", confirmed->id_string()},
                          {"reason", confirmed->reason},
                          {"reassignedTasks", *tasks}},
                         at);
        }
    }
    return true;
}

namespace {

proc::StopPlan stop_plan_now(Store& store, const AgentRecord& agent, const Clock& clock) {
    proc::StopPlan plan;
    EpochMs now = clock.now();
    std::int64_t boot_now = clock.boot_ms();
    auto steady_now = SteadyClock::now();
    std::optional<ShutdownRequest> due;
    for (const auto& r : select_requests(store.db(), "r.agent_id = ? ORDER BY r.id", agent.id)) {
        if (!r.closed_at && (r.phase == "confirmed" || r.forced_at)) {
            plan.at = steady_now;
            plan.grace = milliseconds(r.grace_ms);
            return plan;
        }
        // A deadline holds until the agent has ended, even after a rejection (SPEC 7.1: "if
        // the agent has not confirmed by then it is force-killed").
        if (!r.force_at || r.forced_at) continue;
        // How long until the deadline: on the boot clock, which does not step (a request from
        // before schema 7 has only the wall-clock time).
        auto left = milliseconds(r.force_at_boot ? *r.force_at_boot - boot_now : *r.force_at - now);
        if (left.count() <= 0) {
            due = r;
            break;
        }
        auto at = steady_now + left;
        if (!plan.at || at < *plan.at) {
            plan.at = at;
            plan.grace = milliseconds(r.grace_ms);
        }
    }
    if (due) {
        // Force begins: recorded first, so the end is recorded as force_killed.
        store.write([&] {
            SQLite::Statement up(store.db(), R"sql(
                UPDATE shutdown_requests SET forced_at = ?, closed_at = NULL
                WHERE id = ? AND forced_at IS NULL
                  AND EXISTS (SELECT 1 FROM agents WHERE id = ? AND status <> 'terminated')
            )sql");
            up.bind(1, now);
            up.bind(2, due->id);
            up.bind(3, agent.id);
            up.exec();
        });
        plan.at = steady_now;
        plan.grace = milliseconds(due->grace_ms);
    }
    return plan;
}

}  // namespace

proc::StopPlan agent_stop_plan(Store& store, const AgentRecord& agent, const Clock& clock,
                               milliseconds wait_for_commit) {
    if (wait_for_commit.count() <= 0) return stop_plan_now(store, agent, clock);
    // Whoever woke us holds its writer's turn (it signals inside its write): once the turn is
    // free, its commit is in, or it never will be.
    if (store.await_writer()) return stop_plan_now(store, agent, clock);
    // No turn lock here: give the commit up to wait_for_commit to land.
    ChangeWatch watch(store.home());  // before the first look, so no commit is missed
    auto deadline = SteadyClock::now() + wait_for_commit;
    for (;;) {
        auto plan = stop_plan_now(store, agent, clock);
        if (plan.at || !watch.wait_until(deadline)) return plan;
    }
}

KillResult Shutdowns::kill(const TeamRecord& team, const Caller& caller, const KillOptions& o) {
    require_leader(caller, "kill agents");
    check_name(o.name, "agent name");
    check_text(o.reason, kMaxReasonBytes, "the reason");
    if (o.reassign_to) check_name(*o.reassign_to, "--reassign-to");
    if (o.force && o.force_after) {
        throw usage_error(
            "--force-after sets a deadline for a graceful shutdown; --force ends "
            "the agent now: give one of them");
    }
    if (o.grace.count() <= 0) throw usage_error("--grace must be positive");

    std::optional<TeamLock> lock;
    lock.emplace(store_.home(), team.name);
    Agents agents(store_, clock_, tmux_);
    agents.reconcile(team);  // an agent whose process ended meanwhile is terminated by now
    auto agent = find_member(store_, team, o.name);
    if (!agent) member_not_found(store_, team, o.name);
    if (agent->is_leader) {
        throw refused("the leader " + quote(agent->id_string()) +
                      " cannot be killed with kill-agent; end the whole team with 'team "
                      "teardown'");
    }
    if (!agent->live()) {
        throw refused("agent " + quote(agent->name) + " is already terminated (" +
                      agent->exit_reason.value_or("exited") + ")");
    }
    if (o.reassign_to) {
        if (*o.reassign_to == agent->name) {
            throw usage_error("--reassign-to names the agent being killed");
        }
        auto to = find_member(store_, team, *o.reassign_to);
        if (!to) member_not_found(store_, team, *o.reassign_to);
        if (!to->live()) {
            throw refused("--reassign-to " + quote(*o.reassign_to) + " is terminated");
        }
    }
    return o.force ? force(team, caller, *agent, o) : graceful(team, caller, *agent, o, lock);
}

KillResult Shutdowns::graceful(const TeamRecord& team, const Caller& caller,
                               const AgentRecord& agent, const KillOptions& o,
                               std::optional<TeamLock>& lock) {
    if (agent.status == "shutting_down") {
        auto open = newest_open_request(store_.db(), agent.id);
        throw refused("agent " + quote(agent.name) + " is already shutting down" +
                      (open ? " (request " + open->id_string() + ", phase " + open->phase + ")"
                            : std::string()) +
                      "; use --force to end it now");
    }
    if (agent.status != "active") {
        throw refused("agent " + quote(agent.name) + " is still starting; use --force to end it");
    }
    EpochMs now = clock_.now();
    ShutdownRequest request;
    store_.write([&] {
        auto& db = store_.db();
        SQLite::Statement status(
            db, "UPDATE agents SET status = 'shutting_down' WHERE id = ? AND status = 'active'");
        status.bind(1, agent.id);
        if (status.exec() == 0) {
            throw refused("agent " + quote(agent.name) + " is no longer active");
        }
        std::optional<Deadline> deadline;
        if (o.force_after) deadline = deadline_after(clock_, *o.force_after);
        std::string text = "shutdown requested by " + caller.id() +
                           (o.reason.empty() ? std::string() : ": " + o.reason) +
                           ". Approve with 'team shutdown approve' then finish and run 'team "
                           "shutdown confirm' (or exit), or reject with 'team shutdown reject "
                           "--reason TEXT'.";
        request = request_shutdown(db, team, caller, agent, o.reason, now, deadline, o.grace,
                                   o.reassign_to, text, false);
        // Its supervisor enforces the deadline from the commit on, whatever happens to this
        // command: woken before the commit (it waits for it), so no moment is left where this
        // command could die with the request stored and the supervisor unaware.
        if (o.force_after) wake_supervisor(agent);
    });

    KillResult result;
    result.agent_id = agent.id_string();
    result.method = "graceful";
    result.phase = request.phase;
    result.request_id = request.id_string();
    if (!o.wait && !o.timeout) return result;

    // Waiting needs no lock: other commands on the team go on meanwhile.
    lock.reset();
    ChangeWatch watch(store_.home());
    auto deadline = o.timeout ? SteadyClock::now() + *o.timeout : SteadyClock::time_point::max();
    auto supervisor = live_supervisor(agent);
    for (;;) {
        auto latest = load_request(store_.db(), request.id);
        if (!latest) break;  // the team was purged meanwhile: nothing of the agent is left
        request = *latest;
        if (request.phase == "rejected" || request.closed_at) break;
        std::vector<int> others;
        if (supervisor) {
            if (supervisor->exited()) {
                // It ended without recording the end (killed): the look records it.
                Agents(store_, clock_, tmux_).reconcile(team);
                supervisor.reset();
                continue;
            }
            others.push_back(supervisor->fd());
        }
        if (!watch.wait_until(deadline, others) && SteadyClock::now() >= deadline) {
            result.success = false;
            result.phase = request.phase;
            result.error = "timed out after " + seconds_text(*o.timeout) + " waiting for " +
                           agent.id_string() + " to answer the shutdown request (phase " +
                           request.phase + ")";
            result.exit_code = 124;
            return result;
        }
    }
    result.phase = request.phase;
    result.reassigned = request.reassigned;
    if (request.phase == "rejected") {
        result.success = false;
        result.error = agent.id_string() + " rejected the shutdown request" +
                       (request.reject_reason ? ": " + *request.reject_reason : std::string());
        result.exit_code = 4;
        return result;
    }
    // Ended: once its supervisor is gone too, nothing of it is left.
    await_end(agent.id, SteadyClock::now() + kSupervisorWait);
    if (auto now_agent = load_agent(store_, agent.id)) result.exit_reason = now_agent->exit_reason;
    return result;
}

KillResult Shutdowns::force(const TeamRecord& team, const Caller& caller, const AgentRecord& agent,
                            const KillOptions& o) {
    EpochMs now = clock_.now();
    std::int64_t request_id = 0;
    store_.write([&] {
        auto& db = store_.db();
        SQLite::Statement insert(db, R"sql(
            INSERT INTO shutdown_requests (team_id, agent_id, method, phase, reason, requested_by,
                                           requested_at, forced_at, grace_ms, reassign_to)
            SELECT ?, id, 'force', 'requested', ?, ?, ?, ?, ?, ? FROM agents
            WHERE id = ? AND status <> 'terminated'
        )sql");
        insert.bind(1, team.id);
        insert.bind(2, o.reason);
        insert.bind(3, caller.id());
        insert.bind(4, now);
        insert.bind(5, now);
        insert.bind(6, static_cast<std::int64_t>(o.grace.count()));
        bind_or_null(insert, 7, o.reassign_to);
        insert.bind(8, agent.id);
        if (insert.exec() == 0) {
            throw refused("agent " + quote(agent.name) + " is already terminated");
        }
        request_id = db.getLastInsertRowid();
    });
    // The leader's command ends the tree itself: it does not depend on the supervisor, which
    // may be stopped, busy or gone.
    proc::terminate_tree(agent_target(store_.home(), agent, false), SIGTERM, o.grace, true);
    if (!await_end(agent.id, SteadyClock::now() + kSupervisorWait)) {
        finish_here(team, agent.id, caller.id());
    }

    KillResult result;
    result.agent_id = agent.id_string();
    result.method = "force";
    result.request_id = std::to_string(request_id);
    auto request = load_request(store_.db(), request_id);
    result.phase = request ? request->phase : "force_killed";
    if (request) result.reassigned = request->reassigned;
    if (auto now_agent = load_agent(store_, agent.id)) result.exit_reason = now_agent->exit_reason;
    auto left = proc::find_tree(agent_target(store_.home(), agent, true));
    if (!left.empty()) {
        result.success = false;
        result.error = std::to_string(left.size()) + " process" + (left.size() == 1 ? "" : "es") +
                       " of " + agent.id_string() + " could not be ended (first: pid " +
                       std::to_string(left.front().pid) + ")";
        result.exit_code = 1;
    }
    return result;
}

bool Shutdowns::await_end(std::int64_t agent_id, SteadyClock::time_point deadline) {
    ChangeWatch watch(store_.home());
    auto agent = load_agent(store_, agent_id);
    if (!agent) return true;
    auto supervisor = live_supervisor(*agent);
    for (;;) {
        agent = load_agent(store_, agent_id);
        if (!agent) return true;
        bool supervisor_gone = !supervisor || supervisor->exited();
        if (!agent->live() && supervisor_gone) return true;
        if (supervisor_gone) return false;  // nobody left to record it
        if (!watch.wait_until(deadline, {supervisor->fd()}) && SteadyClock::now() >= deadline) {
            return false;
        }
    }
}

void Shutdowns::finish_here(const TeamRecord& team, std::int64_t agent_id,
                            const std::string& actor) {
    auto agent = load_agent(store_, agent_id);
    if (!agent) return;
    // The supervisor too: it could not finish its work in time (stopped, or gone).
    proc::terminate_tree(agent_target(store_.home(), *agent, true), SIGKILL, milliseconds(0), true);
    store_.write([&] {
        auto now = load_agent(store_, agent_id);
        if (!now || !now->live()) return;
        finish_agent(store_.db(), *now, clock_.now(),
                     {"lost", std::nullopt, std::nullopt, actor, std::nullopt, {}});
    });
    if (!agent->pane_id || !agent->supervisor_pid) return;
    tmux::TmuxServer server(tmux_);
    for (const auto& p : server.list_panes()) {
        // Pane ids start again at %0 on a new server: only the pane whose first process is this
        // agent's supervisor is its pane.
        if (p.id == *agent->pane_id && p.session == team.name &&
            p.pid == static_cast<pid_t>(*agent->supervisor_pid)) {
            server.kill_pane(p.id);
        }
    }
}

namespace {

// The request the caller answers: the one named (it must be addressed to the caller), else the
// caller's newest open one.
ShutdownRequest find_own_request(Store& store, const TeamRecord& team, const Caller& caller,
                                 const std::optional<std::string>& request_id,
                                 const std::string& verb) {
    if (request_id) {
        auto r = load_request(store.db(), parse_request_id(*request_id));
        if (!r || r->team_id != team.id) {
            throw not_found("shutdown request " + quote(*request_id) + " not found in team " +
                            quote(team.name));
        }
        if (r->agent_id != caller.member_id) {
            throw refused("only " + r->agent + ", to whom shutdown request " + r->id_string() +
                          " is addressed, can " + verb + " it (you are " + caller.id() + ")");
        }
        return *r;
    }
    if (caller.is_leader) {
        throw refused("only the agent a shutdown request is addressed to can " + verb +
                      " it; you are the leader (" + caller.id() + ")");
    }
    auto r = newest_open_request(store.db(), caller.member_id);
    if (!r) throw not_found("there is no open shutdown request for you (" + caller.id() + ")");
    return *r;
}

}  // namespace

ShutdownRequest Shutdowns::approve(const TeamRecord& team, const Caller& caller,
                                   const std::optional<std::string>& request_id) {
    return store_.write([&] {
        auto& db = store_.db();
        auto r = find_own_request(store_, team, caller, request_id, "approve");
        if (r.method == "force" || r.forced_at) {
            throw refused("shutdown request " + r.id_string() + " is a forced one: " + r.agent +
                          " is being ended without a say");
        }
        if (r.phase != "requested" || r.closed_at) {
            throw refused("shutdown request " + r.id_string() + " is already " + r.phase +
                          (r.phase == "approved" ? "; finish and run 'team shutdown confirm'"
                                                 : std::string()));
        }
        EpochMs now = clock_.now();
        SQLite::Statement up(db,
                             "UPDATE shutdown_requests SET phase = 'approved', responded_at = ? "
                             "WHERE id = ?");
        up.bind(1, now);
        up.bind(2, r.id);
        up.exec();
        if (auto leader = leader_of(store_, team.id)) {
            post_message(db, team, caller.name, *leader, "shutdown_approved",
                         caller.id() + " approved the shutdown; it confirms when it has finished",
                         {{"requestId", r.id_string()}, {"reason", r.reason}}, now);
        }
        append_activity(db, team.id, now, caller.id(), "shutdown_approved",
                        {{"agentId", r.agent}, {"requestId", r.id_string()}});
        return *load_request(db, r.id);
    });
}

ShutdownRequest Shutdowns::reject(const TeamRecord& team, const Caller& caller,
                                  const std::string& reason,
                                  const std::optional<std::string>& request_id) {
    check_text(reason, kMaxReasonBytes, "the reason");
    if (reason.find_first_not_of(" \t\r\n") == std::string::npos) {
        throw usage_error("a rejection needs a reason: team shutdown reject --reason TEXT");
    }
    return store_.write([&] {
        auto& db = store_.db();
        auto r = find_own_request(store_, team, caller, request_id, "reject");
        if (r.method == "force" || r.forced_at) {
            throw refused("shutdown request " + r.id_string() +
                          " is a forced one and cannot be rejected");
        }
        if (r.phase != "requested" || r.closed_at) {
            throw refused("shutdown request " + r.id_string() + " is already " + r.phase +
                          (r.phase == "approved" ? ": an approval cannot be taken back" : ""));
        }
        EpochMs now = clock_.now();
        SQLite::Statement up(db, R"sql(
            UPDATE shutdown_requests SET phase = 'rejected', responded_at = ?, reject_reason = ?,
                                         closed_at = ?
            WHERE id = ?
        )sql");
        up.bind(1, now);
        up.bind(2, reason);
        up.bind(3, now);
        up.bind(4, r.id);
        up.exec();
        SQLite::Statement back(
            db, "UPDATE agents SET status = 'active' WHERE id = ? AND status = 'shutting_down'");
        back.bind(1, r.agent_id);
        back.exec();
        if (auto leader = leader_of(store_, team.id)) {
            post_message(db, team, caller.name, *leader, "shutdown_rejected",
                         caller.id() + " rejected the shutdown: " + reason,
                         {{"requestId", r.id_string()}, {"reason", reason}}, now);
        }
        append_activity(db, team.id, now, caller.id(), "shutdown_rejected",
                        {{"agentId", r.agent}, {"requestId", r.id_string()}, {"reason", reason}});
        return *load_request(db, r.id);
    });
}

ShutdownRequest Shutdowns::confirm(const TeamRecord& team, const Caller& caller,
                                   const std::optional<std::string>& request_id) {
    auto r = store_.write([&] {
        auto& db = store_.db();
        auto r = find_own_request(store_, team, caller, request_id, "confirm");
        if (r.method == "force" || r.forced_at) {
            throw refused("shutdown request " + r.id_string() + " is a forced one: " + r.agent +
                          " is being ended already");
        }
        if ((r.phase != "requested" && r.phase != "approved") || r.closed_at) {
            throw refused("shutdown request " + r.id_string() + " is already " + r.phase);
        }
        EpochMs now = clock_.now();
        SQLite::Statement up(db, R"sql(
            UPDATE shutdown_requests SET phase = 'confirmed', confirmed_at = ?,
                                         responded_at = coalesce(responded_at, ?)
            WHERE id = ?
        )sql");
        up.bind(1, now);
        up.bind(2, now);
        up.bind(3, r.id);
        up.exec();
        // The supervisor ends the agent's tree (within the request's grace), records the end
        // and removes the pane: it lives outside the tree, so this works from inside the pane,
        // whose processes (this one among them) are about to end. Woken before the commit
        // (it waits for it), like a deadline, so no moment is left where this command could die
        // with the confirmation stored and the supervisor unaware.
        if (auto agent = load_agent(store_, r.agent_id)) wake_supervisor(*agent);
        return *load_request(db, r.id);
    });
    auto agent = load_agent(store_, r.agent_id);
    if (!agent || inside_tree_of(*agent)) return r;
    auto deadline = SteadyClock::now() + milliseconds(r.grace_ms) + kSupervisorWait;
    if (!await_end(agent->id, deadline)) {
        auto now = load_agent(store_, agent->id);
        if (now && (!live_supervisor(*now) || !now->live()))
            finish_here(team, agent->id, caller.id());
    }
    return load_request(store_.db(), r.id).value_or(r);
}

std::vector<ShutdownRequest> Shutdowns::status(const TeamRecord& team, const Caller& caller,
                                               const std::optional<std::string>& name) {
    Agents(store_, clock_, tmux_).reconcile(team);
    if (!name && caller.is_leader) return open_requests(store_.db(), team.id);
    std::int64_t member_id = caller.member_id;
    std::string who = caller.id();
    if (name) {
        check_name(*name, "agent name");
        auto member = find_member(store_, team, *name);
        if (!member) member_not_found(store_, team, *name);
        member_id = member->id;
        who = member->id_string();
    }
    auto rows =
        select_requests(store_.db(), "r.agent_id = ? ORDER BY r.id DESC LIMIT 1", member_id);
    if (rows.empty()) throw not_found("there is no shutdown request for " + who);
    return rows;
}

TeardownResult Shutdowns::teardown(const TeamRecord& team, const Caller& caller,
                                   const TeardownOptions& o,
                                   const std::function<void(const TeardownRow&)>& on_row) {
    require_leader(caller, "tear down the team");
    check_text(o.reason, kMaxReasonBytes, "the reason");
    if (o.grace.count() <= 0) throw usage_error("--grace must be positive");
    if (team.status != "active") {
        throw refused("team " + quote(team.name) + " is already dissolved");
    }
    TeamLock lock(store_.home(), team.name);
    Agents agents(store_, clock_, tmux_);
    agents.reconcile(team);
    auto live = load_agents(store_, team, false);

    EpochMs now = clock_.now();
    Deadline deadline_at = deadline_after(clock_, o.grace);
    store_.write([&] {
        auto& db = store_.db();
        SQLite::Statement active(db, "SELECT status FROM teams WHERE id = ?");
        active.bind(1, team.id);
        if (!active.executeStep() || active.getColumn(0).getString() != "active") {
            throw refused("team " + quote(team.name) + " is already dissolved");
        }
        for (const auto& agent : live) {
            if (agent.status == "shutting_down") {
                // Its open request keeps going, with teardown's deadline at the latest (a
                // request from before schema 7 has its deadline on the wall clock only).
                SQLite::Statement sooner(db, R"sql(
                    UPDATE shutdown_requests
                    SET force_at_boot = min(coalesce(force_at_boot,
                                                     ?4 + coalesce(force_at, ?1) - ?1), ?4),
                        force_at = min(coalesce(force_at, ?1), ?1),
                        grace_ms = min(grace_ms, ?2)
                    WHERE agent_id = ?3 AND closed_at IS NULL
                )sql");
                sooner.bind(1, deadline_at.wall);
                sooner.bind(2, static_cast<std::int64_t>(kTeardownKillGrace.count()));
                sooner.bind(3, agent.id);
                sooner.bind(4, deadline_at.boot);
                sooner.exec();
                continue;
            }
            SQLite::Statement status(db,
                                     "UPDATE agents SET status = 'shutting_down' WHERE id = ? "
                                     "AND status = 'active'");
            status.bind(1, agent.id);
            status.exec();
            request_shutdown(db, team, caller, agent, o.reason, now, deadline_at,
                             kTeardownKillGrace, std::nullopt,
                             "the team is being torn down by " + caller.id() +
                                 (o.reason.empty() ? std::string() : ": " + o.reason) +
                                 ". Finish, then 'team shutdown confirm' (or exit) within " +
                                 seconds_text(o.grace) + "; after that you are force-killed.",
                             true);
        }
        // Each supervisor enforces the deadline too, whatever happens to this command: woken
        // before the commit, which it waits for.
        for (const auto& agent : live) wake_supervisor(agent);
    });

    TeardownResult result;
    std::vector<bool> reported(live.size(), false);

    auto report = [&](size_t i, const AgentRecord& agent) {
        reported[i] = true;
        result.agents.push_back(teardown_row(store_.db(), agent));
        if (on_row) on_row(result.agents.back());
    };

    // Until every agent has ended or the grace is over: wake at each commit and at each
    // supervisor's exit.
    ChangeWatch watch(store_.home());
    auto deadline = SteadyClock::now() + o.grace;
    std::vector<std::optional<proc::Pidfd>> supervisors;
    for (const auto& agent : live) supervisors.push_back(live_supervisor(agent));
    std::vector<AgentRecord> rest;
    for (;;) {
        rest.clear();
        std::vector<int> others;
        bool lost = false;
        for (size_t i = 0; i < live.size(); ++i) {
            if (reported[i]) continue;
            auto agent = load_agent(store_, live[i].id);
            auto& supervisor = supervisors[i];
            bool supervisor_gone = !supervisor || supervisor->exited();
            if (agent && !agent->live() && supervisor_gone) {
                report(i, *agent);
                continue;
            }
            if (agent && agent->live() && supervisor_gone) lost = true;
            if (!supervisor_gone) others.push_back(supervisor->fd());
            rest.push_back(agent ? *agent : live[i]);
        }
        if (rest.empty()) break;
        if (lost) {
            agents.reconcile(team);
            for (auto& s : supervisors) {
                if (s && s->exited()) s.reset();
            }
            continue;
        }
        if (!watch.wait_until(deadline, others) && SteadyClock::now() >= deadline) break;
    }

    if (!rest.empty()) {
        force_all(team, rest, caller.id());
        for (size_t i = 0; i < live.size(); ++i) {
            if (reported[i]) continue;
            if (auto agent = load_agent(store_, live[i].id)) report(i, *agent);
        }
    }

    tmux::TmuxServer(tmux_).kill_session(team.name);
    std::vector<proc::TreeTarget> all;
    for (const auto& agent : live) all.push_back(agent_target(store_.home(), agent, true));
    result.survivors = all.empty() ? 0 : static_cast<int>(proc::find_trees(all).size());
    if (result.survivors > 0) return result;
    dissolve(team, caller, o, static_cast<int>(result.agents.size()));
    result.dissolved = true;
    result.purged = o.purge;
    return result;
}

void Shutdowns::force_all(const TeamRecord& team, const std::vector<AgentRecord>& agents,
                          const std::string& actor) {
    // Recorded first, so each end is recorded as force_killed.
    EpochMs forced = clock_.now();
    store_.write([&] {
        for (const auto& agent : agents) {
            SQLite::Statement up(store_.db(), R"sql(
                UPDATE shutdown_requests SET forced_at = ?, closed_at = NULL
                WHERE id = (SELECT max(id) FROM shutdown_requests WHERE agent_id = ?)
                  AND forced_at IS NULL
            )sql");
            up.bind(1, forced);
            up.bind(2, agent.id);
            up.exec();
        }
    });
    std::vector<proc::TreeTarget> targets;
    for (const auto& agent : agents) targets.push_back(agent_target(store_.home(), agent, false));
    proc::terminate_trees(targets, SIGTERM, kTeardownKillGrace, true);
    auto deadline = SteadyClock::now() + kSupervisorWait;
    for (const auto& agent : agents) {
        if (!await_end(agent.id, deadline)) finish_here(team, agent.id, actor);
    }
}

void Shutdowns::dissolve(const TeamRecord& team, const Caller& caller, const TeardownOptions& o,
                         int agents) {
    std::vector<std::string> purged_logs;
    store_.write([&] {
        auto& db = store_.db();
        EpochMs at = clock_.now();
        SQLite::Statement dissolve(db,
                                   "UPDATE teams SET status = 'dissolved', dissolved_at = ? "
                                   "WHERE id = ? AND status = 'active'");
        dissolve.bind(1, at);
        dissolve.bind(2, team.id);
        dissolve.exec();
        nlohmann::json details = {{"reason", o.reason}, {"agents", agents}, {"purged", o.purge}};
        if (o.purge) {
            SQLite::Statement logs(db,
                                   "SELECT log_file FROM agents WHERE team_id = ? AND "
                                   "log_file IS NOT NULL");
            logs.bind(1, team.id);
            while (logs.executeStep()) purged_logs.push_back(logs.getColumn(0).getString());
            SQLite::Statement del(db, "DELETE FROM teams WHERE id = ?");
            del.bind(1, team.id);
            del.exec();
            details["team"] = team.name;
            append_activity(db, std::nullopt, at, caller.id(), "team_dissolved", details);
        } else {
            append_activity(db, team.id, at, caller.id(), "team_dissolved", details);
        }
    });
    // The records are gone; their pane logs go with them.
    for (const auto& path : purged_logs) {
        std::error_code ec;
        std::filesystem::remove(path, ec);
    }
}

}  // namespace team
