// Worktrees of a repository: made for an agent (on its own branch, locked with its reason, the
// repository's `.worktreeinclude` files copied in) and listed as git knows them, with the ones
// whose directory is gone marked missing. Adding runs under the repository's lock.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "git/repository.hpp"

namespace team::git {

struct Worktree {
    std::filesystem::path path;
    std::string head;         // the commit checked out ("" for a bare entry)
    std::string branch;       // the short branch name; "" when detached
    bool bare = false;
    bool detached = false;
    bool locked = false;
    std::string lock_reason;  // "team:T/A" for ours
    bool prunable = false;    // git would prune it (its directory is gone and it is not locked)
    bool missing = false;     // its directory is gone (locked or not)
    bool main = false;        // the repository's main worktree (the first git lists)
};

// `git worktree list --porcelain -z`, parsed; `missing` from the directory's existence.
std::vector<Worktree> parse_worktree_list(const std::string& porcelain_z);
std::vector<Worktree> list_worktrees(const Repository& repo);

// The default branch of an agent's worktree: team/T/A.
std::string default_branch(const std::string& team, const std::string& agent);
// The lock reason of an agent's worktree: team:T/A.
std::string lock_reason(const std::string& team, const std::string& agent);

struct AddRequest {
    std::filesystem::path path;  // the new worktree's directory (absent or empty)
    std::string team, agent;
    std::string branch;          // default: team/T/A
    Base base;                   // where a new branch starts
    bool reuse_branch = false;   // check out the branch if it exists (not if checked out elsewhere)
};

struct AddResult {
    Worktree worktree;
    bool branch_created = false;
    std::vector<std::string> included;  // .worktreeinclude files copied in, relative paths
};

// Adds the worktree: `worktree add --no-track --lock --reason team:T/A -b B PATH BASE` (or, with
// reuse, on the existing branch). Refused with nothing made: a bad branch name, a branch that
// exists (without reuse), a branch checked out elsewhere (the message names where), a directory
// that is not empty. Must be called under the repository's RepoLock. When git fails after making
// the branch, the branch is deleted again (only if it still points at the base).
AddResult add_worktree(const Repository& repo, const AddRequest& request);

// Copies into `worktree` the files of the main checkout that git ignores and that
// `.worktreeinclude` (gitignore patterns, at the main checkout's top) names; never overwrites.
// Returns the relative paths copied.
std::vector<std::string> copy_worktree_includes(const Repository& repo,
                                                const std::filesystem::path& worktree);

}  // namespace team::git
