// What a worktree holds, read without writing anything (SPEC 14): its branch, commits ahead of
// and behind the base, its staged / modified / untracked counts, whether its branch merges
// cleanly into the base, and whether two branches conflict. Every read is `git
// --no-optional-locks`, so polling never takes or waits on an agent's index.lock.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "git/repository.hpp"

namespace team::git {

struct WorktreeStatus {
    bool missing = false;   // the directory is gone: nothing else is read
    std::string branch;     // "" when detached
    std::string head;       // the commit checked out
    int ahead = 0;          // commits on HEAD not in the base
    int behind = 0;         // commits in the base not on HEAD
    int staged = 0;         // paths whose index differs from HEAD
    int modified = 0;       // paths whose working file differs from the index (deleted too)
    int untracked = 0;      // untracked files (not ignored ones), each counted
    int unmerged = 0;       // paths with a conflict of a merge in progress
    bool clean() const { return staged == 0 && modified == 0 && untracked == 0 && unmerged == 0; }
};

// Parses `status --porcelain=v2 -z --branch`: the branch, HEAD and the counts.
WorktreeStatus parse_status(const std::string& porcelain_v2_z);
// Parses `rev-list --left-right --count BASE...HEAD`: {behind, ahead}.
std::pair<int, int> parse_left_right(const std::string& text);

// The status of the worktree at `path` against `base` (a commit or ref).
WorktreeStatus worktree_status(const Repository& repo, const std::filesystem::path& path,
                               const std::string& base);

struct MergeCheck {
    bool clean = false;
    std::string tree;                // the merged tree git would write
    std::vector<std::string> files;  // the conflicting files, when not clean
};

// Parses `merge-tree --write-tree --name-only --no-messages -z` with its exit code.
MergeCheck parse_merge_tree(const std::string& out, int exit_code);
// Whether `branch` merges cleanly into `into` (`git merge-tree --write-tree`: nothing checked
// out, nothing changed but objects written to the store).
MergeCheck merge_check(const Repository& repo, const std::string& into, const std::string& branch);

// The files `ref` changed since it left `base` (`diff --name-only base...ref`).
std::vector<std::string> changed_files(const Repository& repo, const std::string& base,
                                       const std::string& ref);

struct BranchConflict {
    std::string other;               // the other branch
    std::vector<std::string> files;  // the files both change that do not merge
};

// The branches among `others` whose changes conflict with `branch`'s: merge-tree is asked only
// for a pair whose changed files (since the base) overlap.
std::vector<BranchConflict> branch_conflicts(const Repository& repo, const std::string& base,
                                             const std::string& branch,
                                             const std::vector<std::string>& others);

// `git diff --stat` of the branch's commits since the base (base...branch), or with `wip` of
// the worktree's uncommitted work (untracked files too) against its HEAD.
std::string diff(const Repository& repo, const std::string& base, const std::string& branch,
                 bool stat_only);
std::string diff_wip(const Repository& repo, const std::filesystem::path& worktree, bool stat_only);

}  // namespace team::git
