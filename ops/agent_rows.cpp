#include "ops/agent_rows.hpp"

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "state/agent_activity_rows.hpp"
#include "state/host_rows.hpp"
#include "state/usage_rows.hpp"
#include "team/acp_agents.hpp"
#include "team/agent_activity.hpp"
#include "team/agents.hpp"
#include "team/usage.hpp"
#include "team/worktrees.hpp"

namespace team::ops {

nlohmann::json agent_rows(Core& core, const TeamRecord& team,
                          const std::vector<AgentRecord>& agents) {
    nlohmann::json doc = nlohmann::json::array();
    // The git state of each agent with a worktree (SPEC 14); one query when none has.
    auto states = Worktrees(core.store(), core.clock()).agent_states(team, agents);
    // The session of each ACP agent (SPEC 15); one query when none is.
    auto acp = AcpAgents(core.store(), core.clock()).states(team);
    // What each is doing (SPEC 17); one query.
    auto activity = team_agent_activity(core.store(), team.id);
    // What each spends (SPEC 18); two queries, and the prices in force.
    auto usage = team_agent_usage(core.store(), team.id);
    std::optional<PriceTable> prices;
    EpochMs now = core.clock().now();
    // Each agent's host (SPEC 16): a host of the store by name, and its state; null for one of
    // no host (this machine, or a home that is not a host).
    std::map<std::string, std::pair<std::string, std::string>> hosts;
    if (core.store().engine() == Db::Engine::postgresql) {
        auto now = core.clock().now();
        for (const auto& h : list_hosts(core.store())) {
            hosts[h.home_id] = {h.name, str(host_state(h, now))};
        }
    }
    for (const auto& a : agents) {
        doc.push_back(to_json(a));
        auto host = a.home_id ? hosts.find(*a.home_id) : hosts.end();
        doc.back()["host"] =
            host == hosts.end() ? nlohmann::json() : nlohmann::json(host->second.first);
        if (host != hosts.end()) doc.back()["hostState"] = host->second.second;
        if (auto s = states.find(a.name); s != states.end()) doc.back()["worktree"] = *s;
        if (auto s = acp.find(a.id); s != acp.end()) doc.back()["acp"] = s->second;
        auto row = activity.find(a.id);
        doc.back()["activity"] = activity_json(a, row == activity.end() ? nullptr : &row->second);
        if (!a.is_leader) {
            if (!prices) prices = prices_in_force(core.store());
            auto u = usage.find(a.id);
            doc.back()["usage"] =
                usage_json(a, u == usage.end() ? nullptr : &u->second, *prices, now);
        }
    }
    return doc;
}

}  // namespace team::ops
