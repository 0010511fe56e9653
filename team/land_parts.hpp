// What the rooms of team/land share (land.cpp checks the request and records the land,
// land_queue.cpp runs its queue, land_plan.cpp picks the branches and finishes a land that was
// killed): not for use outside them.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "git/merge.hpp"
#include "git/repository.hpp"
#include "shells/shells.hpp"
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

// The queue of one land (team/land_queue.cpp): each branch taken, checked, landed or not, and
// recorded as it goes; Land::run (team/land.cpp) makes it once the request is checked.
class LandRun {
  public:
    LandRun(Store& store, const Clock& clock, const TeamRecord& team, const Caller& caller,
            const git::Repository& repo, const std::function<void(const nlohmann::json&)>& progress)
        : store_(store),
          clock_(clock),
          team_(team),
          caller_(caller),
          repo_(repo),
          progress_(progress),
          shells_(store, clock) {}

    LandRow land;
    git::Strategy strategy = git::Strategy::merge;
    std::chrono::milliseconds timeout{0};

    // Decides one branch; returns its row.
    nlohmann::json take(LandItemRow& item, const Pick& pick);
    // Removes the scratch worktree (its results are all recorded); a reason when it stays.
    std::optional<std::string> finish(const std::string& status);
    // The item decided: recorded (state, row, activity) before anything else is done, and the
    // agent or the leader told of a failure.
    nlohmann::json decide(LandItemRow& item, const std::string& outcome, nlohmann::json extra,
                          const std::optional<Pick>& pick = std::nullopt);

  private:
    std::string message(const Pick& pick) const;
    // Adds the land's scratch worktree at `at` unless it has one; true when it was added now.
    bool ensure_scratch(const std::string& at);
    // Runs the check on the scratch worktree; null when it passed, else what the row says.
    nlohmann::json check(LandItemRow& item, const Pick& pick);
    // The agent (when live) or the leader: why its branch did not land.
    void tell(const Pick& pick, const nlohmann::json& row);

    Store& store_;
    const Clock& clock_;
    const TeamRecord& team_;
    const Caller& caller_;
    const git::Repository& repo_;
    const std::function<void(const nlohmann::json&)>& progress_;
    shells::Shells shells_;
};

}  // namespace team::land_parts
