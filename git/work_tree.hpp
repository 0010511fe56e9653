// A worktree's uncommitted work recorded as trees, without touching the worktree or its index:
// the agent's index is copied to a temporary index (GIT_INDEX_FILE) and written as the staged
// tree; a copy of that gets `add -A` (untracked files in, ignored ones out, deletions recorded)
// and is written as the working tree. git takes the temporaries' locks, never index.lock, so
// this works while the agent (or a crashed git) holds it. Snapshots and `diff --wip` use it.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "git/repository.hpp"

namespace team::git {

struct WorkTrees {
    std::filesystem::path git_dir;  // the worktree's own git directory
    std::string head;               // HEAD's commit
    std::string head_tree;          // HEAD's tree
    std::string index;              // the staged tree
    std::string work;               // the working files' tree (untracked files too)
    // A merge in progress: the unmerged paths could not be staged; they are recorded at HEAD's
    // version in the staged tree (absent when HEAD has none) and as the file is (conflict
    // markers and all) in the working tree.
    std::vector<std::string> unmerged;
};

WorkTrees record_work_trees(const Repository& repo, const std::filesystem::path& worktree);

// The environment that gives commits made by `team` itself (snapshots) an author and committer
// whatever the user's configuration.
std::vector<std::pair<std::string, std::string>> team_identity();

}  // namespace team::git
