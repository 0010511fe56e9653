// What the rooms of team/land share (land.cpp runs the queue, land_plan.cpp picks the branches
// and finishes a land that was killed): not for use outside them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "git/repository.hpp"
#include "state/land_rows.hpp"
#include "state/records.hpp"
#include "state/store.hpp"

namespace team::land_parts {

// One branch the land takes.
struct Pick {
    std::string agent;
    std::optional<std::int64_t> agent_id;
    std::string branch;
    std::string tip;  // its commit now; "" when the branch is gone
    bool live = false;
    EpochMs finished = 0;             // when its agent ended or went idle (the default's order)
    std::optional<std::string> skip;  // decided before the queue: skipped, and why
};

// The named agents' branches in the order given (all checked first: an unknown name is
// not_found, an agent without a worktree refused), or by default every worktree agent that has
// ended or is idle with commits `into_tip` lacks, oldest finish first.
std::vector<Pick> pick_branches(Store& store, const git::Repository& repo, const TeamRecord& team,
                                const std::vector<std::string>& names, const std::string& into_tip);

// Why a branch at `tip` has nothing to land on `onto`: it is in it already, or a land recorded
// it landed as a commit `onto` holds. Nothing when it has.
std::optional<std::string> nothing_to_land(Store& store, const git::Repository& repo,
                                           const std::string& branch, const std::string& tip,
                                           const std::string& onto, const std::string& into);

// Where the team's lands keep their scratch worktrees: <home>/land, its links resolved (git
// records a worktree's path resolved, a shell its directory).
std::filesystem::path land_dir(const Store& store);

// Finishes the team's lands whose process is gone (the caller holds the land lock): checks
// still running in their scratch worktrees ended, a branch whose target holds its candidate
// recorded landed, the others interrupted, the scratch worktrees removed. Returns the rows it
// decided.
nlohmann::json recover(Store& store, const Clock& clock, const git::Repository& repo,
                       const TeamRecord& team);

// A row as the result shows it, from its item.
nlohmann::json row_of(const LandItemRow& item, const std::string& outcome);

}  // namespace team::land_parts
