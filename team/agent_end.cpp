#include "team/agent_end.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>

#include "base/error.hpp"
#include "proc/pidfd.hpp"
#include "state/acp_rows.hpp"
#include "state/activity.hpp"
#include "state/change_watch.hpp"
#include "state/members.hpp"
#include "state/shutdown_rows.hpp"
#include "state/task_rows.hpp"
#include "state/worktree_rows.hpp"
#include "team/messages.hpp"
#include "team/notify.hpp"
#include "team/shutdown_parts.hpp"

namespace team {

using namespace shutdown_parts;

std::optional<std::vector<std::string>> mark_terminated(Store& store, const AgentRecord& agent,
                                                        EpochMs at, const Termination& how) {
    if (!mark_agent_terminated(store, agent.id, {at, how.reason, how.exit_code, how.signal})) {
        return std::nullopt;
    }
    auto& db = store.db();
    owe_snapshot(store, agent.id);  // its worktree, if it has one (team/worktrees.hpp)
    // Its ACP session, if it has one, whether or not its host lived to record the end.
    end_acp_session(store, agent.id, "the agent ended (" + how.reason + ")", at);
    auto tasks = hand_back_tasks(db, agent.team_id, agent.name, at, how.reassign_to);
    nlohmann::json details = {
        {"agentId", agent.id_string()},
        {"exitReason", how.reason},
        {"exitCode", how.exit_code ? nlohmann::json(*how.exit_code) : nullptr},
        {"signal", how.signal ? nlohmann::json(*how.signal) : nullptr},
        {"reassignedTasks", tasks}};
    if (how.details.is_object()) details.update(how.details);  // `{}` in an initializer is null
    const char* type = how.reason == "confirmed"      ? "shutdown_confirmed"
                       : how.reason == "force_killed" ? "agent_force_killed"
                                                      : "agent_exited";
    append_activity(db, agent.team_id, at, how.actor, type, details);
    if (!tasks.empty()) {
        nlohmann::json moved = {{"from", agent.id_string()}, {"tasks", tasks}};
        if (how.reassign_to) moved["to"] = *how.reassign_to;
        append_activity(db, agent.team_id, at, how.actor, "tasks_reassigned", moved);
    }
    // The home's notify command hears of the end once it is kept (SPEC 17).
    if (!agent.is_leader) {
        notify_after_commit(store, {{"event", "ended"},
                                    {"team", agent.team},
                                    {"agent", agent.name},
                                    {"agentId", agent.id_string()},
                                    {"exitReason", how.reason},
                                    {"exitCode", details["exitCode"]},
                                    {"signal", details["signal"]},
                                    {"at", iso8601(at)}});
    }
    return tasks;
}

bool finish_agent(Store& store, const AgentRecord& agent, EpochMs at, const Termination& natural) {
    auto open = requests_of(store, agent.id, true);
    const ShutdownRequest* forced = nullptr;
    const ShutdownRequest* confirmed = nullptr;
    for (const auto& r : open) {
        if (r.forced_at) forced = &r;
        if (answered(r.phase)) confirmed = &r;
    }
    Termination how = natural;
    const ShutdownRequest* decisive = forced ? forced : confirmed;
    if (natural.reason_stands) {
        // as given
    } else if (forced) {
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
            if (other_live_member_exists(store, agent.team_id, *decisive->reassign_to, agent.id)) {
                how.reassign_to = decisive->reassign_to;
            }
        }
    }
    auto tasks = mark_terminated(store, agent, at, how);
    if (!tasks) return false;

    // A host lost: its force was never carried out, and the request says so (not force_killed).
    close_requests(store, agent.id, forced != nullptr && !natural.reason_stands, at, *tasks);

    if (how.reason == "confirmed") {
        if (auto to = live_leader_name(store, agent.team_id)) {
            TeamRecord team;
            team.id = agent.team_id;
            team.name = agent.team;
            post_message(store.db(), team, agent.name, *to, "shutdown_confirmed",
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

proc::StopPlan stop_plan_now(Store& store, const AgentRecord& agent, const Clock& clock, bool woken,
                             StopMemory* memory) {
    proc::StopPlan plan;
    EpochMs now = clock.now();
    std::int64_t boot_now = clock.boot_ms();
    auto steady_now = clock.steady();
    std::optional<ShutdownRequest> due;
    for (const auto& r : requests_of(store, agent.id, false)) {
        if (!r.closed_at && (r.phase == ShutdownPhase::confirmed || r.forced_at)) {
            plan.at = steady_now;
            plan.grace = milliseconds(r.grace_ms);
            // A confirmation: the confirmer's answer first (its second wake), unless force began.
            if (memory && !r.forced_at && !(woken && memory->confirmation == r.id)) {
                if (memory->confirmation != r.id) {
                    memory->confirmation = r.id;
                    memory->seen_at = steady_now;
                }
                plan.at = std::max(steady_now, memory->seen_at + kReplyWindow);
            }
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
        store.write([&] { begin_force_due(store, due->id, agent.id, now); });
        plan.at = steady_now;
        plan.grace = milliseconds(due->grace_ms);
    }
    return plan;
}

}  // namespace

proc::StopPlan agent_stop_plan(Store& store, const AgentRecord& agent, const Clock& clock,
                               milliseconds wait_for_commit, StopMemory* memory) {
    bool woken = wait_for_commit.count() > 0;
    if (!woken) return stop_plan_now(store, agent, clock, false, memory);
    // Whoever woke us holds its writer's turn (it signals inside its write): once the turn is
    // free, its commit is in, or it never will be.
    if (store.await_writer()) return stop_plan_now(store, agent, clock, true, memory);
    // No turn lock here: give the commit up to wait_for_commit to land.
    ChangeWatch watch(store.home());  // before the first look, so no commit is missed
    auto deadline = clock.steady() + wait_for_commit;
    for (;;) {
        auto plan = stop_plan_now(store, agent, clock, true, memory);
        if (plan.at || !watch.wait_until(deadline)) return plan;
    }
}

}  // namespace team
