// What `team land` (SPEC 20) asks of git, one branch at a time: the branch brought onto the
// target's tip as a commit no ref holds yet (merge and squash from `merge-tree`'s tree with
// nothing checked out; rebase in the land's scratch worktree), the scratch worktree itself (one
// per land, detached, under <home>/land/), the target moved by compare-and-swap, and the main
// checkout brought along when it is clean. Nothing here touches an agent's branch or worktree.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "git/merge.hpp"
#include "git/repository.hpp"

namespace team::git {

// A branch brought onto the target.
struct Candidate {
    bool clean = false;
    std::vector<std::string> files;  // the conflicting files, when not clean
    std::string commit;              // the commit to land (its first parent: `onto`)
    std::string onto;                // the target's tip it was made on
};

// Merge and squash: `merge-tree --write-tree` of onto and tip, then `commit-tree` (two parents
// for merge, one for squash). Nothing is checked out; a conflict names its files.
Candidate merge_candidate(const Repository& repo, Strategy strategy, const std::string& onto,
                          const std::string& tip, const std::string& message);
// Rebase: the tip checked out in `scratch` (detached), `git rebase onto`; on a conflict the
// files are read and the rebase aborted. The scratch is left at the candidate.
Candidate rebase_candidate(const Repository& repo, const std::filesystem::path& scratch,
                           const std::string& onto, const std::string& tip);

// Adds the scratch worktree at `path` (absent), detached at `commit`, under the repository's
// lock.
void add_scratch(const Repository& repo, const std::filesystem::path& home,
                 const std::filesystem::path& path, const std::string& commit);
// Puts the scratch at `commit`: what a check changed is undone, the files it left that git does
// not ignore go (ignored ones stay: a build's cache, as an incremental build keeps it).
void checkout_scratch(const Repository& repo, const std::filesystem::path& path,
                      const std::string& commit);
// Removes a scratch worktree: only a directory under `land_dir` that git lists as a detached
// worktree, or one git no longer lists (then only git's stale entry is pruned, and the
// directory is left with a reason). Returns why it was not removed, or nothing.
std::optional<std::string> remove_scratch(const Repository& repo, const std::filesystem::path& home,
                                          const std::filesystem::path& land_dir,
                                          const std::filesystem::path& path);

// Where the target is checked out, and whether that checkout holds uncommitted work (staged,
// modified or unmerged files; untracked ones only matter if the landing would overwrite them,
// and git refuses that itself). None when it is checked out nowhere.
struct TargetCheckout {
    std::filesystem::path path;
    std::optional<std::string> dirty;  // what it holds, as a refusal names it
};
std::optional<TargetCheckout> target_checkout(const Repository& repo, const std::string& into);

// Moves the target from `old` to `now` (a descendant of `old`), only if it still points at `old`.
// Checked out nowhere: `update-ref INTO NOW OLD`. Checked out in a clean worktree: `merge
// --ff-only` there, so its files move with it (git checks the ref's old value as it moves it).
// A checkout with uncommitted work is never touched, and the target then stays (as git's
// push-to-checkout does): a branch moved under it would show the landing reversed as its
// changes.
struct TargetMove {
    enum class Outcome { moved, target_moved, refused } outcome = Outcome::refused;
    std::filesystem::path checkout;  // where it is checked out; empty: nowhere
    std::string why;                 // refused: why
};
TargetMove move_target(const Repository& repo, const std::filesystem::path& home,
                       const std::string& into, const std::string& now, const std::string& old,
                       const std::string& reflog);

// Whether `ancestor` is `commit` or one of its ancestors.
bool is_ancestor(const Repository& repo, const std::string& ancestor, const std::string& commit);
// The number of commits on `tip` that `onto` does not have.
int commits_ahead(const Repository& repo, const std::string& onto, const std::string& tip);

}  // namespace team::git
