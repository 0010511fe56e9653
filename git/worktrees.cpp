#include "git/worktrees.hpp"

#include <algorithm>
#include <set>
#include <system_error>

namespace team::git {

namespace fs = std::filesystem;

std::string default_branch(const std::string& team, const std::string& agent) {
    return "team/" + team + "/" + agent;
}

std::string lock_reason(const std::string& team, const std::string& agent) {
    return "team:" + team + "/" + agent;
}

std::vector<Worktree> parse_worktree_list(const std::string& porcelain_z) {
    std::vector<Worktree> out;
    bool open = false;
    for (const std::string& field : split_z(porcelain_z)) {
        if (field.empty()) {  // a record ends with an empty field
            open = false;
            continue;
        }
        auto space = field.find(' ');
        std::string key = field.substr(0, space);
        std::string value = space == std::string::npos ? "" : field.substr(space + 1);
        if (key == "worktree") {
            out.push_back({});
            out.back().path = value;
            out.back().main = out.size() == 1;
            open = true;
            continue;
        }
        if (!open) continue;
        Worktree& w = out.back();
        if (key == "HEAD") {
            w.head = value;
        } else if (key == "branch") {
            w.branch = value.rfind("refs/heads/", 0) == 0 ? value.substr(11) : value;
        } else if (key == "bare") {
            w.bare = true;
        } else if (key == "detached") {
            w.detached = true;
        } else if (key == "locked") {
            w.locked = true;
            w.lock_reason = value;
        } else if (key == "prunable") {
            w.prunable = true;
        }
    }
    for (Worktree& w : out) {
        std::error_code ec;
        w.missing = !w.bare && !fs::exists(w.path, ec);
    }
    return out;
}

std::vector<Worktree> list_worktrees(const Repository& repo) {
    return parse_worktree_list(git_out(*repo.git, repo.common_dir,
                                       read_args({"worktree", "list", "--porcelain", "-z"}),
                                       "cannot list the worktrees"));
}

namespace {

void check_branch_name(const Repository& repo, const std::string& branch) {
    GitResult r = git_run(*repo.git, repo.common_dir, {"check-ref-format", "--branch", branch});
    if (!r.ok() || branch.empty() || branch[0] == '-') {
        throw GitError(ErrorCode::usage, GitErrorKind::bad_branch,
                       "not a valid branch name: " + quote(branch));
    }
}

void check_path_free(const fs::path& path) {
    std::error_code ec;
    if (!fs::exists(path, ec)) return;
    if (fs::is_directory(path, ec) && fs::is_empty(path, ec)) return;
    throw GitError(ErrorCode::refused, GitErrorKind::path_taken,
                   "the worktree's directory " + quote(path.string()) + " exists and is not empty");
}

}  // namespace

AddResult add_worktree(const Repository& repo, const AddRequest& req) {
    std::string branch = req.branch.empty() ? default_branch(req.team, req.agent) : req.branch;
    check_branch_name(repo, branch);
    check_path_free(req.path);
    for (const Worktree& w : list_worktrees(repo)) {
        if (w.branch == branch) {
            throw GitError(ErrorCode::refused, GitErrorKind::branch_checked_out,
                           "branch " + quote(branch) + " is checked out in " +
                               quote(w.path.string()) + (w.missing ? " (missing)" : ""));
        }
    }
    bool exists = branch_exists(repo, branch);
    if (exists && !req.reuse_branch) {
        throw GitError(ErrorCode::refused, GitErrorKind::branch_exists,
                       "branch " + quote(branch) + " exists (reuse it with --reuse-branch)");
    }
    std::vector<std::string> args = {"worktree", "add", "--quiet", "--lock", "--reason",
                                     lock_reason(req.team, req.agent)};
    if (exists) {
        args.insert(args.end(), {"--end-of-options", req.path.string(), branch});
    } else {
        if (req.base.commit.empty()) throw failed("no base for the new branch " + quote(branch));
        args.insert(args.end(), {"--no-track", "-b", branch, "--end-of-options",
                                 req.path.string(), req.base.commit});
    }
    fs::create_directories(req.path.parent_path());
    GitResult r = git_run(*repo.git, repo.common_dir, args);
    if (!r.ok()) {
        // git may have made the branch before it failed: an orphan we delete, but only while it
        // still points where we made it (a compare-and-swap).
        if (!exists && branch_exists(repo, branch)) {
            git_run(*repo.git, repo.common_dir,
                    {"update-ref", "-d", "refs/heads/" + branch, req.base.commit});
        }
        throw git_failure("cannot add the worktree " + quote(req.path.string()), r);
    }
    AddResult result;
    result.branch_created = !exists;
    for (const Worktree& w : list_worktrees(repo)) {
        if (w.branch == branch) result.worktree = w;
    }
    if (result.worktree.path.empty()) {
        throw failed("git added the worktree " + quote(req.path.string()) + " but does not list it");
    }
    result.included = copy_worktree_includes(repo, result.worktree.path);
    return result;
}

std::vector<std::string> copy_worktree_includes(const Repository& repo, const fs::path& worktree) {
    std::vector<std::string> copied;
    if (repo.main_checkout.empty()) return copied;
    fs::path include = repo.main_checkout / ".worktreeinclude";
    std::error_code ec;
    if (!fs::is_regular_file(include, ec)) return copied;
    // The files .worktreeinclude names, among the untracked ones...
    auto named = split_z(git_out(*repo.git, repo.main_checkout,
                                 read_args({"ls-files", "-z", "--others", "--ignored",
                                            "--exclude-from=" + include.string()}),
                                 "cannot read .worktreeinclude"));
    // ...that git ignores.
    auto ignored = split_z(git_out(*repo.git, repo.main_checkout,
                                   read_args({"ls-files", "-z", "--others", "--ignored",
                                              "--exclude-standard"}),
                                   "cannot list the ignored files"));
    std::set<std::string> ignored_set(ignored.begin(), ignored.end());
    for (const std::string& rel : named) {
        if (!ignored_set.count(rel)) continue;
        fs::path from = repo.main_checkout / rel;
        fs::path to = worktree / rel;
        if (fs::exists(fs::symlink_status(to, ec))) continue;  // never overwrite
        fs::create_directories(to.parent_path(), ec);
        if (fs::is_symlink(fs::symlink_status(from, ec))) {
            fs::copy_symlink(from, to, ec);
        } else {
            fs::copy_file(from, to, fs::copy_options::none, ec);
        }
        if (!ec) copied.push_back(rel);
    }
    std::sort(copied.begin(), copied.end());
    return copied;
}

}  // namespace team::git
