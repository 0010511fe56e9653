#include "team/agent_wait.hpp"

#include <algorithm>

#include "base/error.hpp"
#include "base/names.hpp"
#include "state/agent_activity_rows.hpp"
#include "state/change_watch.hpp"
#include "state/members.hpp"
#include "team/agent_activity.hpp"

namespace team {

using nlohmann::json;

AgentWaitOutcome wait_for_agents(Store& store, const TeamRecord& team, const AgentWaitRequest& w) {
    const auto& states = activity_states();
    if (std::find(states.begin(), states.end(), w.until) == states.end()) {
        throw usage_error("unknown state " + quote(w.until) + did_you_mean(w.until, states) +
                              " (one of working, waiting, idle, ended)",
                          "until");
    }
    if (w.names.empty()) throw usage_error("name at least one agent to wait for", "names");
    // The agents named, the newest record of each name (an ended one stays ended).
    std::vector<std::int64_t> ids;
    for (const auto& name : w.names) {
        auto member = find_member(store, team, name);
        if (!member || member->is_leader) member_not_found(store, team, name);
        ids.push_back(member->id);
    }
    AskedWait asked;  // a stopping server ends it (base/cancel.hpp)
    ChangeWatch watch(store);
    auto deadline = w.timeout ? std::chrono::steady_clock::now() + *w.timeout
                              : std::chrono::steady_clock::time_point::max();
    while (true) {
        AgentWaitOutcome out;
        auto rows = team_agent_activity(store, team.id);
        std::size_t there = 0, never = 0;
        std::string ended;
        for (auto id : ids) {
            auto agent = load_agent(store, id);
            if (!agent) continue;
            auto row = rows.find(id);
            json activity = activity_json(*agent, row == rows.end() ? nullptr : &row->second);
            std::string state = activity_state(activity);
            if (state == w.until) ++there;
            if (state == "ended" && w.until != "ended") {
                ++never;
                ended = agent->name;
            }
            out.agents.push_back(
                {{"agentId", agent->id_string()}, {"name", agent->name}, {"activity", activity}});
        }
        out.reached = w.any ? there > 0 : there == ids.size();
        if (out.reached) return out;
        if (never > 0 && (!w.any || never == ids.size())) {
            throw refused("agent " + quote(ended) + " has ended: it will never be " + w.until);
        }
        if (!watch.wait_until(deadline)) {
            out.timed_out = true;
            return out;
        }
    }
}

}  // namespace team
