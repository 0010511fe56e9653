// The members repository: a team's members (its agents and its leader) as the store keeps them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "state/records.hpp"
#include "state/store.hpp"

namespace team {

// The member of that name, leader included: the live one, else the newest terminated one.
std::optional<AgentRecord> find_member(Store& store, const TeamRecord& team,
                                       const std::string& name);
// Throws not_found for an unknown member name of `team`, with did-you-mean over its live members.
[[noreturn]] void member_not_found(Store& store, const TeamRecord& team, const std::string& name);

// Agents of a team as stored, oldest first: the live ones, or all (leader excluded).
std::vector<AgentRecord> load_agents(Store& store, const TeamRecord& team, bool include_terminated);
// One agent by its row id.
std::optional<AgentRecord> load_agent(Store& store, std::int64_t id);

// The names of a team's live members (leader included), for did-you-mean.
std::vector<std::string> live_member_names(Db& db, std::int64_t team_id);

// A team's live members of this home (a shared store holds other homes' too), leader included,
// oldest first, with only id, name, team and pane set.
std::vector<AgentRecord> live_member_panes(Store& store, const TeamRecord& team);

// The team's leader: the live one, else the newest terminated one.
std::optional<AgentRecord> find_leader(Store& store, std::int64_t team_id);
// The live leader with only its id and name set.
std::optional<AgentRecord> live_leader_name(Store& store, std::int64_t team_id);
// How many live members a team has, the leader left out.
int count_live_agents(Store& store, std::int64_t team_id);
// `name` as a caller (SPEC 1.5): the live member of that name, with whether it leads.
std::optional<Caller> find_live_caller(Store& store, const TeamRecord& team,
                                       const std::string& name);
// The pane log files of a team's members that have one.
std::vector<std::string> agent_log_files(Store& store, std::int64_t team_id);

// Writes below: call them inside Store::write.

// Whether the team has a live member of that name.
bool live_member_exists(Store& store, std::int64_t team_id, const std::string& name);
// The same, the member of row `except` left out.
bool other_live_member_exists(Store& store, std::int64_t team_id, const std::string& name,
                              std::int64_t except);
// The colours of a team's live members that have one.
std::vector<std::string> live_member_colors(Store& store, std::int64_t team_id);

// Who is making a `spawning` agent: the `team spawn` process (its pid and start time).
struct Spawner {
    std::int64_t pid = 0;
    std::int64_t start = 0;
};
// Inserts `agent` (team_id, name, role, color, command, cwd, env, created_at) as `spawning`,
// made by `spawner`; returns its row id.
std::int64_t insert_spawning_agent(Store& store, const AgentRecord& agent, const Spawner& spawner);
void set_agent_log_file(Store& store, std::int64_t agent_id, const std::string& log_file);
void set_agent_spawn_error(Store& store, std::int64_t agent_id, const std::string& error);
// A terminated agent started again under its own record (SPEC 19, in the resume's write): back
// to `spawning` as `spawner` makes it, in this home, with `command` as it starts now, its end
// forgotten (its inbox, worktree, spending and activity stay its own). False when it is not
// terminated any more or a live member has its name.
bool restart_agent(Store& store, std::int64_t agent_id, const nlohmann::json& command,
                   const Spawner& spawner);
void delete_agent(Store& store, std::int64_t agent_id);

// What a pane supervisor records once its agent's command runs.
struct AgentStart {
    std::int64_t pid = 0;
    std::int64_t pid_start = 0;
    std::int64_t supervisor_pid = 0;
    std::int64_t supervisor_start = 0;
    std::optional<std::string> pane_id;
    // The `team spawn` or `team resume` that opened its pane: the record must still be that
    // one's making (a resume starts a record again, and a pane opened by an earlier resume that
    // died must not take it).
    std::optional<std::int64_t> spawner;
};
// `spawning` -> `active` with its processes; false when the record is no longer `spawning` (or
// no longer `spawner`'s making).
bool record_agent_started(Store& store, std::int64_t agent_id, const AgentStart& start);

// A new team's leader, active from `at`.
void insert_leader(Store& store, std::int64_t team_id, const std::string& name,
                   const std::string& cwd, EpochMs at);
// `active` -> `shutting_down`; false when the agent was not active.
bool set_agent_shutting_down(Store& store, std::int64_t agent_id);
// `shutting_down` -> `active` (its request was rejected); nothing otherwise.
void set_agent_active_again(Store& store, std::int64_t agent_id);
// How an agent's end is recorded on its row.
struct AgentExit {
    EpochMs at = 0;
    std::string reason;  // SPEC 4 exitReason
    std::optional<int> exit_code;
    std::optional<std::string> signal;
};
// A live agent becomes terminated with its exit fields; false when it was terminated already.
bool mark_agent_terminated(Store& store, std::int64_t agent_id, const AgentExit& exit);

}  // namespace team
