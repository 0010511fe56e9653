#include "git/land.hpp"

#include <system_error>

#include "git/repo_lock.hpp"
#include "git/status.hpp"
#include "git/worktrees.hpp"

namespace team::git {

namespace fs = std::filesystem;

namespace {

// Files written by several processes at once where a checkout writes many (git's parallel
// checkout, from 100 files): adding the scratch worktree of a 10,000-file repository took 1.1-1.8 s
// with it against 3.1-3.7 s without, measured here on a loaded machine.
constexpr const char* kWorkers = "checkout.workers=4";

// The unmerged paths of a worktree in the middle of a merge or rebase.
std::vector<std::string> unmerged_files(Git& git, const fs::path& worktree) {
    GitResult r = git_run(git, worktree, {"diff", "--name-only", "--diff-filter=U", "-z"});
    return split_z(r.out);
}

bool under(const fs::path& dir, const fs::path& path) {
    auto d = dir.lexically_normal().string();
    auto p = path.lexically_normal().string();
    if (!d.empty() && d.back() != '/') d += '/';
    return p.size() > d.size() && p.compare(0, d.size(), d) == 0;
}

}  // namespace

Candidate merge_candidate(const Repository& repo, Strategy strategy, const std::string& onto,
                          const std::string& tip, const std::string& message) {
    Candidate c;
    c.onto = onto;
    MergeCheck check = merge_check(repo, onto, tip);
    if (!check.clean) {
        c.files = check.files;
        return c;
    }
    std::vector<std::string> args = {"commit-tree", "--no-gpg-sign", check.tree, "-p", onto};
    if (strategy == Strategy::merge) args.insert(args.end(), {"-p", tip});
    args.insert(args.end(), {"-m", message});
    GitResult r =
        repo.git->run({.args = args, .cwd = repo.common_dir, .env = commit_identity(repo)});
    if (!r.ok()) throw git_failure("cannot make the commit to land", r);
    c.clean = true;
    c.commit = first_line(r.out);
    return c;
}

Candidate rebase_candidate(const Repository& repo, const fs::path& scratch, const std::string& onto,
                           const std::string& tip) {
    Candidate c;
    c.onto = onto;
    checkout_scratch(repo, scratch, tip);
    GitResult r = repo.git->run({.args = {"rebase", "--quiet", "--no-autostash", onto},
                                 .cwd = scratch,
                                 .env = commit_identity(repo)});
    if (!r.ok()) {
        c.files = unmerged_files(*repo.git, scratch);
        git_run(*repo.git, scratch, {"rebase", "--abort"});
        if (c.files.empty()) throw git_failure("cannot rebase onto " + onto.substr(0, 12), r);
        return c;
    }
    c.clean = true;
    c.commit = git_out(*repo.git, scratch, {"rev-parse", "HEAD"}, "the rebased commit");
    c.commit = first_line(c.commit);
    return c;
}

void add_scratch(const Repository& repo, const fs::path& home, const fs::path& path,
                 const std::string& commit) {
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    RepoLock lock(home, repo.common_dir);
    GitResult r =
        git_run(*repo.git, repo.common_dir,
                {"-c", kWorkers, "worktree", "add", "--quiet", "--detach", path.string(), commit});
    if (!r.ok())
        throw git_failure("cannot add the land's scratch worktree " + quote(path.string()), r);
}

void checkout_scratch(const Repository& repo, const fs::path& path, const std::string& commit) {
    // The scratch is the land's own: what a check changed or left there is nobody's work.
    git_out(*repo.git, path, {"-c", kWorkers, "checkout", "--quiet", "--detach", "--force", commit},
            "cannot check out " + commit.substr(0, 12) + " in the scratch worktree");
    git_out(*repo.git, path, {"clean", "-ffdq"}, "cannot clean the scratch worktree");
}

std::optional<std::string> remove_scratch(const Repository& repo, const fs::path& home,
                                          const fs::path& land_dir, const fs::path& path) {
    if (!under(land_dir, path)) {
        return "not under " + land_dir.string() + ": not a scratch worktree of team land";
    }
    RepoLock lock(home, repo.common_dir);
    std::optional<Worktree> entry;
    for (auto& w : list_worktrees(repo)) {
        if (w.path == path) entry = w;
    }
    std::error_code ec;
    if (!entry) {
        git_run(*repo.git, repo.common_dir, {"worktree", "prune"});
        if (!fs::exists(path, ec)) return std::nullopt;
        return "git does not list " + quote(path.string()) + " as a worktree: it is left as it is";
    }
    if (!entry->detached) {
        return quote(path.string()) + " has a branch checked out: not a land's scratch worktree";
    }
    // Nothing in it is anyone's work: the commits are in the store, the check's output in its
    // shell's file. Cleaned, so that the plain `worktree remove` takes it (team never runs
    // `worktree remove --force`, here neither); a reset only when the check changed a tracked
    // file (a reset of a tree just written rewrites every file: 1.6 s at 10,000 files).
    auto clean = [&] { git_run(*repo.git, path, {"clean", "-ffdxq"}); };
    if (!entry->missing) clean();
    if (entry->locked) git_run(*repo.git, repo.common_dir, {"worktree", "unlock", path.string()});
    GitResult r = git_run(*repo.git, repo.common_dir, {"worktree", "remove", path.string()});
    if (!r.ok() && !entry->missing) {
        git_run(*repo.git, path, {"reset", "--quiet", "--hard"});
        clean();
        r = git_run(*repo.git, repo.common_dir, {"worktree", "remove", path.string()});
    }
    if (!r.ok() && !entry->missing) return "git would not remove it: " + first_line(r.err);
    if (entry->missing) git_run(*repo.git, repo.common_dir, {"worktree", "prune"});
    return std::nullopt;
}

std::optional<TargetCheckout> target_checkout(const Repository& repo, const std::string& into) {
    for (const Worktree& w : list_worktrees(repo)) {
        if (w.branch != into || w.missing || w.bare) continue;
        TargetCheckout out;
        out.path = w.path;
        // Only what the checkout holds of tracked files: untracked ones never hold the target
        // (a walk of every directory, and a count of commits, that this needs not).
        WorktreeStatus s = parse_status(
            git_out(*repo.git, w.path,
                    read_args({"status", "--porcelain=v2", "-z", "--untracked-files=no"}),
                    "cannot read the status of " + quote(w.path.string())));
        if (s.staged || s.modified || s.unmerged) {
            out.dirty = std::to_string(s.staged) + " staged, " + std::to_string(s.modified) +
                        " modified" +
                        (s.unmerged ? ", " + std::to_string(s.unmerged) + " unmerged" : "");
        }
        return out;
    }
    return std::nullopt;
}

TargetMove move_target(const Repository& repo, const fs::path& home, const std::string& into,
                       const std::string& now, const std::string& old, const std::string& reflog) {
    TargetMove out;
    // With every other git write of team's in this repository (a spawn's branch, a snapshot's
    // ref), so that none fails on git's lock files while it moves the target.
    RepoLock lock(home, repo.common_dir);
    auto checkout = target_checkout(repo, into);
    auto moved_meanwhile = [&] { return commit_of(repo, "refs/heads/" + into) != old; };
    if (!checkout) {
        GitResult r = git_run(*repo.git, repo.common_dir,
                              {"update-ref", "-m", reflog, "refs/heads/" + into, now, old});
        if (r.ok()) {
            out.outcome = TargetMove::Outcome::moved;
        } else if (moved_meanwhile()) {
            out.outcome = TargetMove::Outcome::target_moved;
        } else {
            throw git_failure("cannot move " + quote(into), r);
        }
        return out;
    }
    out.checkout = checkout->path;
    if (checkout->dirty) {
        out.why = quote(into) + " is checked out in " + quote(checkout->path.string()) +
                  " with uncommitted work (" + *checkout->dirty +
                  "): it was left as it is, and so was " + quote(into) +
                  "; commit or stash that work and land again";
        return out;
    }
    if (moved_meanwhile()) {
        out.outcome = TargetMove::Outcome::target_moved;
        return out;
    }
    // In the checkout: git moves the files and the branch together, checking the branch's old
    // value as it writes it; a file changed meanwhile that the landing changes makes it refuse
    // with nothing done.
    GitResult r = repo.git->run({.args = {"-c", kWorkers, "merge", "--quiet", "--ff-only",
                                          "--no-autostash", "--no-edit", now},
                                 .cwd = checkout->path,
                                 .env = {{"GIT_REFLOG_ACTION", reflog}}});
    std::string at = commit_of(repo, "refs/heads/" + into);
    if (at == now) {
        out.outcome = TargetMove::Outcome::moved;
    } else if (at != old && at != now) {
        out.outcome = TargetMove::Outcome::target_moved;
    } else {
        out.why = "git would not bring " + quote(checkout->path.string()) + " (on " + quote(into) +
                  ") forward: " + first_line(r.err.empty() ? r.out : r.err) +
                  "; nothing was changed";
    }
    return out;
}

bool is_ancestor(const Repository& repo, const std::string& ancestor, const std::string& commit) {
    return git_run(*repo.git, repo.common_dir, {"merge-base", "--is-ancestor", ancestor, commit})
        .ok();
}

int commits_ahead(const Repository& repo, const std::string& onto, const std::string& tip) {
    GitResult r =
        git_run(*repo.git, repo.common_dir, read_args({"rev-list", "--count", onto + ".." + tip}));
    if (!r.ok()) return 0;
    try {
        return std::stoi(first_line(r.out));
    } catch (const std::exception&) {
        return 0;
    }
}

}  // namespace team::git
