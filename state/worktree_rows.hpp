// The worktrees repository (SPEC 14): a team's repository and base, and the worktree made for
// each agent, as the store keeps them. The rules (what git is asked, when a snapshot is taken)
// are team/worktrees.hpp's; these are the reads and writes it makes. Writes run inside
// Store::write.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/time.hpp"
#include "state/store.hpp"

namespace team {

// The repository a team works in, recorded when it was created.
struct TeamRepo {
    std::string repo;       // the main checkout
    std::string base;       // a commit id
    std::string base_name;  // the branch (or ref) it was named by; "" for a detached HEAD
};

std::optional<TeamRepo> load_team_repo(Store& store, std::int64_t team_id);
void insert_team_repo(Store& store, std::int64_t team_id, const TeamRepo& repo);

struct WorktreeRow {
    std::int64_t id = 0;
    std::int64_t team_id = 0;
    std::optional<std::int64_t> agent_id;
    std::string agent;  // the agent's name
    std::string repo;   // the repository's main checkout
    std::string path;
    std::string branch;
    std::string base;  // the commit the branch started from
    std::string base_name;
    std::string state = "creating";  // creating | present | removed | discarded
    EpochMs created_at = 0;
    bool snapshot_owed = false;
    nlohmann::json snapshot = nullptr;  // the last snapshot taken (team/worktrees.hpp's JSON)
    std::optional<EpochMs> removed_at;
    std::optional<std::string> trash_path;
    // The git state its agent's watcher last recorded (team/worktree_watch.hpp), when, and the
    // conflicts with other agents' branches: null / nothing / [] until one has.
    nlohmann::json git_state = nullptr;
    std::optional<EpochMs> git_state_at;
    nlohmann::json git_conflicts = nlohmann::json::array();

    bool kept() const { return state == "creating" || state == "present"; }
};

std::int64_t insert_worktree(Store& store, const WorktreeRow& row);
std::optional<WorktreeRow> load_worktree(Store& store, std::int64_t id);
// The worktree made for that agent record, if any.
std::optional<WorktreeRow> worktree_of_agent(Store& store, std::int64_t agent_id);
// The team's worktrees, oldest first: the kept ones (creating, present), or all.
std::vector<WorktreeRow> team_worktrees(Store& store, std::int64_t team_id, bool all = false);
// Whether any kept worktree of any team is at `path`.
bool worktree_path_taken(Store& store, const std::string& path);
// The team's worktrees that owe a snapshot (their agent's end is recorded, none was taken).
std::vector<WorktreeRow> owed_snapshots(Store& store, std::int64_t team_id);

void set_worktree_state(Store& store, std::int64_t id, const std::string& state,
                        std::optional<EpochMs> removed_at = std::nullopt,
                        const std::optional<std::string>& trash_path = std::nullopt);
// The agent's end is recorded: a snapshot of its worktree (if it has one) is owed.
void owe_snapshot(Store& store, std::int64_t agent_id);
// A snapshot taken (or nothing to take): recorded, nothing owed any more.
void record_snapshot(Store& store, std::int64_t id, const nlohmann::json& snapshot);
// The kept worktree `id` goes to agent record `agent_id` (spawn --worktree --reuse-branch).
void give_worktree(Store& store, std::int64_t id, std::int64_t agent_id, const std::string& agent);
// The worktree's git state as its watcher saw it at `at`; its conflicts with other branches.
void record_git_state(Store& store, std::int64_t id, const nlohmann::json& state, EpochMs at);
void record_git_conflicts(Store& store, std::int64_t id, const nlohmann::json& conflicts);
void delete_worktree_row(Store& store, std::int64_t id);

}  // namespace team
