// What each agent spends, as schema 15 keeps it (team/usage.hpp decides what goes in): one
// agent_usage row per agent (its limits, its own record's place and cursor, its samples), the
// model calls read from its record (usage_calls, each once by its key) and their sums per model
// (usage_models). Written by team/usage.cpp alone.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/time.hpp"
#include "state/store.hpp"

namespace team {

// One model call as the agent recorded it: `key` is unique for the agent, so that reading the
// record again adds nothing.
struct UsageCall {
    std::string key;
    std::string model;  // "" when the record does not say
    EpochMs at = 0;
    std::int64_t input = 0;  // not counting the cache's reads and writes
    std::int64_t output = 0;
    std::int64_t cache_read = 0;
    std::int64_t cache_write = 0;
};

struct ModelTokens {
    std::int64_t calls = 0;
    std::int64_t input = 0;
    std::int64_t output = 0;
    std::int64_t cache_read = 0;
    std::int64_t cache_write = 0;
    std::int64_t total() const { return input + output + cache_read + cache_write; }
    void add(const ModelTokens& o) {
        calls += o.calls;
        input += o.input;
        output += o.output;
        cache_read += o.cache_read;
        cache_write += o.cache_write;
    }
};

struct UsageLimits {
    std::optional<std::int64_t> max_tokens;
    std::optional<double> max_cost;          // USD
    std::optional<std::int64_t> max_memory;  // bytes
    std::optional<std::int64_t> max_runtime_ms;
    std::int64_t limit_grace_ms = 30'000;
    bool any() const { return max_tokens || max_cost || max_memory || max_runtime_ms; }
};

struct AgentUsageRow {
    std::int64_t agent_id = 0;
    std::optional<std::string> records;       // the agent's own record (a path)
    std::optional<std::string> records_kind;  // claude, codex, gemini
    nlohmann::json cursor;                    // where its next read starts (null: the start)
    std::optional<double> agent_cost;         // USD, the agent's own figure
    std::int64_t turns = 0;
    std::int64_t cpu_ms = 0;
    std::optional<std::int64_t> rss, pss, peak_rss, peak_pss;  // bytes
    std::optional<EpochMs> sampled_at;
    UsageLimits limits;
    std::vector<std::string> warned;  // the limits warned of at 80 %
    std::optional<std::string> stopped;
    std::map<std::string, ModelTokens> models;  // the tokens read, per model
    // Its runtime (SPEC 19): the current run began at run_from (null: at its spawn), and the
    // runs before it (it was resumed) lasted run_before_ms.
    std::optional<EpochMs> run_from;
    std::int64_t run_before_ms = 0;
};

std::optional<AgentUsageRow> load_agent_usage(Store& store, std::int64_t agent_id);
// Every agent of the team that has a row, with its models: two queries.
std::map<std::int64_t, AgentUsageRow> team_agent_usage(Store& store, std::int64_t team_id);
// The tokens of the calls made since `since`, per agent and model (a team's agents).
std::map<std::int64_t, std::map<std::string, ModelTokens>> team_usage_since(Store& store,
                                                                            std::int64_t team_id,
                                                                            EpochMs since);

// In a write. The agent (spawned at `created`) starts again at `at` (a resume): the run that
// ended at `ended` is added to its runs before.
void restart_usage_run(Store& store, std::int64_t agent_id, EpochMs created, EpochMs ended,
                       EpochMs at);
// In a write. The row of a new agent, with its limits.
void create_agent_usage(Store& store, std::int64_t agent_id, const UsageLimits& limits);
// The agent's record named (by a hook): a new one is read from its start.
void save_usage_records(Store& store, std::int64_t agent_id, const std::string& path,
                        const std::string& kind);
// The calls read and where the next read starts: each call not stored before is added to its
// model's sums. Returns how many were new.
int add_usage_calls(Store& store, std::int64_t agent_id, const std::vector<UsageCall>& calls,
                    const nlohmann::json& cursor);
void save_usage_sample(Store& store, std::int64_t agent_id, std::int64_t cpu_ms, std::int64_t rss,
                       std::int64_t pss, EpochMs at);
void save_agent_cost(Store& store, std::int64_t agent_id, double usd);
void add_usage_turn(Store& store, std::int64_t agent_id);
void save_usage_marks(Store& store, std::int64_t agent_id, const std::vector<std::string>& warned,
                      const std::optional<std::string>& stopped);

// A team's max-cost marks: warned of at 80 %, its agents stopped at 100 % (once each).
struct TeamBudgetMarks {
    bool warned = false;
    bool stopped = false;
};
TeamBudgetMarks load_team_budget(Store& store, std::int64_t team_id);
void save_team_budget(Store& store, std::int64_t team_id, const TeamBudgetMarks& marks);

}  // namespace team
