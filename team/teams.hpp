// Teams (SPEC 3): create, find, list, describe and delete, and who is calling (SPEC 1.5).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/time.hpp"
#include "state/store.hpp"

namespace team {

struct TeamRecord {
    std::int64_t id = 0;
    std::string name;
    std::string description;
    std::string cwd;
    std::string leader;  // the leader's member name
    std::string status;  // active | dissolved
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
    std::string status;  // spawning | active | shutting_down | terminated
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

    std::string id_string() const { return name + "@" + team; }
    bool live() const { return status != "terminated"; }
};

// The member of that name, leader included: the live one, else the newest terminated one.
std::optional<AgentRecord> find_member(Store& store, const TeamRecord& team,
                                       const std::string& name);
// Throws not_found for an unknown member name of `team`, with did-you-mean over its live members.
[[noreturn]] void member_not_found(Store& store, const TeamRecord& team, const std::string& name);

// Agents of a team as stored, oldest first: the live ones, or all (leader excluded).
std::vector<AgentRecord> load_agents(Store& store, const TeamRecord& team, bool include_terminated);
// One agent by its row id.
std::optional<AgentRecord> load_agent(Store& store, std::int64_t id);

nlohmann::json to_json(const TeamRecord& team);
nlohmann::json to_json(const AgentRecord& agent);

// Who runs a command: a member of the team (SPEC 1.5).
struct Caller {
    std::string name;
    std::string team;
    bool is_leader = false;
    std::int64_t member_id = 0;  // the row of its member record
    std::string id() const { return name + "@" + team; }
};

struct TeamStatus {
    TeamRecord team;
    std::vector<AgentRecord> agents;   // members other than the leader, live ones first
    std::map<std::string, int> tasks;  // task counts by status
};

class Teams {
  public:
    Teams(Store& store, const Clock& clock) : store_(store), clock_(clock) {}

    struct CreateRequest {
        std::string name;
        std::string description;
        std::string cwd;     // must be an existing directory; made absolute
        std::string leader;  // the leader's member name
    };
    // Makes a team with its leader as first member, and logs team_created. Refused when a live
    // team of that name exists.
    TeamRecord create(const CreateRequest& request);

    // The live team of that name, else the newest dissolved one. Not found: did-you-mean.
    TeamRecord find(const std::string& name);

    // The team with this row id (live or dissolved), if it still exists.
    std::optional<TeamRecord> find_by_id(std::int64_t id);

    // SPEC 1.1: the named team, else the only live team; otherwise a usage error listing them.
    TeamRecord resolve(const std::optional<std::string>& name);

    // All teams, oldest first; dissolved ones only when asked.
    std::vector<TeamRecord> list(bool include_dissolved);

    TeamStatus status(const TeamRecord& team);

    // Whether the team's records still exist (not deleted since `team` was read).
    bool exists(const TeamRecord& team);

    // Deletes a team and all its records. Refused while it has a live agent.
    void remove(const TeamRecord& team, const Caller& caller);

    // --as NAME or NAME@TEAM, else the leader. The caller must be a live member of `team`.
    Caller resolve_caller(const TeamRecord& team, const std::optional<std::string>& as);

  private:
    Store& store_;
    const Clock& clock_;
};

// The errors of a team that is not there, shared by every place that looks one up.
Error team_not_found(const std::string& name, const std::vector<std::string>& known);
Error no_team_given(const std::vector<std::string>& live);

// Throws refused unless the caller is the team's leader; `action` says what was attempted.
void require_leader(const Caller& caller, const std::string& action);

}  // namespace team
