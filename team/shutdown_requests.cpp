#include "team/shutdown.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "base/error.hpp"
#include "proc/pidfd.hpp"
#include "proc/process_table.hpp"
#include "proc/terminate.hpp"
#include "state/activity.hpp"
#include "state/agent_activity_rows.hpp"
#include "state/supervisor_bell.hpp"
#include "team/messages.hpp"
#include "team/prompt_taken.hpp"
#include "team/shutdown_parts.hpp"
#include "tmux/server.hpp"

namespace team {

using namespace shutdown_parts;

namespace shutdown_parts {

bool lives_here(Store& store, const AgentRecord& agent) {
    return agent.lives_in(store.home_id());
}

std::optional<proc::Pidfd> live_supervisor(Store& store, proc::Processes& processes,
                                           const AgentRecord& agent) {
    if (!lives_here(store, agent)) return std::nullopt;
    return processes.live(agent.supervisor_pid, agent.supervisor_start);
}

void signal_supervisor(proc::Processes& processes, const AgentRecord& agent) {
    if (auto supervisor = processes.live(agent.supervisor_pid, agent.supervisor_start)) {
        supervisor->signal(SIGUSR1);
    }
}

void wake_supervisor(Store& store, proc::Processes& processes, const AgentRecord& agent) {
    if (lives_here(store, agent)) {
        signal_supervisor(processes, agent);
    } else {
        ring_supervisor_bell(store, agent.id);
    }
}

// Everything of an agent: what its supervisor (a subreaper) has below it, its process group,
// and whatever carries its identity in the environment. `with_supervisor`: the supervisor too.
proc::TreeTarget agent_target(const std::filesystem::path& home, const AgentRecord& agent,
                              bool with_supervisor) {
    return proc::tree_of_record(agent.supervisor_pid, agent.supervisor_start, agent.pid,
                                agent.pid_start, agent_marker(home, agent), with_supervisor);
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

std::optional<std::int64_t> boot_deadline(Store& store, const AgentRecord& agent,
                                          const Deadline& deadline) {
    if (!lives_here(store, agent)) return std::nullopt;
    return deadline.boot;
}

// A graceful request to `agent` (in the caller's transaction): the row, the shutdown_request
// message in its inbox and the activity entry. `text` is the message; the agent's status is the
// caller's business.
ShutdownRequest request_shutdown(Store& store, const TeamRecord& team, const Caller& caller,
                                 const AgentRecord& agent, const std::string& reason, EpochMs now,
                                 std::optional<Deadline> deadline, milliseconds grace,
                                 const std::optional<std::string>& reassign_to,
                                 const std::string& text, bool teardown) {
    NewShutdownRequest row;
    row.team_id = team.id;
    row.agent_id = agent.id;
    row.reason = reason;
    row.requested_by = caller.id();
    row.requested_at = now;
    row.grace_ms = static_cast<std::int64_t>(grace.count());
    row.reassign_to = reassign_to;
    std::optional<EpochMs> force_at;
    if (deadline) {
        force_at = deadline->wall;
        row.force_at = deadline->wall;
        row.force_at_boot = boot_deadline(store, agent, *deadline);
    }
    ShutdownRequest request = *find_request(store, insert_graceful_request(store, row));
    auto& db = store.db();
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

bool wants_notice(const AgentRecord& agent, std::optional<bool> asked) {
    return asked.value_or(agent.notify);
}

std::optional<std::string> type_shutdown_notice(Store& store, tmux::Tmux& tmux,
                                                const AgentRecord& agent,
                                                const ShutdownRequest& request) {
    if (!lives_here(store, agent)) {
        return agent.name + " runs in another home (" + agent.home_id.value_or("") +
               "): its pane is not this machine's to type into";
    }
    if (!agent.pane_id) return agent.name + " has no pane to type into";
    // Worded for a coding agent that sits idle at its prompt: it takes the line as a prompt,
    // reads its inbox and answers through the team's tools (or the command line).
    std::string line = "[team] shutdown requested by " + request.requested_by + " (request " +
                       request.id_string() +
                       "): read your team inbox now (the inbox_read tool, or team inbox "
                       "--unread) and answer it: approve and then confirm when your step is "
                       "done, or reject with a reason";
    try {
        // An agent whose hooks report a submitted prompt: typed as a prompt is, until it
        // reports it took the line (at most 3 s), its Enter pressed again when it took one for a
        // newline (Gemini CLI, within ~0.8 s of a paste). Never an answer to a dialog: one its
        // hooks say it waits at gets a paste, which dialogs ignore, entered only when it shows
        // in the input box (the wait was over; Gemini CLI reports no refused dialog).
        auto activity = load_agent_activity(store, agent.id);
        if (activity && activity->source == "hooks") {
            SystemClock clock;
            auto taken = type_and_wait_taken(store, tmux, agent.id, *agent.pane_id, line,
                                             std::chrono::seconds(3), clock, Typed::notice);
            if (taken.how == "dialog") {
                return agent.name + " waits at a dialog for a person: the notice was pasted, " +
                       "which its dialog ignores; the request is in its inbox";
            }
            return std::nullopt;
        }
        tmux::TmuxServer(tmux).type_text(*agent.pane_id, line, true);
        return std::nullopt;
    } catch (const std::exception& e) {
        return std::string(e.what());
    }
}

// An agent's row in teardown's result, from its newest request.
TeardownRow teardown_row(Store& store, const AgentRecord& agent) {
    TeardownRow row;
    row.agent_id = agent.id_string();
    row.method = ShutdownMethod::graceful;
    row.phase = ShutdownPhase::requested;
    if (auto newest = newest_request(store, agent.id)) {
        row.method = newest->forced_at ? ShutdownMethod::force : ShutdownMethod::graceful;
        row.phase = newest->phase;
        row.reassigned = newest->reassigned;
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
    if (r.notified) j["notified"] = *r.notified;
    if (r.notify_error) j["notifyError"] = *r.notify_error;
    if (r.error) j["error"] = *r.error;
    if (!r.worktree.is_null()) j["worktree"] = r.worktree;
    return j;
}

nlohmann::json to_json(const TeardownRow& row) {
    nlohmann::json j = {
        {"agentId", row.agent_id},
        {"method", str(row.method)},
        {"phase", str(row.phase)},
        {"reassignedTasks", row.reassigned},
        {"exitReason", row.exit_reason ? nlohmann::json(*row.exit_reason) : nullptr}};
    if (!row.worktree.is_null()) j["worktree"] = row.worktree;
    return j;
}

}  // namespace team
