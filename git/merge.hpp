// Bringing an agent's branch back (SPEC 14): the check first (merge-tree: the conflicting files
// named, nothing changed), refusals for a dirty agent tree or a dirty target checkout, then the
// merge with one of four strategies. Where the target branch is checked out, git merges in that
// checkout; where it is not, the new commit is made from merge-tree's tree and the branch moved
// with a compare-and-swap `update-ref`, so a target that moved meanwhile is never overwritten.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "git/status.hpp"

namespace team::git {

enum class Strategy { merge, squash, rebase, ff };
std::string_view strategy_name(Strategy s);
// "merge", "squash", "rebase", "ff"; nullopt for another word.
std::optional<Strategy> parse_strategy(std::string_view word);

struct MergeRequest {
    std::string branch;                    // the agent's branch
    std::filesystem::path agent_worktree;  // its worktree ("" when it has none); rebase needs it
    std::string into;                      // the target branch (short name)
    Strategy strategy = Strategy::merge;
    bool check_only = false;
    std::string message;  // the commit message (a default when empty)
};

struct MergeOutcome {
    MergeCheck check;
    bool merged = false;
    std::string commit;              // the target's new tip
    std::string previous;            // the target's tip before
    std::filesystem::path checkout;  // where git merged; empty: the ref was moved (CAS)
};

// Identity for the commits a merge makes: the user's, or team's when none is configured.
std::vector<std::pair<std::string, std::string>> commit_identity(const Repository& repo);

// Checks, then (unless check_only) merges, under the repository's lock. Throws GitError:
// conflicts (the files named), dirty (agent tree or target checkout), not_mergeable (a ff that
// is not one), bad_ref, git_failed (with git's message; a target that moved meanwhile).
MergeOutcome merge_branch(const Repository& repo, const std::filesystem::path& home,
                          const MergeRequest& request);

}  // namespace team::git
