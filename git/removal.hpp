// Refuse before you remove (STYLE 17, SPEC 14). A worktree may go only when nothing in it can be
// lost: it is clean (untracked files too), holds no ignored files (`git worktree remove` would
// delete a `.env` silently), its branch is merged into the base or patch-equivalent to what is
// there (`git cherry`, or a merge that would change nothing: a squash-merged branch), and its
// HEAD is not detached on commits no branch holds. Whether a process still runs in it is the
// caller's check (team/). Nothing here runs `worktree remove --force` or `branch -D`; a discard
// takes a snapshot and moves the directory (and git's record of it) into a trash folder.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "git/status.hpp"
#include "git/worktrees.hpp"

namespace team::git {

struct RemovalCheck {
    WorktreeStatus status;
    std::vector<std::string> ignored;  // ignored files in it (directories end with '/')
    std::string merged_as;             // "ancestor", "patch-equivalent", "content"; "" if not
    bool detached_unheld = false;      // a detached HEAD with commits no branch holds
    std::vector<std::string> reasons;  // why it may not go; empty: it may
    bool removable() const { return reasons.empty(); }
};

// How `branch` is in `base`: "ancestor", "patch-equivalent" (every commit's patch is there),
// "content" (merging it would change nothing), or "" (it holds work the base has not).
std::string merged_as(const Repository& repo, const std::string& base, const std::string& branch);

RemovalCheck check_removal(const Repository& repo, const Worktree& worktree, const std::string& base);

// Removes the worktree if check_removal (repeated under the repository's lock) finds nothing
// to lose: unlocked, `git worktree remove` (never --force), and its branch deleted only when it
// is merged, with a compare-and-swap on the commit checked. Throws refused with the reasons.
void remove_worktree(const Repository& repo, const std::filesystem::path& home,
                     const Worktree& worktree, const std::string& base);

struct Discarded {
    std::string snapshot_ref;          // "" when there was nothing uncommitted
    std::filesystem::path trash_path;  // where the directory went
};

// `rm --discard`: a snapshot of the uncommitted work, then the directory and git's record of
// the worktree (its admin directory, with its index) moved under `trash_dir`. The branch stays.
Discarded discard_worktree(const Repository& repo, const std::filesystem::path& home,
                           const std::string& team, const std::string& agent,
                           const Worktree& worktree, const std::filesystem::path& trash_dir);

struct GcEntry {
    Worktree worktree;
    bool removed = false;   // removed (or, with dry_run, would be)
    std::vector<std::string> kept_because;
};

// The worktrees of `team` (locked with a reason team:T/...) that are present and removable
// against `base`, removed (not with dry_run); the others kept with their reasons.
std::vector<GcEntry> gc_worktrees(const Repository& repo, const std::filesystem::path& home,
                                  const std::string& team, const std::string& base, bool dry_run);

}  // namespace team::git
