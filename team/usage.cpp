#include "team/usage.hpp"

#include <algorithm>
#include <cmath>

#include "base/amounts.hpp"
#include "base/duration.hpp"
#include "base/error.hpp"
#include "base/names.hpp"
#include "base/programs.hpp"
#include "state/activity.hpp"
#include "state/members.hpp"
#include "team/config.hpp"
#include "team/usage_records.hpp"

namespace team {

using json = nlohmann::json;

namespace {

// (Built by assignment, not from initializer lists, which copy every value once more: a
// look of 50 agents builds a thousand of these.)
json tokens_json(const ModelTokens& t) {
    json j = json::object();
    j["input"] = t.input;
    j["output"] = t.output;
    j["cacheRead"] = t.cache_read;
    j["cacheWrite"] = t.cache_write;
    j["total"] = t.total();
    j["calls"] = t.calls;
    return j;
}

json optional_int(const std::optional<std::int64_t>& v) {
    return v ? json(*v) : json(nullptr);
}

}  // namespace

std::optional<double> team_max_cost(Store& store, std::int64_t team_id) {
    auto v = config_value(store, team_id, "max-cost");
    if (!v) return std::nullopt;
    try {
        return parse_usd(*v, "max-cost");
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

std::optional<std::int64_t> team_max_agents(Store& store, std::int64_t team_id) {
    auto v = config_value(store, team_id, "max-agents");
    if (!v) return std::nullopt;
    try {
        return std::stoll(*v);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

// The team's cost: what its agents' costs sum to (those unknown left out, and counted).
double team_cost(Store& store, const TeamRecord& team, const PriceTable& prices, EpochMs now,
                 int* unknown) {
    double sum = 0;
    auto rows = team_agent_usage(store, team.id);
    for (const auto& agent : load_agents(store, team, true)) {
        auto it = rows.find(agent.id);
        if (it == rows.end()) continue;
        auto f = usage_figures(agent, &it->second, prices, now);
        if (f.cost) {
            sum += *f.cost;
        } else if (unknown) {
            ++*unknown;
        }
    }
    return sum;
}

UsageFigures usage_figures(const AgentRecord& agent, const AgentUsageRow* row,
                           const PriceTable& prices, EpochMs now) {
    UsageFigures f;
    EpochMs end = agent.terminated_at.value_or(now);
    f.runtime_ms = std::max<std::int64_t>(0, end - agent.created_at);
    if (!row) return f;
    // A resumed agent: its runs, without the time it was down (SPEC 19).
    if (row->run_from) {
        f.runtime_ms = row->run_before_ms + std::max<std::int64_t>(0, end - *row->run_from);
    }
    for (const auto& [model, t] : row->models) f.tokens.add(t);
    if (row->agent_cost) {
        f.cost = row->agent_cost;
        f.cost_source = "agent";
    } else if (f.tokens.total() > 0) {
        f.cost = cost_of(prices, row->models, &f.unknown);
        if (f.cost) f.cost_source = "prices";
    } else {
        f.cost = 0.0;
    }
    if (row->pss && *row->pss > 0) {
        f.memory = row->pss;
    } else if (row->rss) {
        f.memory = row->rss;
    }
    return f;
}

json usage_json(const AgentRecord& agent, const AgentUsageRow* row, const PriceTable& prices,
                EpochMs now) {
    return usage_json(agent, row, usage_figures(agent, row, prices, now));
}

json usage_json(const AgentRecord& agent, const AgentUsageRow* row, const UsageFigures& f) {
    json j = json::object();
    j["agent"] = agent.name;
    j["agentId"] = agent.id_string();
    j["status"] = str(agent.status);
    json models = json::object();
    std::string model;
    std::int64_t most = -1;
    if (row) {
        for (const auto& [name, t] : row->models) {
            models[name.empty() ? "(not named)" : name] = tokens_json(t);
            if (t.total() > most) {
                most = t.total();
                model = name;
            }
        }
    }
    j["model"] = model.empty() ? json(nullptr) : json(model);
    j["tokens"] = tokens_json(f.tokens);
    j["models"] = std::move(models);
    j["cost"] = f.cost ? json(*f.cost) : json(nullptr);
    j["costSource"] = f.cost_source.empty() ? json(nullptr) : json(f.cost_source);
    json unknown = json::array();
    for (const auto& u : f.unknown) unknown.push_back(u);
    j["costUnknownModels"] = std::move(unknown);
    j["turns"] = row ? row->turns : 0;
    j["cpuMs"] = row ? row->cpu_ms : 0;
    json memory = json::object();
    memory["rss"] = row ? optional_int(row->rss) : json(nullptr);
    memory["pss"] = row ? optional_int(row->pss) : json(nullptr);
    memory["peakRss"] = row ? optional_int(row->peak_rss) : json(nullptr);
    memory["peakPss"] = row ? optional_int(row->peak_pss) : json(nullptr);
    memory["sampledAt"] = row && row->sampled_at ? json(iso8601(*row->sampled_at)) : json(nullptr);
    j["memory"] = std::move(memory);
    j["wallMs"] = f.runtime_ms;
    j["records"] = row && row->records ? json(*row->records) : json(nullptr);
    json limits = nullptr, warned = json::array();
    if (row) {
        const auto& l = row->limits;
        limits = json::object();
        limits["maxTokens"] = optional_int(l.max_tokens);
        limits["maxCost"] = l.max_cost ? json(*l.max_cost) : json(nullptr);
        limits["maxMemory"] = optional_int(l.max_memory);
        limits["maxRuntime"] =
            l.max_runtime_ms ? json(format_duration(Millis(*l.max_runtime_ms))) : json(nullptr);
        limits["maxRuntimeMs"] = optional_int(l.max_runtime_ms);
        limits["limitGrace"] = format_duration(Millis(l.limit_grace_ms));
        limits["limitGraceMs"] = l.limit_grace_ms;
        for (const auto& w : row->warned) warned.push_back(w);
    }
    j["limits"] = std::move(limits);
    j["warned"] = std::move(warned);
    j["stoppedBy"] = row && row->stopped ? json(*row->stopped) : json(nullptr);
    return j;
}

bool hook_has_usage(std::string_view event, const json& payload) {
    if (event == "StatusLine") return true;
    auto it = payload.find("transcript_path");
    return it != payload.end() && it->is_string() && !it->get<std::string>().empty();
}

void note_hook_usage(Store& store, std::int64_t agent_id, std::string_view kind,
                     std::string_view event, const json& payload, bool turn) {
    auto path = payload.find("transcript_path");
    if (path != payload.end() && path->is_string()) {
        std::string p = path->get<std::string>();
        if (!p.empty() && p.size() < 4096 && p.front() == '/') {
            save_usage_records(store, agent_id, p, std::string(kind));
        }
    }
    if (event == "StatusLine") {
        auto cost = payload.find("cost");
        if (cost != payload.end() && cost->is_object()) {
            auto usd = cost->find("total_cost_usd");
            if (usd != cost->end() && usd->is_number()) {
                double v = usd->get<double>();
                if (std::isfinite(v) && v >= 0) {
                    auto row = load_agent_usage(store, agent_id);
                    if (!row || !row->agent_cost || *row->agent_cost != v) {
                        save_agent_cost(store, agent_id, v);
                    }
                }
            }
        }
    }
    if (turn) add_usage_turn(store, agent_id);
}

int read_agent_records(Store& store, std::int64_t agent_id) {
    auto row = load_agent_usage(store, agent_id);
    if (!row || !row->records || !row->records_kind) return 0;
    auto read = read_usage_records(*row->records_kind, *row->records, row->cursor);
    if (read.entries.empty() && read.cursor == row->cursor) return 0;
    std::vector<UsageCall> calls;
    calls.reserve(read.entries.size());
    for (auto& e : read.entries) {
        calls.push_back({std::move(e.key), std::move(e.model), e.at, e.input, e.output,
                         e.cache_read, e.cache_write});
    }
    std::string path = *row->records;
    return store.write([&] {
        // The record named again meanwhile (a new session): this read is of the old one.
        auto now = load_agent_usage(store, agent_id);
        if (!now || now->records != path || now->cursor != row->cursor) return 0;
        return add_usage_calls(store, agent_id, calls, read.cursor);
    });
}

json team_usage(Store& store, const TeamRecord& team, const std::vector<std::string>& names,
                std::optional<EpochMs> since, bool all, EpochMs now) {
    PriceTable prices = prices_in_force(store);
    auto rows = team_agent_usage(store, team.id);
    std::map<std::int64_t, std::map<std::string, ModelTokens>> window;
    if (since) window = team_usage_since(store, team.id, *since);
    std::vector<AgentRecord> agents;
    auto every = load_agents(store, team, true);
    if (names.empty()) {
        for (auto& a : every) {
            if (a.is_leader) continue;
            if (all || a.live() || rows.count(a.id)) agents.push_back(a);
        }
    } else {
        for (const auto& name : names) {
            check_name(name, "agent name");
            // The live one of that name, else its newest record.
            const AgentRecord* found = nullptr;
            for (const auto& a : every) {
                if (a.name != name) continue;
                if (!found || (a.live() && !found->live()) ||
                    (a.live() == found->live() && a.id > found->id)) {
                    found = &a;
                }
            }
            if (!found) member_not_found(store, team, name);
            agents.push_back(*found);
        }
    }
    json out = json::array();
    ModelTokens total;
    double cost = 0;
    int unknown = 0;
    std::int64_t cpu = 0, pss = 0, rss = 0;
    for (const auto& a : agents) {
        auto it = rows.find(a.id);
        AgentUsageRow windowed;
        const AgentUsageRow* row = it == rows.end() ? nullptr : &it->second;
        if (since && row) {
            // The calls of the window, priced (the agent's own figure covers its whole life).
            windowed = *row;
            windowed.models = window[a.id];
            windowed.agent_cost.reset();
            row = &windowed;
        }
        UsageFigures f = usage_figures(a, row, prices, now);
        json j = usage_json(a, row, f);
        total.add(f.tokens);
        if (f.cost) {
            cost += *f.cost;
        } else {
            ++unknown;
        }
        if (row) {
            cpu += row->cpu_ms;
            if (a.live()) {
                pss += row->pss.value_or(0);
                rss += row->rss.value_or(0);
            }
        }
        out.push_back(std::move(j));
    }
    auto marks = load_team_budget(store, team.id);
    json limits = {{"maxAgents", optional_int(team_max_agents(store, team.id))},
                   {"maxCost", team_max_cost(store, team.id) ? json(*team_max_cost(store, team.id))
                                                             : json(nullptr)},
                   {"liveAgents", count_live_agents(store, team.id)},
                   {"costWarned", marks.warned},
                   {"costStopped", marks.stopped}};
    json doc = json::object();
    doc["team"] = team.name;
    doc["since"] = since ? json(iso8601(*since)) : json(nullptr);
    doc["agents"] = std::move(out);  // (moved: an initializer list would copy every row)
    doc["total"] = {{"tokens", tokens_json(total)},
                    {"cost", cost},
                    {"costUnknownAgents", unknown},
                    {"cpuMs", cpu},
                    {"memory", {{"pss", pss}, {"rss", rss}}}};
    doc["limits"] = std::move(limits);
    doc["prices"] = {{"taken", prices.taken}, {"source", prices.source}};
    return doc;
}

}  // namespace team
