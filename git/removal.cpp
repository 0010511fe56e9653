#include "git/removal.hpp"

#include <chrono>
#include <fstream>
#include <iterator>
#include <sstream>
#include <system_error>

#include "git/repo_lock.hpp"
#include "git/snapshots.hpp"

namespace team::git {

namespace fs = std::filesystem;

namespace {

std::string read_small_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// git's record of the worktree at `path`: the directory under <common>/worktrees/ whose
// `gitdir` file names `path`/.git; empty when there is none.
fs::path admin_dir_of(const Repository& repo, const fs::path& path) {
    std::error_code ec;
    fs::path wanted = path / ".git";
    for (const auto& entry : fs::directory_iterator(repo.common_dir / "worktrees", ec)) {
        std::string gitdir = first_line(read_small_file(entry.path() / "gitdir"));
        if (!gitdir.empty() && fs::path(gitdir).lexically_normal() == wanted.lexically_normal()) {
            return entry.path();
        }
    }
    return {};
}

}  // namespace

std::string merged_as(const Repository& repo, const std::string& base, const std::string& branch) {
    Git& git = *repo.git;
    if (git_run(git, repo.common_dir, {"merge-base", "--is-ancestor", branch, base}).ok()) {
        return "ancestor";
    }
    GitResult cherry = git_run(git, repo.common_dir, read_args({"cherry", base, branch}));
    if (cherry.ok()) {
        bool all_there = true;
        for (const std::string& line : split_lines(cherry.out)) {
            if (line[0] != '-') all_there = false;
        }
        if (all_there) return "patch-equivalent";
    }
    MergeCheck m = merge_check(repo, base, branch);
    if (m.clean &&
        m.tree == first_line(git_out(git, repo.common_dir, {"rev-parse", base + "^{tree}"},
                                     "cannot read the tree of " + quote(base)))) {
        return "content";
    }
    return "";
}

namespace {

// Whether both are regular files (not links) with the same bytes.
bool same_file_content(const fs::path& a, const fs::path& b) {
    std::error_code ec;
    if (!fs::is_regular_file(fs::symlink_status(a, ec)) ||
        !fs::is_regular_file(fs::symlink_status(b, ec)) ||
        fs::file_size(a, ec) != fs::file_size(b, ec) || ec) {
        return false;
    }
    std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
    std::string ca((std::istreambuf_iterator<char>(fa)), std::istreambuf_iterator<char>());
    std::string cb((std::istreambuf_iterator<char>(fb)), std::istreambuf_iterator<char>());
    return fa.good() || fa.eof() ? ca == cb : false;
}

}  // namespace

RemovalCheck check_removal(const Repository& repo, const Worktree& w, const std::string& base) {
    Git& git = *repo.git;
    RemovalCheck c;
    if (w.main) {
        c.reasons.push_back("it is the repository's main worktree");
        return c;
    }
    c.status = worktree_status(repo, w.path, base);
    if (c.status.missing) {
        c.reasons.push_back("its directory is missing (its branch and snapshots are kept)");
        return c;
    }
    if (!c.status.clean()) {
        c.reasons.push_back("it has uncommitted work: " + std::to_string(c.status.staged) +
                            " staged, " + std::to_string(c.status.modified) + " modified, " +
                            std::to_string(c.status.untracked) + " untracked, " +
                            std::to_string(c.status.unmerged) + " unmerged");
    }
    c.ignored = split_z(git_out(
        git, w.path,
        read_args({"ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"}),
        "cannot list the ignored files of " + quote(w.path.string())));
    // A file that is a byte-identical copy of the main checkout's (a `.env` that
    // .worktreeinclude copied in) loses nothing when it goes.
    std::erase_if(c.ignored, [&](const std::string& rel) {
        return !rel.empty() && rel.back() != '/' && !repo.main_checkout.empty() &&
               same_file_content(w.path / rel, repo.main_checkout / rel);
    });
    if (!c.ignored.empty()) {
        c.reasons.push_back("it holds ignored files git would delete, such as " +
                            quote(c.ignored[0]));
    }
    if (c.status.branch.empty()) {
        GitResult unheld =
            git_run(git, w.path, read_args({"rev-list", "-n", "1", "HEAD", "--not", "--branches"}));
        c.detached_unheld = !unheld.ok() || !unheld.out.empty();
        if (c.detached_unheld) {
            c.reasons.push_back("its HEAD is detached on commits no branch holds");
        }
    } else {
        c.merged_as = merged_as(repo, base, c.status.branch);
        if (c.merged_as.empty()) {
            c.reasons.push_back("its branch " + quote(c.status.branch) + " has commits not in " +
                                quote(base));
        }
    }
    return c;
}

void remove_worktree(const Repository& repo, const fs::path& home, const Worktree& w,
                     const std::string& base) {
    Git& git = *repo.git;
    RepoLock lock(home, repo.common_dir);
    RemovalCheck c = check_removal(repo, w, base);
    if (!c.removable()) {
        std::string why;
        for (const auto& r : c.reasons) why += (why.empty() ? "" : "; ") + r;
        throw GitError(ErrorCode::refused, GitErrorKind::dirty,
                       "the worktree " + quote(w.path.string()) + " is kept: " + why);
    }
    std::string branch_commit = c.status.head;
    if (w.locked) {
        git_out(git, repo.common_dir, {"worktree", "unlock", w.path.string()},
                "cannot unlock the worktree " + quote(w.path.string()));
    }
    GitResult removed = git_run(git, repo.common_dir, {"worktree", "remove", w.path.string()});
    if (!removed.ok()) {
        if (w.locked) {  // put the lock back: git refused, the worktree stays as it was
            git_run(git, repo.common_dir,
                    {"worktree", "lock", "--reason", w.lock_reason, w.path.string()});
        }
        throw git_failure("git refused to remove " + quote(w.path.string()), removed);
    }
    if (!c.status.branch.empty() && !c.merged_as.empty()) {
        // Only the commit we checked: a branch that moved meanwhile is kept.
        git_run(git, repo.common_dir,
                {"update-ref", "-d", "refs/heads/" + c.status.branch, branch_commit});
    }
}

Discarded discard_worktree(const Repository& repo, const fs::path& home, const std::string& team,
                           const std::string& agent, const Worktree& w, const fs::path& trash_dir) {
    if (w.main)
        throw refused("the main worktree " + quote(w.path.string()) + " is never discarded");
    Discarded d;
    if (!w.missing) {
        Snapshot s = take_snapshot(repo, home, team, agent, w.path);
        d.snapshot_ref = s.ref;
    }
    fs::path admin = admin_dir_of(repo, w.path);
    RepoLock lock(home, repo.common_dir);
    auto stamp = std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
    d.trash_path = trash_dir / (team + "-" + agent + "-" + std::to_string(stamp));
    fs::create_directories(d.trash_path);
    // The directory (same filesystem: both under the home), then git's record of it, which
    // holds its index: moved, never deleted. The branch is untouched.
    if (!w.missing) fs::rename(w.path, d.trash_path / "worktree");
    if (!admin.empty()) fs::rename(admin, d.trash_path / "git-admin");
    return d;
}

std::vector<GcEntry> gc_worktrees(const Repository& repo, const fs::path& home,
                                  const std::string& team, const std::string& base, bool dry_run) {
    std::vector<GcEntry> out;
    const std::string ours = "team:" + team + "/";
    for (const Worktree& w : list_worktrees(repo)) {
        if (!w.locked || w.lock_reason.rfind(ours, 0) != 0) continue;
        GcEntry e{w, false, {}};
        RemovalCheck c = check_removal(repo, w, base);
        if (!c.removable()) {
            e.kept_because = c.reasons;
        } else if (dry_run) {
            e.removed = true;
        } else {
            try {
                remove_worktree(repo, home, w, base);
                e.removed = true;
            } catch (const Error& err) {
                e.kept_because.push_back(err.what());
            }
        }
        out.push_back(std::move(e));
    }
    return out;
}

}  // namespace team::git
