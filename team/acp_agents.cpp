#include "team/acp_agents.hpp"

#include "acp/permissions.hpp"
#include "base/error.hpp"
#include "state/activity.hpp"
#include "state/change_watch.hpp"

namespace team {

using nlohmann::json;

namespace {

std::string join(const std::vector<std::string>& items, const std::string& sep) {
    std::string out;
    for (const auto& i : items) out += (out.empty() ? "" : sep) + i;
    return out;
}

}  // namespace

std::string check_acp_policy(const std::string& text) {
    return acp::policy_name(acp::parse_policy(text));
}

std::vector<std::string> acp_preset_command(const std::string& preset) {
    if (preset == "claude") return {"claude-agent-acp"};
    if (preset == "codex") return {"codex-acp"};
    if (preset == "gemini") return {"gemini", "--experimental-acp"};
    if (preset == "opencode") return {"opencode", "acp"};
    throw usage_error("unknown preset " + quote(preset) +
                      " with --acp (one of claude, codex, gemini, opencode)");
}

AcpSessionRow AcpAgents::session_of(const AgentRecord& agent) {
    auto session = load_acp_session(store_, agent.id);
    if (!session) {
        throw refused("agent " + quote(agent.name) +
                      " was not spawned with --acp: it has no ACP session (type into its pane "
                      "with team prompt, or message it with team send)");
    }
    return *session;
}

bool AcpAgents::is_acp(const AgentRecord& agent) {
    return load_acp_session(store_, agent.id).has_value();
}

AcpTurnRow AcpAgents::prompt(const AgentRecord& agent, const Caller& caller,
                             const std::string& text) {
    return store_.write([&] {
        AcpSessionRow session = session_of(agent);
        if (session.state == "ended") {
            throw refused("agent " + quote(agent.name) + "'s ACP session has ended (" +
                          session.end_reason.value_or("ended") + ")");
        }
        if (session.state == "needs_auth") {
            throw refused("agent " + quote(agent.name) +
                          " needs authentication before its session: no prompt can run yet");
        }
        AcpTurnRow turn;
        turn.agent_id = agent.id;
        turn.text = text;
        turn.source = caller.id();
        turn.created_at = clock_.now();
        turn.id = insert_acp_turn(store_, turn);
        append_activity(
            store_.db(), agent.team_id, turn.created_at, caller.id(), "acp_prompted",
            {{"agentId", agent.id_string()}, {"turn", turn.id}, {"bytes", text.size()}});
        return turn;
    });
}

AcpTurnRow AcpAgents::wait_turn(std::int64_t id, std::optional<std::chrono::milliseconds> timeout,
                                bool& ended) {
    AskedWait asked;  // a stopping server ends it (base/cancel.hpp)
    ChangeWatch watch(store_.home());
    auto deadline =
        timeout ? clock_.steady() + *timeout : std::chrono::steady_clock::time_point::max();
    for (;;) {
        auto turn = load_acp_turn(store_, id);
        if (!turn) throw not_found("turn " + std::to_string(id) + " not found");
        ended = turn->state == "done" || turn->state == "failed";
        if (ended) return *turn;
        if (!watch.wait_until(deadline) && clock_.steady() >= deadline) return *turn;
    }
}

bool AcpAgents::cancel(const TeamRecord& team, const Caller& caller, const AgentRecord& agent) {
    return store_.write([&] {
        AcpSessionRow session = session_of(agent);
        if (session.state == "ended") {
            throw refused("agent " + quote(agent.name) + "'s ACP session has ended (" +
                          session.end_reason.value_or("ended") + ")");
        }
        bool under_way = !open_acp_turns(store_, agent.id).empty();
        if (!under_way) return false;
        add_acp_cancel(store_, agent.id);
        append_activity(store_.db(), team.id, clock_.now(), caller.id(), "acp_cancel_requested",
                        {{"agentId", agent.id_string()}});
        return true;
    });
}

std::vector<AcpPermissionRow> AcpAgents::permissions(const TeamRecord& team, bool all) {
    return acp_permissions_of_team(store_, team.id, all);
}

AcpPermissionRow AcpAgents::answer(const TeamRecord& team, const Caller& caller, std::int64_t id,
                                   const PermissionAnswer& answer) {
    return store_.write([&] {
        auto row = load_acp_permission(store_, id);
        if (!row || row->team_id != team.id) {
            throw not_found("permission request " + std::to_string(id) + " not found in team " +
                            quote(team.name) + " (see team permission list)");
        }
        if (row->state != "open") {
            throw refused("permission request " + std::to_string(id) + " is " + row->state +
                          (row->answer ? " (" + *row->answer + ")" : std::string()) +
                          ": it can be answered only while open");
        }
        acp::PermissionRequest request;
        std::vector<std::string> ids;
        for (const json& o : row->options) {
            acp::PermissionOption option{o.value("optionId", std::string()),
                                         o.value("name", std::string()),
                                         o.value("kind", std::string())};
            ids.push_back(option.id);
            request.options.push_back(option);
        }
        acp::PermissionChoice choice{acp::PermissionChoice::Kind::option, ""};
        if (answer.option) {
            choice.option_id = *answer.option;
        } else if (answer.decision == "allow") {
            choice.kind = answer.always ? acp::PermissionChoice::Kind::allow_always
                                        : acp::PermissionChoice::Kind::allow;
        } else if (answer.decision == "deny") {
            choice.kind = answer.always ? acp::PermissionChoice::Kind::deny_always
                                        : acp::PermissionChoice::Kind::deny;
        } else {
            throw usage_error("answer with an option (one of " + join(ids, ", ") +
                              ") or a decision, allow or deny");
        }
        auto option = acp::option_for(request, choice);
        if (!option) {
            std::string what = answer.option ? "no option " + quote(*answer.option)
                                             : "no " + answer.decision + " option";
            throw usage_error("the agent offered " + what + " for request " + std::to_string(id) +
                              " (its options: " + join(ids, ", ") + ")");
        }
        if (!answer_acp_permission(store_, id, *option, caller.id()))
            throw refused("permission request " + std::to_string(id) + " is no longer open");
        append_activity(
            store_.db(), team.id, clock_.now(), caller.id(), "permission_decided",
            {{"agentId", row->agent + "@" + team.name}, {"permission", id}, {"answer", *option}});
        row->state = "answering";
        row->answer = *option;
        row->answered_by = caller.id();
        return *row;
    });
}

std::map<std::int64_t, json> AcpAgents::states(const TeamRecord& team) {
    std::map<std::int64_t, json> out;
    auto sessions = acp_sessions_of_team(store_, team.id);
    if (sessions.empty()) return out;
    auto open = acp_permissions_of_team(store_, team.id, false);
    for (const auto& s : sessions) {
        json turn = nullptr;
        int queued = 0;
        for (const auto& t : open_acp_turns(store_, s.agent_id)) {
            if (t.state == "running")
                turn = to_json(t);
            else
                ++queued;
        }
        int permissions = 0;
        for (const auto& p : open)
            if (p.agent_id == s.agent_id) ++permissions;
        out[s.agent_id] = {{"state", s.state},
                           {"policy", s.policy},
                           {"sessionId", s.session_id ? json(*s.session_id) : json(nullptr)},
                           {"turn", turn},
                           {"queued", queued},
                           {"openPermissions", permissions},
                           {"authMethods", s.auth_methods},
                           {"endReason", s.end_reason ? json(*s.end_reason) : json(nullptr)}};
    }
    return out;
}

int stop_reason_exit_code(const AcpTurnRow& turn) {
    if (turn.state == "failed") return 1;
    std::string reason = turn.stop_reason.value_or("");
    if (reason == "end_turn") return 0;
    if (reason == "cancelled") return 130;
    return 5;  // refusal, max_tokens, max_turn_requests, and any newer reason
}

}  // namespace team
