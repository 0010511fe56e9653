#include "ops/supervisors.hpp"

#include <chrono>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "hosts/keeper.hpp"
#include "hosts/link_daemon.hpp"
#include "ops/remote.hpp"
#include "shells/shells.hpp"
#include "state/members.hpp"
#include "state/resume_rows.hpp"
#include "state/teams.hpp"
#include "team/acp_host.hpp"
#include "team/agent_activity.hpp"
#include "team/agents.hpp"
#include "team/claude_state_watch.hpp"
#include "team/hook_reports.hpp"
#include "team/notify.hpp"
#include "team/screen_watch.hpp"
#include "team/usage.hpp"
#include "team/worktree_watch.hpp"

namespace team::ops {

int supervise_shell(Core& core, const std::string& id, int ready_fd) {
    return shells::Shells::supervise(core.store(), id, ready_fd);
}

int supervise_agent(Core& core, std::int64_t agent_id, std::optional<std::int64_t> spawner) {
    return Agents::supervise(core.store(), agent_id, spawner);
}

int host_acp_agent(Core& core, std::int64_t agent_id) {
    return team::host_acp_agent(core.store(), agent_id);
}

int watch_worktree(Core& core, std::int64_t agent_id) {
    return team::watch_worktree(core.store(), agent_id);
}

int report_hook(Core& core, const std::string& agent, const std::string& kind,
                const std::string& event, const std::optional<std::string>& payload) {
    try {
        if (!is_hook_kind(kind)) return 0;
        std::string text;
        if (payload) {
            text = *payload;
        } else {
            text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
        }
        auto doc = nlohmann::json::parse(text, nullptr, false);
        if (doc.is_discarded()) doc = nlohmann::json::object();
        auto report = hook_report(kind, event, doc);
        bool usage = hook_has_usage(event, doc);
        // Its conversation's id (SPEC 19: what `team resume` resumes), on every hook.
        std::string session;
        if (auto id = doc.find("session_id"); id != doc.end() && id->is_string())
            session = id->get<std::string>();
        if (session.size() > 256) session.clear();
        if (!report && !usage && session.empty()) return 0;
        auto at = agent.rfind('@');
        if (at == std::string::npos) return 0;
        // A hook of an agent whose home is gone (removed, mistyped) makes none.
        if (!core.has_store()) return 0;
        Store& store = core.store();
        auto team = find_team(store, agent.substr(at + 1));
        if (!team) return 0;
        auto member = find_member(store, *team, agent.substr(0, at));
        if (!member || !member->live()) return 0;
        // One write: what it does, and what it spends (the record it names, its own cost, a
        // turn begun).
        AgentActivity activity(store, core.clock());
        store.write([&] {
            if (report) activity.report_in_write(member->id, *report);
            if (usage || (report && report->prompt_taken)) {
                // What it spends never costs the report of what it does.
                try {
                    note_hook_usage(store, member->id, kind, event, doc,
                                    report && report->prompt_taken);
                } catch (const std::exception& e) {
                    std::cerr << "team __report: " << e.what() << "\n";
                }
            }
            if (!session.empty()) note_conversation_id(store, member->id, session);
        });
    } catch (const std::exception& e) {
        std::cerr << "team __report: " << e.what() << "\n";
    }
    return 0;
}

int watch_usage(Core& core, std::int64_t agent_id) {
    return team::watch_usage(core.store(), agent_id);
}

int watch_screen(Core& core, std::int64_t agent_id) {
    return team::watch_screen(core.store(), agent_id);
}

int watch_claude_state(Core& core, std::int64_t agent_id, std::int64_t pid,
                       const std::string& dir) {
    return team::watch_claude_state(core.store(), agent_id, pid, dir);
}

int run_notify(Core& core, const std::string& command, long long bound_ms) {
    return team::run_notify(core.home(), command, std::chrono::milliseconds(bound_ms));
}

int run_link(Core& core, const std::string& name, const std::string& ssh,
             const std::string& team_path, const std::string& version, int ready_fd) {
    // The far side is asked to use this home's store (its hello).
    std::string url = core.store().url();
    return hosts::run_link(core.home(), {name, ssh, team_path}, version, url, ready_fd);
}

int run_keeper(Core& core, int ready_fd) {
    return hosts::run_keeper(core.ensure_home(), core.clock(), ready_fd);
}

int run_channel(const std::string& version) {
    return serve_channel(version, 0, 1);
}

}  // namespace team::ops
