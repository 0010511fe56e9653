#include "git/merge.hpp"

#include <system_error>

#include "git/repo_lock.hpp"
#include "git/work_tree.hpp"
#include "git/worktrees.hpp"

namespace team::git {

namespace fs = std::filesystem;

std::string_view strategy_name(Strategy s) {
    switch (s) {
        case Strategy::merge:
            return "merge";
        case Strategy::squash:
            return "squash";
        case Strategy::rebase:
            return "rebase";
        case Strategy::ff:
            return "ff";
    }
    return "merge";
}

std::optional<Strategy> parse_strategy(std::string_view word) {
    for (Strategy s : {Strategy::merge, Strategy::squash, Strategy::rebase, Strategy::ff}) {
        if (word == strategy_name(s)) return s;
    }
    return std::nullopt;
}

namespace {

std::string joined(const std::vector<std::string>& files) {
    std::string out;
    for (const auto& f : files) out += (out.empty() ? "" : ", ") + quote(f);
    return out;
}

void refuse_dirty(const WorktreeStatus& s, const fs::path& path, const std::string& whose,
                  bool untracked_matter) {
    bool dirty = s.staged || s.modified || s.unmerged || (untracked_matter && s.untracked);
    if (!dirty) return;
    throw GitError(ErrorCode::refused, GitErrorKind::dirty,
                   whose + " " + quote(path.string()) + " has uncommitted work (" +
                       std::to_string(s.staged) + " staged, " + std::to_string(s.modified) +
                       " modified, " + std::to_string(s.untracked) + " untracked" +
                       (s.unmerged ? ", " + std::to_string(s.unmerged) + " unmerged" : "") +
                       "): commit or snapshot it first");
}

// Moves refs/heads/INTO from `old` to `now`, failing if it moved meanwhile.
void move_branch(const Repository& repo, const std::string& into, const std::string& now,
                 const std::string& old, const std::string& why) {
    GitResult r = git_run(*repo.git, repo.common_dir,
                          {"update-ref", "-m", why, "refs/heads/" + into, now, old});
    if (!r.ok()) {
        throw git_failure(
            "cannot move " + quote(into) + " (it may have moved meanwhile: check again)", r);
    }
}

// Rebases the agent's branch onto `into` in its worktree; aborted and refused on a conflict.
void rebase_in_worktree(const Repository& repo, const MergeRequest& req) {
    std::error_code ec;
    if (req.agent_worktree.empty() || !fs::is_directory(req.agent_worktree, ec)) {
        throw GitError(
            ErrorCode::refused, GitErrorKind::not_mergeable,
            "a rebase needs the branch's worktree, and " + quote(req.branch) + " has none here");
    }
    GitResult r = repo.git->run({.args = {"rebase", "--quiet", "--no-autostash", req.into},
                                 .cwd = req.agent_worktree,
                                 .env = commit_identity(repo)});
    if (!r.ok()) {
        git_run(*repo.git, req.agent_worktree, {"rebase", "--abort"});
        throw git_failure("cannot rebase " + quote(req.branch) + " onto " + quote(req.into), r);
    }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> commit_identity(const Repository& repo) {
    if (git_run(*repo.git, repo.common_dir, {"var", "GIT_COMMITTER_IDENT"}).ok()) return {};
    return team_identity();
}

MergeOutcome merge_branch(const Repository& repo, const fs::path& home, const MergeRequest& req) {
    Git& git = *repo.git;
    MergeOutcome out;
    if (!branch_exists(repo, req.into)) {
        throw GitError(ErrorCode::not_found, GitErrorKind::bad_ref, "no branch " + quote(req.into));
    }
    if (commit_of(repo, req.branch).empty()) {
        throw GitError(ErrorCode::not_found, GitErrorKind::bad_ref,
                       "no branch " + quote(req.branch));
    }
    out.check = merge_check(repo, req.into, req.branch);
    if (req.check_only) return out;
    if (!out.check.clean) {
        throw GitError(ErrorCode::refused, GitErrorKind::conflicts,
                       quote(req.branch) + " conflicts with " + quote(req.into) + " in " +
                           joined(out.check.files));
    }
    std::error_code ec;
    if (!req.agent_worktree.empty() && fs::exists(req.agent_worktree, ec)) {
        refuse_dirty(worktree_status(repo, req.agent_worktree, req.into), req.agent_worktree,
                     "the agent's worktree", true);
    }

    RepoLock lock(home, repo.common_dir);
    out.previous = commit_of(repo, "refs/heads/" + req.into);
    for (const Worktree& w : list_worktrees(repo)) {
        if (w.branch == req.into && !w.missing) out.checkout = w.path;
    }
    std::string message = req.message.empty()
                              ? (req.strategy == Strategy::squash ? "Squashed " : "Merge ") +
                                    std::string("branch '") + req.branch + "' into " + req.into
                              : req.message;
    auto identity = commit_identity(repo);
    if (req.strategy == Strategy::rebase) {
        rebase_in_worktree(repo, req);
    } else if (req.strategy == Strategy::ff &&
               !git_run(git, repo.common_dir, {"merge-base", "--is-ancestor", req.into, req.branch})
                    .ok()) {
        throw GitError(ErrorCode::refused, GitErrorKind::not_mergeable,
                       quote(req.into) + " cannot be fast-forwarded to " + quote(req.branch) +
                           ": it has commits the branch does not");
    }

    if (!out.checkout.empty()) {
        refuse_dirty(worktree_status(repo, out.checkout, "HEAD"), out.checkout,
                     "the target checkout", false);
        std::vector<std::string> args;
        switch (req.strategy) {
            case Strategy::merge:
                args = {"merge", "--no-ff", "--no-edit", "-m", message, req.branch};
                break;
            case Strategy::squash:
                args = {"merge", "--squash", req.branch};
                break;
            case Strategy::rebase:
            case Strategy::ff:
                args = {"merge", "--ff-only", req.branch};
                break;
        }
        GitResult r = git.run({.args = args, .cwd = out.checkout, .env = identity});
        if (r.ok() && req.strategy == Strategy::squash) {
            r = git.run({.args = {"commit", "--quiet", "-m", message},
                         .cwd = out.checkout,
                         .env = identity});
        }
        if (!r.ok()) {
            git_run(git, out.checkout, {"merge", "--abort"});
            throw git_failure("cannot merge " + quote(req.branch) + " into " + quote(req.into), r);
        }
    } else {
        std::string branch_tip = commit_of(repo, req.branch);
        std::string now;
        if (req.strategy == Strategy::merge || req.strategy == Strategy::squash) {
            std::vector<std::string> args = {"commit-tree", "--no-gpg-sign", out.check.tree, "-p",
                                             out.previous};
            if (req.strategy == Strategy::merge) args.insert(args.end(), {"-p", branch_tip});
            args.insert(args.end(), {"-m", message});
            GitResult r = git.run({.args = args, .cwd = repo.common_dir, .env = identity});
            if (!r.ok()) throw git_failure("cannot make the merge commit", r);
            now = first_line(r.out);
        } else {
            now = branch_tip;  // ff, or the rebased branch fast-forwarded
        }
        move_branch(repo, req.into, now, out.previous,
                    "team merge " + std::string(strategy_name(req.strategy)) + " " + req.branch);
    }
    out.commit = commit_of(repo, "refs/heads/" + req.into);
    out.merged = true;
    return out;
}

}  // namespace team::git
