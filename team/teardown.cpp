#include "team/shutdown.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "base/error.hpp"
#include "base/text.hpp"
#include "proc/pidfd.hpp"
#include "proc/terminate.hpp"
#include "state/activity.hpp"
#include "state/change_watch.hpp"
#include "state/members.hpp"
#include "state/supervisor_bell.hpp"
#include "state/teams.hpp"
#include "team/agent_screen.hpp"
#include "team/messages.hpp"
#include "team/shutdown_parts.hpp"
#include "team/worktrees.hpp"
#include "tmux/server.hpp"

namespace team {

using namespace shutdown_parts;

TeardownResult Shutdowns::teardown(const TeamRecord& team, const Caller& caller,
                                   const TeardownOptions& o,
                                   const std::function<void(const TeardownRow&)>& on_row) {
    require_leader(caller, "tear down the team");
    check_text(o.reason, kMaxReasonBytes, "the reason");
    if (o.grace.count() <= 0) throw usage_error("--grace must be positive");
    if (team.status != TeamState::active) {
        throw refused("team " + quote(team.name) + " is already dissolved");
    }
    TeamLock lock(store_, team.name);
    Agents agents = this->agents();
    agents.reconcile(team);
    // Agents of other homes too (a shared store, SPEC 16): each of their supervisors, rung
    // through the store, enforces the deadline and ends its agent there.
    auto live = load_agents(store_, team, false);

    EpochMs now = clock_.now();
    Deadline deadline_at = deadline_after(clock_, o.grace);
    std::vector<std::pair<AgentRecord, ShutdownRequest>> asked;  // the new requests
    store_.write([&] {
        asked.clear();
        if (!team_is_active(store_, team.id)) {
            throw refused("team " + quote(team.name) + " is already dissolved");
        }
        for (const auto& agent : live) {
            if (agent.status == AgentStatus::shutting_down) {
                // Its open request keeps going, with teardown's deadline at the latest (a
                // request from before schema 7 has its deadline on the wall clock only).
                bring_deadline_forward(store_, agent.id, deadline_at.wall,
                                       boot_deadline(store_, agent, deadline_at),
                                       static_cast<std::int64_t>(kTeardownKillGrace.count()));
                continue;
            }
            set_agent_shutting_down(store_, agent.id);
            auto request =
                request_shutdown(store_, team, caller, agent, o.reason, now, deadline_at,
                                 kTeardownKillGrace, std::nullopt,
                                 "the team is being torn down by " + caller.id() +
                                     (o.reason.empty() ? std::string() : ": " + o.reason) +
                                     ". Finish, then 'team shutdown confirm' (or exit) within " +
                                     seconds_text(o.grace) + "; after that you are force-killed.",
                                 true);
            asked.emplace_back(agent, request);
        }
        // Each supervisor enforces the deadline too, whatever happens to this command: woken
        // before the commit, which it waits for.
        for (const auto& agent : live) wake_supervisor(store_, processes_, agent);
    });
    // After the commit, as kill-agent does: an idle coding agent reads its inbox at the notice.
    for (const auto& [agent, request] : asked) {
        if (wants_notice(agent, o.notify)) type_shutdown_notice(store_, tmux_, agent, request);
    }

    TeardownResult result;
    std::vector<bool> reported(live.size(), false);
    Worktrees worktrees(store_, clock_);

    auto report = [&](size_t i, const AgentRecord& agent) {
        reported[i] = true;
        result.agents.push_back(teardown_row(store_, agent));
        // Another home's worktree is on that machine: its supervisor keeps it there.
        if (lives_here(store_, agent)) result.agents.back().worktree = worktrees.keep(agent.id);
        if (on_row) on_row(result.agents.back());
    };

    // Until every agent has ended or the grace is over: wake at each commit and at each
    // supervisor's exit.
    ChangeWatch watch(store_);  // on the store's own connection
    auto deadline = clock_.steady() + o.grace;
    std::vector<std::optional<proc::Pidfd>> supervisors;
    for (const auto& agent : live)
        supervisors.push_back(live_supervisor(store_, processes_, agent));
    std::vector<AgentRecord> rest;
    for (;;) {
        rest.clear();
        std::vector<int> others;
        bool lost = false;
        for (size_t i = 0; i < live.size(); ++i) {
            if (reported[i]) continue;
            auto agent = load_agent(store_, live[i].id);
            if (!lives_here(store_, live[i])) {
                // Another home's: its end is recorded there, and seen through the store.
                if (!agent || !agent->live()) {
                    report(i, agent ? *agent : live[i]);
                } else {
                    rest.push_back(*agent);
                }
                continue;
            }
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
        if (!watch.wait_until(deadline, others) && clock_.steady() >= deadline) break;
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
    int elsewhere = 0;  // agents of other homes still running: their processes are not seen here
    for (const auto& agent : live) {
        if (lives_here(store_, agent)) {
            all.push_back(agent_target(store_.home(), agent, true));
        } else if (auto now = load_agent(store_, agent.id); now && now->live()) {
            ++elsewhere;
        }
    }
    result.survivors =
        elsewhere + (all.empty() ? 0 : static_cast<int>(processes_.find_trees(all).size()));
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
    bool elsewhere = false;
    store_.write([&] {
        for (const auto& agent : agents) {
            begin_force_newest(store_, agent.id, forced);
            // Another home's: its supervisor ends it (its own deadline has come too).
            if (!lives_here(store_, agent)) {
                ring_supervisor_bell(store_, agent.id);
                elsewhere = true;
            }
        }
    });
    std::vector<proc::TreeTarget> targets;
    for (const auto& agent : agents) {
        if (lives_here(store_, agent)) targets.push_back(agent_target(store_.home(), agent, false));
    }
    if (!targets.empty()) processes_.terminate_trees(targets, SIGTERM, kTeardownKillGrace, true);
    // Another home's supervisor records the end after its kill grace, and the store's round
    // trips: a margin more.
    auto deadline =
        clock_.steady() + kSupervisorWait + (elsewhere ? kSupervisorWait : milliseconds(0));
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
        mark_team_dissolved(store_, team.id, at);
        nlohmann::json details = {{"reason", o.reason}, {"agents", agents}, {"purged", o.purge}};
        if (o.purge) {
            purged_logs = agent_log_files(store_, team.id);
            delete_team(store_, team.id);
            details["team"] = team.name;
            append_activity(db, std::nullopt, at, caller.id(), "team_dissolved", details);
        } else {
            append_activity(db, team.id, at, caller.id(), "team_dissolved", details);
        }
    });
    // The records are gone; their pane logs go with them, and the screens kept beside them.
    for (const auto& path : purged_logs) {
        std::error_code ec;
        std::filesystem::remove(path, ec);
        std::filesystem::remove(screen_file(path), ec);
    }
}

}  // namespace team
