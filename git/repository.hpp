// A repository as git/ knows it: found from any path inside it, with its common directory (the
// key of its lock and where its refs live) and its main checkout, and the errors of git/ with
// their kinds. Every other file of git/ takes a Repository.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "git/runner.hpp"

namespace team::git {

// Why git/ refused or failed, for a face to show or branch on (`kind` in the JSON).
enum class GitErrorKind {
    no_repository,       // the path is in no git repository
    no_commit,           // the repository has no commit yet
    bad_ref,             // a base or a ref that names no commit
    bad_branch,          // a branch name git does not accept
    branch_exists,       // the branch exists and reuse was not asked for
    branch_checked_out,  // the branch is checked out in another worktree (the message says where)
    path_taken,          // the worktree's directory exists and is not empty
    dirty,               // uncommitted work where a clean tree is needed
    conflicts,           // a merge would conflict (the message names the files)
    not_mergeable,       // the strategy cannot be used here (a fast-forward that is none)
    missing,             // the worktree's directory is gone
    git_failed,          // git itself failed: its message is in ours
};
std::string_view kind_name(GitErrorKind kind);

class GitError : public Error {
  public:
    GitError(ErrorCode code, GitErrorKind kind, const std::string& message)
        : Error(code, message), kind_(kind) {}
    GitErrorKind kind() const { return kind_; }

  private:
    GitErrorKind kind_;
};

struct Repository {
    Git* git = nullptr;
    std::filesystem::path common_dir;     // absolute: the .git directory every worktree shares
    std::filesystem::path main_checkout;  // absolute: the main worktree; empty for a bare one
};

// The repository that holds `path`. Throws GitError no_repository (a usage error) for a path in
// no repository, not_found for a path that does not exist.
Repository resolve_repository(Git& git, const std::filesystem::path& path);

// A base: the commit work starts from, and the name it was given (a branch, HEAD, a tag).
struct Base {
    std::string commit;  // the full commit id
    std::string name;    // as given, or the branch HEAD was on ("" for a detached HEAD)
};

// `ref` (default: the main checkout's HEAD) as a commit. Throws no_commit for a repository with
// no commit yet, bad_ref for a ref that names no commit.
Base resolve_base(const Repository& repo, const std::string& ref = "");

// ---- helpers for the other files of git/ ----

// Runs git in `cwd`; throws GitError git_failed with git's message (and `what`) unless it exits 0.
std::string git_out(Git& git, const std::filesystem::path& cwd, std::vector<std::string> args,
                    const std::string& what);
GitResult git_run(Git& git, const std::filesystem::path& cwd, std::vector<std::string> args);
// The same, for reads: `git --no-optional-locks ARGS`, which never writes the index.
std::vector<std::string> read_args(std::vector<std::string> args);
// The output's first line, without its end.
std::string first_line(const std::string& text);
// Splits on NUL (git's -z), without the empty field after the last NUL.
std::vector<std::string> split_z(const std::string& text);
// Splits on newlines, without empty lines.
std::vector<std::string> split_lines(const std::string& text);
// A failed git call as an error: "what: git's first line of stderr".
GitError git_failure(const std::string& what, const GitResult& r);

// Whether refs/heads/`branch` exists.
bool branch_exists(const Repository& repo, const std::string& branch);
// The commit `ref` names, or "" when it names none.
std::string commit_of(const Repository& repo, const std::string& ref);

}  // namespace team::git
