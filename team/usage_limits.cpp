// The limits of what agents spend (SPEC 18), held by team: a spawn's check of its team's, and
// each sample's check of the agent's own and its team's (team/usage.hpp).
#include <algorithm>
#include <cstdio>

#include "base/amounts.hpp"
#include "base/duration.hpp"
#include "base/error.hpp"
#include "state/activity.hpp"
#include "state/members.hpp"
#include "state/teams.hpp"
#include "team/messages.hpp"
#include "team/notify.hpp"
#include "team/shutdown.hpp"
#include "team/usage.hpp"
#include "tmux/server.hpp"

namespace team {

namespace {

using json = nlohmann::json;

// One of an agent's limits, measured.
struct Measured {
    std::string limit;  // max-tokens, max-cost, max-memory, max-runtime, team max-cost
    double used = 0, max = 0;
    std::string used_text, max_text;
    double ratio() const { return max > 0 ? used / max : 0; }
};

std::string tokens_text(double n) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f tokens", n);
    return buf;
}

std::vector<Measured> measure(const AgentUsageRow& row, const UsageFigures& f) {
    std::vector<Measured> out;
    const auto& l = row.limits;
    if (l.max_tokens) {
        auto used = static_cast<double>(f.tokens.total());
        auto max = static_cast<double>(*l.max_tokens);
        out.push_back({"max-tokens", used, max, tokens_text(used), tokens_text(max)});
    }
    if (l.max_cost && f.cost) {
        out.push_back(
            {"max-cost", *f.cost, *l.max_cost, format_usd(*f.cost), format_usd(*l.max_cost)});
    }
    if (l.max_memory && f.memory) {
        out.push_back({"max-memory", static_cast<double>(*f.memory),
                       static_cast<double>(*l.max_memory), format_size(*f.memory),
                       format_size(*l.max_memory)});
    }
    if (l.max_runtime_ms) {
        out.push_back({"max-runtime", static_cast<double>(f.runtime_ms),
                       static_cast<double>(*l.max_runtime_ms),
                       format_duration(Millis(f.runtime_ms / 100 * 100)),
                       format_duration(Millis(*l.max_runtime_ms))});
    }
    return out;
}

json measured_json(const AgentRecord& agent, const Measured& m) {
    return {{"agent", agent.name},  {"agentId", agent.id_string()},
            {"limit", m.limit},     {"used", m.used},
            {"max", m.max},         {"usedText", m.used_text},
            {"maxText", m.max_text}};
}

// The leader told (message, activity entry, notify event) in the caller's write.
void tell_leader(Store& store, const AgentRecord& agent, const std::string& type,
                 const std::string& text, const json& data, EpochMs now) {
    auto team = find_team_by_id(store, agent.team_id);
    if (!team) return;
    if (auto leader = find_leader(store, agent.team_id); leader && leader->live()) {
        post_message(store.db(), *team, agent.name, *leader, type, text, data, now);
    }
    append_activity(store.db(), agent.team_id, now, "team", type, data);
    json event = data;
    event["event"] = type;
    event["team"] = agent.team;
    event["at"] = iso8601(now);
    notify_after_commit(store, event);
}

}  // namespace

void check_spawn_budget(Store& store, const TeamRecord& team) {
    if (auto max = team_max_agents(store, team.id)) {
        int live = count_live_agents(store, team.id);
        if (live >= *max) {
            throw refused("team " + quote(team.name) + " has " + std::to_string(live) +
                          " live agent" + (live == 1 ? "" : "s") + " of its max-agents " +
                          std::to_string(*max) +
                          ": nothing was spawned (stop one, or raise it: team config set "
                          "max-agents N --team " +
                          team.name + ")");
        }
    }
    if (auto max = team_max_cost(store, team.id)) {
        SystemClock clock;
        double spent = team_cost(store, team, prices_in_force(store), clock.now());
        if (spent >= *max) {
            throw refused("team " + quote(team.name) + " has spent " + format_usd(spent) +
                          " of its max-cost " + format_usd(*max) +
                          ": nothing was spawned (raise it: team config set max-cost USD --team " +
                          team.name + ")");
        }
    }
}

std::optional<std::string> enforce_limits(Store& store, const Clock& clock, std::int64_t agent_id,
                                          const std::optional<proc::TreeSample>& sample) {
    auto agent = load_agent(store, agent_id);
    if (!agent || !agent->live() || agent->is_leader) return std::nullopt;
    auto team = find_team_by_id(store, agent->team_id);
    if (!team) return std::nullopt;
    auto row = load_agent_usage(store, agent_id);
    if (!row) return std::nullopt;
    auto max_cost = team_max_cost(store, team->id);
    if (!row->limits.any() && !max_cost) return std::nullopt;  // nothing to hold it to
    if (sample && sample->processes > 0) {
        row->pss = sample->pss;
        row->rss = sample->rss;
    }
    EpochMs now = clock.now();
    PriceTable prices = prices_in_force(store);
    UsageFigures f = usage_figures(*agent, &*row, prices, now);
    std::vector<Measured> measured = measure(*row, f);
    if (max_cost) {
        double spent = team_cost(store, *team, prices, now);
        measured.push_back(
            {"team max-cost", spent, *max_cost, format_usd(spent), format_usd(*max_cost)});
    }
    const Measured* over = nullptr;
    for (const auto& m : measured) {
        if (m.ratio() >= 1) {
            over = &m;
            break;
        }
    }
    // The team's max-cost is warned of once for the team (its marks, reset by a new max-cost),
    // an agent's own limits once for the agent.
    bool team_warned = max_cost && load_team_budget(store, team->id).warned;
    bool warn_any = std::any_of(measured.begin(), measured.end(), [&](const Measured& m) {
        if (m.ratio() < 0.8) return false;
        if (m.limit == "team max-cost") return !team_warned;
        return std::find(row->warned.begin(), row->warned.end(), m.limit) == row->warned.end();
    });
    if (!over && !warn_any) return std::nullopt;
    if (over && row->stopped) over = nullptr;

    // The stop first: its request (and the force after the grace, which the agent's supervisor
    // holds to) is made before it is marked, so that nothing marks a stop that was not made.
    std::optional<std::string> stopped;
    if (over) {
        auto leader = find_leader(store, team->id);
        if (leader) {
            Caller caller{leader->name, team->name, true, leader->id};
            tmux::TmuxClient client(tmux::TmuxServer::socket_args(store.home()),
                                    tmux::TmuxServer::ensure_config(store.home()));
            KillOptions k;
            k.name = agent->name;
            k.reason = "budget: " + over->limit + " reached (" + over->used_text + " of " +
                       over->max_text + ")";
            k.force_after = Millis(row->limits.limit_grace_ms);
            // The force's SIGKILL after its SIGTERM: no later than the limit grace (a tree
            // that balloons is not given 5 s more).
            k.grace =
                std::min(k.grace, Millis(std::max<std::int64_t>(row->limits.limit_grace_ms, 100)));
            if (agent->status == AgentStatus::shutting_down) {
                // A stop under way: its force brought forward to the limit grace.
                k.wait = true;
                k.timeout = Millis(1);
            }
            try {
                Shutdowns(store, clock, client).kill(*team, caller, k);
                stopped = over->limit;
            } catch (const std::exception&) {
                // ended meanwhile, or still starting: not marked, so its next sample tries again
            }
        }
    }
    store.write([&] {
        auto marks = load_agent_usage(store, agent_id);
        if (!marks) return;
        auto warned = marks->warned;
        for (const auto& m : measured) {
            if (m.ratio() < 0.8 || m.ratio() >= 1) continue;
            if (m.limit == "team max-cost") {
                auto team_marks = load_team_budget(store, team->id);
                if (team_marks.warned) continue;
                team_marks.warned = true;
                save_team_budget(store, team->id, team_marks);
            } else {
                if (std::find(warned.begin(), warned.end(), m.limit) != warned.end()) continue;
                warned.push_back(m.limit);
            }
            char pct[16];
            std::snprintf(pct, sizeof pct, "%.0f %%", m.ratio() * 100);
            std::string whose =
                m.limit == "team max-cost" ? "team " + team->name + " has" : agent->name + " has";
            tell_leader(store, *agent, "budget_warning",
                        whose + " used " + pct + " of its " + m.limit + " (" + m.used_text +
                            " of " + m.max_text + ")",
                        measured_json(*agent, m), now);
        }
        std::optional<std::string> stop_mark = marks->stopped;
        if (stopped && !stop_mark) {
            stop_mark = stopped;
            for (const auto& m : measured) {
                if (m.limit != *stopped) continue;
                json data = measured_json(*agent, m);
                data["limitGrace"] = format_duration(Millis(row->limits.limit_grace_ms));
                tell_leader(store, *agent, "budget_stop",
                            agent->name + " reached its " + m.limit + " (" + m.used_text + " of " +
                                m.max_text + "): asked to stop, forced in " +
                                format_duration(Millis(row->limits.limit_grace_ms)) +
                                " if it has not",
                            data, now);
                if (m.limit == "team max-cost") {
                    auto team_marks = load_team_budget(store, team->id);
                    team_marks.stopped = true;
                    save_team_budget(store, team->id, team_marks);
                }
            }
        }
        save_usage_marks(store, agent_id, warned, stop_mark);
    });
    return stopped;
}

}  // namespace team
