#include "team/agent_activity.hpp"

#include "state/activity.hpp"
#include "state/members.hpp"
#include "state/teams.hpp"
#include "team/messages.hpp"
#include "team/notify.hpp"

namespace team {

using nlohmann::json;

namespace {

// A better source speaks for an agent over a lesser one.
int rank(const std::string& source) {
    if (source == "hooks" || source == "acp") return 2;
    if (source == "screen") return 1;
    return 0;
}

std::string text_of(const json& doc, const char* key) {
    if (!doc.is_object() || !doc.contains(key) || !doc[key].is_string()) return {};
    return doc[key].get<std::string>();
}

// What a person reads of a wait: "a permission: Bash `rm -r build`".
std::string wait_text(const json& on) {
    std::string kind = text_of(on, "kind");
    std::string out = kind == "question"     ? "an answer"
                      : kind == "permission" ? "a permission"
                                             : "a person";
    std::string tool = text_of(on, "tool");
    std::string what = text_of(on, "command");
    if (what.empty()) what = text_of(on, "file");
    if (what.empty()) what = text_of(on, "text");
    if (what.size() > 200) {
        what.resize(200);
        what.append("...");
    }
    if (!tool.empty() || !what.empty()) out += ":";
    if (!tool.empty()) out.append(" ").append(tool);
    if (!what.empty()) out.append(" `").append(what).append("`");
    return out;
}

void tell_leader(Store& store, const AgentRecord& agent, const json& on, const json& more,
                 EpochMs at) {
    auto team = find_team_by_id(store, agent.team_id);
    if (!team) return;
    std::string answer = text_of(on, "answer");
    if (answer.empty()) answer = "team attach " + agent.name + " --team " + agent.team;
    if (auto leader = find_leader(store, agent.team_id); leader && leader->id != agent.id) {
        json data = {{"agent", agent.name},
                     {"agentId", agent.id_string()},
                     {"waitingOn", on},
                     {"answer", answer}};
        if (more.is_object()) data.update(more);
        post_message(store.db(), *team, agent.name, *leader, "needs_input",
                     agent.name + " waits for " + wait_text(on) + " (answer: " + answer + ")", data,
                     at);
    }
    notify_after_commit(store, {{"event", "needs_input"},
                                {"team", agent.team},
                                {"agent", agent.name},
                                {"agentId", agent.id_string()},
                                {"waitingOn", on},
                                {"answer", answer},
                                {"at", iso8601(at)}});
}

}  // namespace

const std::vector<std::string>& activity_states() {
    static const std::vector<std::string> states{"working", "waiting", "idle", "ended"};
    return states;
}

void start_agent_activity(Store& store, std::int64_t agent_id, const std::string& source,
                          EpochMs at) {
    AgentActivityRow row;
    row.agent_id = agent_id;
    row.state = "starting";
    row.since = at;
    row.source = source;
    row.reported_at = at;
    save_agent_activity(store, row);
}

bool AgentActivity::report(std::int64_t agent_id, const ActivityReport& report) {
    return store_.write([&] { return report_in_write(agent_id, report); });
}

bool AgentActivity::report_in_write(std::int64_t agent_id, const ActivityReport& r) {
    auto agent = load_agent(store_, agent_id);
    if (!agent || !agent->live()) return false;
    EpochMs now = clock_.now();
    auto row = load_agent_activity(store_, agent_id);
    if (!row) {
        row.emplace();
        row->agent_id = agent_id;
        row->since = now;
        row->source = r.source;
    }
    if (rank(r.source) < rank(row->source)) return false;
    if (r.only_while_waiting && row->state != "waiting") return false;
    if (r.unless_waiting && row->state == "waiting") return false;
    std::string before = row->state;
    json on = r.state == "waiting" ? r.waiting_on : json(nullptr);
    // The same wait reported again, maybe with less detail (a late notification of a dialog
    // already reported): it keeps what is known of it.
    bool new_wait = false;
    if (r.state == "waiting") {
        if (before != "waiting") {
            new_wait = true;
        } else if (!on.is_null() && !row->waiting_on.is_null() && on != row->waiting_on) {
            new_wait = true;
        } else if (on.is_null()) {
            on = row->waiting_on;
        }
    }
    bool changed = before != r.state || new_wait;
    row->state = r.state;
    row->source = r.source;
    row->waiting_on = on;
    row->reported_at = now;
    if (changed) row->since = now;
    if (r.prompt_taken) row->prompted_at = now;
    save_agent_activity(store_, *row);
    if (!changed) return true;
    json details = {{"agentId", agent->id_string()},
                    {"state", r.state},
                    {"from", before},
                    {"source", r.source}};
    if (!on.is_null()) details["waitingOn"] = on;
    if (!r.event.empty()) details["event"] = r.event;
    append_activity(store_.db(), agent->team_id, now, agent->id_string(), "agent_state", details);
    if (new_wait) tell_leader(store_, *agent, on, r.data, now);
    if (r.state == "idle") {
        notify_after_commit(store_, {{"event", "idle"},
                                     {"team", agent->team},
                                     {"agent", agent->name},
                                     {"agentId", agent->id_string()},
                                     {"at", iso8601(now)}});
    }
    return true;
}

json activity_json(const AgentRecord& agent, const AgentActivityRow* row) {
    if (!agent.live()) {
        return {
            {"state", "ended"},
            {"since", agent.terminated_at ? json(iso8601(*agent.terminated_at)) : json(nullptr)},
            {"source", "process"},
            {"waitingOn", nullptr}};
    }
    if (!row) {
        if (agent.is_leader) return nullptr;
        if (agent.status != AgentStatus::spawning) return nullptr;
        return {{"state", "starting"},
                {"since", iso8601(agent.created_at)},
                {"source", "process"},
                {"waitingOn", nullptr}};
    }
    return {{"state", row->state},
            {"since", iso8601(row->since)},
            {"source", row->source},
            {"waitingOn", row->waiting_on}};
}

std::string activity_state(const json& activity) {
    if (!activity.is_object()) return "";
    return activity.value("state", "");
}

}  // namespace team
