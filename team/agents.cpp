// Agents: the colour pool, where an agent's output is kept, listing and finding. Spawn is in
// spawn.cpp, the supervisor inside each pane in pane_supervisor.cpp, reconciliation in
// reconcile.cpp.
#include "team/agents.hpp"

#include "base/error.hpp"
#include "base/names.hpp"
#include "state/members.hpp"

namespace team {

namespace fs = std::filesystem;

const std::vector<std::string>& color_pool() {
    static const std::vector<std::string> pool{"blue", "green",  "yellow", "magenta", "cyan",
                                               "red",  "orange", "purple", "pink",    "teal"};
    return pool;
}

fs::path Agents::log_path(const TeamRecord& team, const AgentRecord& agent) const {
    return store_.home() / "logs" / team.name /
           (agent.name + "-" + std::to_string(agent.id) + ".log");
}

std::vector<AgentRecord> Agents::list(const TeamRecord& team, bool all) {
    reconcile(team);
    return load_agents(store_, team, all);
}

AgentRecord Agents::find(const TeamRecord& team, const std::string& name, bool all) {
    check_name(name, "agent name");
    auto agents = load_agents(store_, team, all);
    for (auto it = agents.rbegin(); it != agents.rend(); ++it) {
        if (it->name == name) return *it;
    }
    std::vector<std::string> names;
    for (const auto& a : agents) names.push_back(a.name);
    throw not_found("agent " + quote(name) + " not found in team " + quote(team.name) +
                    did_you_mean(name, names));
}

}  // namespace team
