// What the rooms of team/worktrees share (worktree_spawn, worktree_snapshots, worktree_look,
// worktree_verbs; and team/land_plan, for the git a killed land left at work in its scratch
// worktree): not for use outside them.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "git/repository.hpp"
#include "git/worktrees.hpp"
#include "proc/process_table.hpp"

namespace team::worktree_parts {

// git's own record of the worktree at `path`, if git lists one there.
inline std::optional<git::Worktree> git_entry(const git::Repository& repo,
                                              const std::string& path) {
    for (auto& w : git::list_worktrees(repo)) {
        if (w.path == std::filesystem::path(path)) return w;
    }
    return std::nullopt;
}

// The processes (other than this one) whose working directory is `dir` or below it; with
// `or_naming`, also those that name `dir` as one of their arguments (a `git worktree add DIR`).
// The /proc scan of worktree_verbs.cpp.
std::vector<proc::ProcessInfo> processes_in(const std::filesystem::path& dir,
                                            bool or_naming = false);

// How long a look waits for the git of a spawn that died mid-`worktree add` to end.
inline constexpr std::chrono::seconds kOrphanGitWait{10};

// Waits (up to kOrphanGitWait) until no process works in `path` or names it: the git a dead
// spawn (or land) started there. False when one still does then.
bool wait_for_orphans(const std::filesystem::path& path);

}  // namespace team::worktree_parts
