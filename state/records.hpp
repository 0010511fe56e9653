// The records every module passes around: a team, a member of a team, who calls (SPEC 1.5), and
// a message.
// They live here, below the modules that use them (tasks, agents, messages, shutdown), so that
// no module needs another's header for them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/states.hpp"
#include "base/time.hpp"

namespace team {

struct TeamRecord {
    std::int64_t id = 0;
    std::string name;
    std::string description;
    std::string cwd;
    std::string leader;  // the leader's member name
    TeamState status = TeamState::active;
    EpochMs created_at = 0;
    std::optional<EpochMs> dissolved_at;
    int live_agents = 0;   // members other than the leader that are not terminated
    int total_agents = 0;  // members other than the leader, terminated ones included
    int open_tasks = 0;    // pending or in progress (filled by list and status only)

    std::string leader_id() const { return leader + "@" + name; }
};

// A member of a team as the store has it (SPEC 4 "Agent JSON"). The leader is a member too.
struct AgentRecord {
    std::int64_t id = 0;
    std::string name;
    std::string team;
    std::string role;
    bool is_leader = false;
    AgentStatus status = AgentStatus::spawning;
    std::optional<std::string> pane_id;
    std::optional<std::int64_t> pid;
    std::optional<std::string> color;
    nlohmann::json command = nlohmann::json::array();
    std::optional<std::string> cwd;
    EpochMs created_at = 0;
    std::optional<EpochMs> terminated_at;
    std::optional<int> exit_code;
    std::optional<std::string> signal;
    std::optional<std::string> exit_reason;
    // Kept for the supervisor and reconciliation, not shown in JSON.
    std::int64_t team_id = 0;
    std::vector<std::string> env;  // the --env entries
    std::optional<std::int64_t> pid_start, supervisor_pid, supervisor_start;
    // The `team spawn` process that made a `spawning` record (null in records made before
    // schema 7).
    std::optional<std::int64_t> spawner_pid, spawner_start;
    std::optional<std::string> log_file, spawn_error;
    // Told of a shutdown request in its pane too (a preset's agent, or `spawn --notify`).
    bool notify = false;
    // The home it lives in (state/home.hpp's home_id; null in records made before schema 11,
    // which are of the home that has them): only that home looks at its processes and pane.
    std::optional<std::string> home_id;

    std::string id_string() const { return name + "@" + team; }
    bool lives_in(const std::string& home) const { return !home_id || *home_id == home; }
    bool live() const { return status != AgentStatus::terminated; }
};

// The environment entries that mark every process of `agent`, an agent of `home` (its pane
// supervisor puts them in the agent's environment): the marker (proc::TreeTarget) by which what
// is left of an agent is found where its records are not enough. The home makes it unique
// across homes.
std::vector<std::string> agent_marker(const std::filesystem::path& home, const AgentRecord& agent);

// Who runs a command: a member of the team (SPEC 1.5).
struct Caller {
    std::string name;
    std::string team;
    bool is_leader = false;
    std::int64_t member_id = 0;  // the row of its member record
    std::string id() const { return name + "@" + team; }
};

// A message of an inbox (SPEC 5), addressed to one member record.
struct Message {
    std::int64_t id = 0;
    std::string team;
    std::string from;  // member names
    std::string to;
    std::string type = "message";
    std::string text;
    nlohmann::json data;  // any JSON value; null when none was given
    EpochMs created_at = 0;
    std::optional<EpochMs> read_at;
    std::int64_t recipient_id = 0;  // the recipient's member record (not shown)
};

nlohmann::json to_json(const TeamRecord& team);
nlohmann::json to_json(const AgentRecord& agent);

}  // namespace team
