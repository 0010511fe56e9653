// Snapshots (SPEC 14): an agent's uncommitted work kept as a commit under
// refs/team/snapshots/T/A/N before any stop, without touching the worktree or its index (see
// work_tree.hpp), and brought back exactly. The commit is shaped as git stash shapes its own
// (the working tree's commit W, its parents HEAD and the staged tree's commit I), so
// `git stash apply --index REF` restores it, staged work staged again; untracked files are in W
// (and restored untracked). Ignored files are listed in the result and the commit's message,
// never stored. A ref of our own per agent: refs/stash is shared by every worktree.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "git/repository.hpp"

namespace team::git {

struct Snapshot {
    bool taken = false;    // false when there was nothing uncommitted to keep
    std::string ref;       // refs/team/snapshots/T/A/N
    std::string commit;    // W
    std::string head;      // the commit the work sits on
    int staged = 0;        // paths staged (index against HEAD)
    int modified = 0;      // tracked paths changed or deleted in the working files
    int untracked = 0;     // untracked files kept
    bool partial = false;  // a merge was in progress: see `unmerged` and `note`
    std::vector<std::string> unmerged;  // recorded as the files are, staged at HEAD's version
    std::vector<std::string> ignored;   // listed, not stored (directories end with '/')
    std::vector<std::string> submodules_not_recorded;  // submodules with work of their own
    std::string note;      // what a person should know about what was not recorded
};

// The ref prefix of an agent's snapshots.
std::string snapshot_prefix(const std::string& team, const std::string& agent);

// Takes a snapshot of the worktree at `worktree` for agent T/A. The ref is made under the
// repository's lock (`home` holds it); nothing else is written but objects.
Snapshot take_snapshot(const Repository& repo, const std::filesystem::path& home,
                       const std::string& team, const std::string& agent,
                       const std::filesystem::path& worktree);

// The agent's snapshot refs, oldest first.
std::vector<std::string> list_snapshots(const Repository& repo, const std::string& team,
                                        const std::string& agent);

// Brings a snapshot back into a clean worktree (`git stash apply --index REF`): the files, the
// staged ones staged, the untracked ones untracked. Refuses (dirty) a worktree with any change
// or untracked file, and a ref that is not a snapshot. Runs under the repository's lock.
void restore_snapshot(const Repository& repo, const std::filesystem::path& home,
                      const std::filesystem::path& worktree, const std::string& ref);

}  // namespace team::git
