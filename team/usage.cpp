#include "team/usage.hpp"

#include <poll.h>
#include <pthread.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>

#include "base/amounts.hpp"
#include "base/duration.hpp"
#include "base/error.hpp"
#include "base/names.hpp"
#include "base/programs.hpp"
#include "state/activity.hpp"
#include "state/members.hpp"
#include "state/teams.hpp"
#include "team/config.hpp"
#include "team/messages.hpp"
#include "team/notify.hpp"
#include "team/shutdown.hpp"
#include "team/usage_records.hpp"
#include "tmux/server.hpp"

namespace team {

namespace {

using json = nlohmann::json;

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
                 int* unknown = nullptr) {
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

UsageFigures usage_figures(const AgentRecord& agent, const AgentUsageRow* row,
                           const PriceTable& prices, EpochMs now) {
    UsageFigures f;
    EpochMs end = agent.terminated_at.value_or(now);
    f.runtime_ms = std::max<std::int64_t>(0, end - agent.created_at);
    if (!row) return f;
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

namespace {

// What a sampler last wrote, so that it writes only what moved.
struct Saved {
    std::int64_t cpu = -1, memory = -1;
    EpochMs at = 0;
};

// One period of a sampler: the tree, the record's new calls, the limits. False when the agent
// has ended (nothing more to sample).
bool sample_once(Store& store, const Clock& clock, std::int64_t agent_id, pid_t root,
                 Saved& saved) {
    auto agent = load_agent(store, agent_id);
    if (!agent || !agent->live()) return false;
    proc::TreeSample sample = proc::sample_tree(root);
    if (sample.processes == 0) return false;  // the agent's process is gone
    read_agent_records(store, agent_id);
    EpochMs now = clock.now();
    // Written when it moved: CPU by half a second, memory by a MiB and 1 %, else every 30 s
    // (each commit wakes every watch of the store).
    std::int64_t memory = sample.pss > 0 ? sample.pss : sample.rss;
    bool moved = saved.cpu < 0 || sample.cpu_ms - saved.cpu >= 500 ||
                 (std::llabs(memory - saved.memory) >= (1 << 20) &&
                  std::llabs(memory - saved.memory) * 100 >= saved.memory) ||
                 now - saved.at >= 30'000;
    if (moved) {
        store.write([&] {
            save_usage_sample(store, agent_id, sample.cpu_ms, sample.rss, sample.pss, now);
        });
        saved = {sample.cpu_ms, memory, now};
    }
    enforce_limits(store, clock, agent_id, sample);
    return true;
}

Millis sample_period(Store& store, std::int64_t team_id) {
    try {
        return config_duration(store, team_id, "sample-every");
    } catch (const std::exception&) {
        return Millis(2000);
    }
}

}  // namespace

UsageSampler::UsageSampler(std::filesystem::path home, std::string url, std::int64_t agent_id,
                           pid_t root)
    : home_(std::move(home)), url_(std::move(url)), agent_id_(agent_id), root_(root) {
    thread_ = std::thread([this] { run(); });
}

UsageSampler::~UsageSampler() {
    stop();
}

void UsageSampler::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    woken_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void UsageSampler::run() {
    ::pthread_setname_np(::pthread_self(), "team-usage");  // its CPU, apart (bench/usage.cpp)
    SystemClock clock;
    std::optional<Store> store;
    std::optional<std::int64_t> team_id;
    Saved saved;
    // The first sample a moment after the start, off the spawn's path (which has its last
    // write to make): a tenth of a second, then every period.
    Millis every{100};
    while (true) {
        {
            std::unique_lock lock(mutex_);
            if (woken_.wait_for(lock, every, [this] { return stopping_; })) return;
        }
        try {
            if (!store) store.emplace(home_, url_);
            if (!team_id) {
                auto agent = load_agent(*store, agent_id_);
                if (!agent) return;
                team_id = agent->team_id;
            }
            every = sample_period(*store, *team_id);
            if (!sample_once(*store, clock, agent_id_, root_, saved)) return;
        } catch (const std::exception&) {
            // a busy or unreachable store: the next period tries again
            every = std::max(every, Millis(1000));
        }
    }
}

int watch_usage(Store& store, std::int64_t agent_id) {
    SystemClock clock;
    auto agent = load_agent(store, agent_id);
    if (!agent || !agent->pid) return 1;
    Saved saved;
    while (true) {
        Millis every = sample_period(store, agent->team_id);
        try {
            if (!sample_once(store, clock, agent_id, static_cast<pid_t>(*agent->pid), saved)) break;
        } catch (const std::exception&) {
            // a busy store: the next period tries again
        }
        pollfd none{-1, 0, 0};
        if (::poll(&none, 0, static_cast<int>(every.count())) < 0 && errno != EINTR) break;
    }
    return 0;
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
