// What the rooms of team/worktrees share (worktree_spawn, worktree_snapshots, worktree_look,
// worktree_verbs): not for use outside them.
#pragma once

#include <optional>
#include <string>

#include "git/repository.hpp"
#include "git/worktrees.hpp"

namespace team::worktree_parts {

// git's own record of the worktree at `path`, if git lists one there.
inline std::optional<git::Worktree> git_entry(const git::Repository& repo,
                                              const std::string& path) {
    for (auto& w : git::list_worktrees(repo)) {
        if (w.path == std::filesystem::path(path)) return w;
    }
    return std::nullopt;
}

}  // namespace team::worktree_parts
