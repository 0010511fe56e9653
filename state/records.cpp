#include "state/records.hpp"

namespace team {

namespace {

template <class T>
nlohmann::json or_null(const std::optional<T>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

std::vector<std::string> agent_marker(const std::filesystem::path& home, const AgentRecord& agent) {
    return {"TEAM_AGENT_ID=" + agent.id_string(), "TEAM_HOME=" + home.string()};
}

nlohmann::json to_json(const TeamRecord& t) {
    // Field by field rather than from an initializer list, which copies every value once more:
    // this is on the path of `team list` over many teams.
    nlohmann::json j = nlohmann::json::object();
    j["name"] = t.name;
    j["description"] = t.description;
    j["cwd"] = t.cwd;
    j["leader"] = t.leader_id();
    j["status"] = str(t.status);
    j["liveAgents"] = t.live_agents;
    j["totalAgents"] = t.total_agents;
    j["openTasks"] = t.open_tasks;
    j["createdAt"] = iso8601(t.created_at);
    j["dissolvedAt"] = t.dissolved_at ? nlohmann::json(iso8601(*t.dissolved_at)) : nullptr;
    return j;
}

nlohmann::json to_json(const AgentRecord& a) {
    return {{"agentId", a.id_string()},
            {"name", a.name},
            {"team", a.team},
            {"role", a.role},
            {"status", str(a.status)},
            {"paneId", or_null(a.pane_id)},
            {"pid", or_null(a.pid)},
            {"color", or_null(a.color)},
            {"command", a.command},
            {"cwd", or_null(a.cwd)},
            {"createdAt", iso8601(a.created_at)},
            {"terminatedAt", a.terminated_at ? nlohmann::json(iso8601(*a.terminated_at)) : nullptr},
            {"exitCode", or_null(a.exit_code)},
            {"signal", or_null(a.signal)},
            {"exitReason", or_null(a.exit_reason)}};
}

}  // namespace team
