// What agents spend, and the limits team holds them to (SPEC 18).
//
// Spending: the tokens of each model call, read from the agent's own record of them, which its
// hooks name (Claude Code's transcript, Codex's rollout file, Gemini CLI's chat file: their
// `transcript_path`); the agent's own cost figure where it gives one (Claude Code's status
// line), else its tokens at the price table's prices (team/prices.hpp); its turns (its
// submitted prompts); CPU time and memory (PSS and RSS) of its whole process tree; wall time.
// A sampler in each pane agent's supervisor (a thread of `team __agent ID`) samples the tree and
// reads the record's new lines every `sample-every` (2 s), and checks the limits.
// Each call is stored once by its key with the record's cursor in the same transaction, so a
// record read twice, a watcher killed mid-read or a truncated last line never counts a token
// twice or drops one (state/usage_rows.hpp).
//
// Limits: an agent's own, set at its spawn (--max-tokens, --max-cost, --max-memory,
// --max-runtime; --limit-grace), and its team's (max-agents, max-cost: `team create`, `team
// config --team`). At 80 % of one the leader gets one `budget_warning` message and the notify
// command the event; at 100 % the agent gets a graceful stop request with reason `budget` whose
// force comes after its limit grace, and the leader a `budget_stop` message. A spawn into a team
// at its max-agents, or over its max-cost, is refused. Each is in the activity log with its
// figures.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/time.hpp"
#include "proc/tree_sample.hpp"
#include "state/records.hpp"
#include "state/store.hpp"
#include "state/usage_rows.hpp"
#include "team/prices.hpp"

namespace team {

// An agent's spending as its limits count it.
struct UsageFigures {
    ModelTokens tokens;                  // summed over its models
    std::optional<double> cost;          // none: unknown (a model without a price)
    std::string cost_source;             // "agent", "prices", or "" when there is nothing to cost
    std::vector<std::string> unknown;    // the models without a price
    std::optional<std::int64_t> memory;  // PSS (RSS where PSS cannot be read), bytes
    std::int64_t runtime_ms = 0;         // from its spawn to its end, or to now
};

UsageFigures usage_figures(const AgentRecord& agent, const AgentUsageRow* row,
                           const PriceTable& prices, EpochMs now);

// The agent's spending as `team usage`, `team agents --json`, MCP and HTTP show it.
nlohmann::json usage_json(const AgentRecord& agent, const AgentUsageRow* row,
                          const PriceTable& prices, EpochMs now);
// The same with its figures already worked out.
nlohmann::json usage_json(const AgentRecord& agent, const AgentUsageRow* row,
                          const UsageFigures& figures);

// What a hook's payload says of the agent's spending, in the write of its report: the record it
// names (`transcript_path`), the agent's own cost (Claude Code's status line's
// `cost.total_cost_usd`) and, for a report of a submitted prompt (`turn`), a turn.
void note_hook_usage(Store& store, std::int64_t agent_id, std::string_view kind,
                     std::string_view event, const nlohmann::json& payload, bool turn);
// Whether a hook's payload says anything `note_hook_usage` keeps.
bool hook_has_usage(std::string_view event, const nlohmann::json& payload);

// A team's limits as its config says (none when not set), and what its agents' costs sum to
// (those whose cost is unknown left out, counted in `unknown`).
std::optional<double> team_max_cost(Store& store, std::int64_t team_id);
std::optional<std::int64_t> team_max_agents(Store& store, std::int64_t team_id);
double team_cost(Store& store, const TeamRecord& team, const PriceTable& prices, EpochMs now,
                 int* unknown = nullptr);

// In a spawn's write: refused (exit 4, with the count) when the team is at its max-agents, or
// at or over its max-cost.
void check_spawn_budget(Store& store, const TeamRecord& team);

// Reads the new part of the agent's record (one transaction): how many calls were new.
int read_agent_records(Store& store, std::int64_t agent_id);

// Checks the agent's limits and its team's with `sample` (its tree now, if sampled): warns and
// stops as the top says. Returns the limit that stopped it now, if one did.
std::optional<std::string> enforce_limits(Store& store, const Clock& clock, std::int64_t agent_id,
                                          const std::optional<proc::TreeSample>& sample);

// The sampler inside an agent's pane supervisor: a thread with a store connection of its own
// that, every `sample-every`, samples the agent's tree (rooted at `root`), reads its record's new
// calls and checks its limits, until the agent ends or it is stopped (the destructor stops it).
// A thread, not a process: nothing more to start on a spawn's path or to end on a kill's.
class UsageSampler {
  public:
    UsageSampler(std::filesystem::path home, std::string url, std::int64_t agent_id, pid_t root);
    ~UsageSampler();
    UsageSampler(const UsageSampler&) = delete;
    UsageSampler& operator=(const UsageSampler&) = delete;
    void stop();

  private:
    void run();
    std::filesystem::path home_;
    std::string url_;
    std::int64_t agent_id_;
    pid_t root_;
    std::mutex mutex_;
    std::condition_variable woken_;
    bool stopping_ = false;
    std::thread thread_;
};

// The same as a process of its own (`team __usage ID`, hidden): until the agent ends.
int watch_usage(Store& store, std::int64_t agent_id);

// `team usage [A…] [--since D]`: each agent's spending (live agents, and ended ones too with
// `all` or when named) and the team's sum, with its limits.
nlohmann::json team_usage(Store& store, const TeamRecord& team,
                          const std::vector<std::string>& names, std::optional<EpochMs> since,
                          bool all, EpochMs now);

}  // namespace team
