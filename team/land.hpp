// Landing agents' work (SPEC 20): `team land [A…] [--check CMD] [--into REF] [--strategy
// merge|squash|rebase] [--stop-on-failure] [--dry-run]`, a merge queue of the team's own.
//
// The branches (the named agents', else every worktree agent that has ended, or is idle, with
// commits the target lacks, in the order they finished) are taken one at a time: brought onto
// the target as it is at that moment (git/land.hpp: nothing checked out for merge and squash,
// the land's scratch worktree for rebase), the team's check run on the result in the scratch
// worktree as a team shell (its timeout, its output kept), and only on exit 0 the target moved,
// by compare-and-swap (a target that moved during the check is taken again, the branch brought
// onto its new tip). A conflict or a red check changes nothing; the agent (when live) or the
// leader gets a message naming the files, or the check's exit code, last lines and shell.
//
// Nothing is lost: one land at a time per team (an flock, dropped by the kernel with its holder:
// a second is refused); every step is written ahead (state/land_rows.hpp), so the next land
// finishes a killed one first: its check ended, its scratch worktree removed, a branch whose
// target already holds the landed commit recorded landed. Agents' branches and worktrees are
// never touched; the target's checkout moves with the target only when it is clean, and a
// checkout with uncommitted work holds the target where it is.
#pragma once

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/time.hpp"
#include "state/records.hpp"
#include "state/store.hpp"

namespace team {

struct LandAsk {
    std::vector<std::string> agents;   // these agents' branches, in this order; else the default
    std::optional<std::string> check;  // else the team's (team config check)
    std::optional<std::string> into;   // else the team's base branch
    std::string strategy = "merge";    // merge | squash | rebase
    std::optional<std::chrono::milliseconds> check_timeout;  // else check-timeout (30m)
    bool stop_on_failure = false;
    bool dry_run = false;
};

class Land {
  public:
    Land(Store& store, const Clock& clock) : store_(store), clock_(clock) {}

    // Lands the branches; returns {team, landId, into, strategy, check, dryRun, stopped,
    // branches: [row...], recovered: [...]}. Each row: agent, branch, tip, outcome (landed |
    // conflict | check_failed | skipped; with --dry-run would_land, conflict or skipped) and
    // commit, previous, files, exitCode, outputTail, shellId, why as they apply. `progress`
    // (may be empty) gets {event: "queued", branches} and then each row as it is decided.
    // Throws before anything changes: usage (a bad strategy, no check), not_found (an unknown
    // agent, an --into that names nothing), refused (a land running, an agent with no worktree,
    // the target's checkout holding uncommitted work, not the leader).
    nlohmann::json run(const TeamRecord& team, const Caller& caller, const LandAsk& ask,
                       const std::function<void(const nlohmann::json&)>& progress);

    // The team's last `limit` lands, newest first, each with its rows.
    nlohmann::json history(const TeamRecord& team, int limit);

  private:
    Store& store_;
    const Clock& clock_;
};

}  // namespace team
