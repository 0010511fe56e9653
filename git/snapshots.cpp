#include "git/snapshots.hpp"

#include <algorithm>
#include <cstdlib>
#include <system_error>

#include "git/repo_lock.hpp"
#include "git/status.hpp"
#include "git/work_tree.hpp"

namespace team::git {

namespace fs = std::filesystem;

namespace {

// The paths of a tree diff: {added, changed or deleted}.
std::pair<int, int> count_diff(Git& git, const fs::path& cwd, const std::string& from,
                               const std::string& to) {
    if (from == to) return {0, 0};
    auto fields = split_z(git_out(
        git, cwd, read_args({"diff-tree", "-r", "--no-renames", "--name-status", "-z", from, to}),
        "cannot compare the recorded trees"));
    int added = 0, other = 0;
    for (size_t i = 0; i + 1 < fields.size(); i += 2) {
        (fields[i] == "A" ? added : other)++;
    }
    return {added, other};
}

// Submodules whose own work (commits not recorded, changes, untracked files) a snapshot of the
// superproject cannot keep: `S` entries of status --porcelain=v2 with a flag set.
std::vector<std::string> dirty_submodules(Git& git, const fs::path& worktree) {
    std::vector<std::string> out;
    std::error_code ec;
    if (!fs::exists(worktree / ".gitmodules", ec)) return out;
    auto fields = split_z(git_out(git, worktree,
                                  read_args({"status", "--porcelain=v2", "-z",
                                             "--untracked-files=no", "--ignore-submodules=none"}),
                                  "cannot read the submodules' status"));
    for (size_t i = 0; i < fields.size(); ++i) {
        const std::string& f = fields[i];
        if (f.size() < 12 || (f[0] != '1' && f[0] != '2')) continue;
        // "1 XY SUB ..." where SUB is "S<c><m><u>" for a submodule.
        std::string sub = f.substr(5, 4);
        if (sub[0] == 'S' && (sub[1] == 'C' || sub[2] == 'M' || sub[3] == 'U')) {
            // The path is the last space-separated field of a "1" entry (paths have no NUL).
            int spaces = f[0] == '1' ? 8 : 9;
            size_t pos = 0;
            for (int s = 0; s < spaces && pos != std::string::npos; ++s) pos = f.find(' ', pos + 1);
            if (pos != std::string::npos) out.push_back(f.substr(pos + 1));
        }
        if (f[0] == '2') ++i;
    }
    return out;
}

std::string message_of(const std::string& team, const std::string& agent, const Snapshot& s) {
    std::string m = "team snapshot of " + team + "/" + agent + " on " + s.head + "\n";
    if (s.partial) m += "\n" + s.note + "\n";
    if (!s.ignored.empty()) {
        m += "\nignored files, not stored:\n";
        size_t shown = std::min<size_t>(s.ignored.size(), 200);
        for (size_t i = 0; i < shown; ++i) m += "  " + s.ignored[i] + "\n";
        if (shown < s.ignored.size()) {
            m += "  ... and " + std::to_string(s.ignored.size() - shown) + " more\n";
        }
    }
    return m;
}

}  // namespace

std::string snapshot_prefix(const std::string& team, const std::string& agent) {
    return "refs/team/snapshots/" + team + "/" + agent + "/";
}

std::vector<std::string> list_snapshots(const Repository& repo, const std::string& team,
                                        const std::string& agent) {
    std::string prefix = snapshot_prefix(team, agent);
    auto refs = split_lines(git_out(*repo.git, repo.common_dir,
                                    read_args({"for-each-ref", "--format=%(refname)", prefix}),
                                    "cannot list the snapshots of " + quote(team + "/" + agent)));
    auto number = [&](const std::string& ref) {
        return std::strtol(ref.c_str() + prefix.size(), nullptr, 10);
    };
    std::sort(refs.begin(), refs.end(),
              [&](const std::string& a, const std::string& b) { return number(a) < number(b); });
    return refs;
}

Snapshot take_snapshot(const Repository& repo, const fs::path& home, const std::string& team,
                       const std::string& agent, const fs::path& worktree) {
    Git& git = *repo.git;
    WorkTrees trees = record_work_trees(repo, worktree);
    Snapshot s;
    s.head = trees.head;
    s.unmerged = trees.unmerged;
    s.partial = !trees.unmerged.empty();
    if (s.partial) {
        s.note =
            "a merge was in progress: the unmerged files are kept as they are on disk, "
            "staged at HEAD's version; the merge's other side is not recorded";
    }
    auto [staged_added, staged_changed] = count_diff(git, worktree, trees.head_tree, trees.index);
    s.staged = staged_added + staged_changed;
    auto [added, changed] = count_diff(git, worktree, trees.index, trees.work);
    s.untracked = added;
    s.modified = changed;
    s.ignored = split_z(git_out(
        git, worktree,
        read_args({"ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"}),
        "cannot list the ignored files"));
    s.submodules_not_recorded = dirty_submodules(git, worktree);
    if (!s.submodules_not_recorded.empty()) {
        if (!s.note.empty()) s.note += "; ";
        s.note += "submodules with work of their own are recorded at their HEAD only";
    }
    if (trees.index == trees.head_tree && trees.work == trees.index) return s;  // nothing to keep

    std::string where = " in " + quote(worktree.string());
    auto commit = [&](const std::string& tree, std::vector<std::string> parents,
                      const std::string& message) {
        std::vector<std::string> args = {"commit-tree", "--no-gpg-sign", tree};
        for (auto& p : parents) args.insert(args.end(), {"-p", p});
        args.insert(args.end(), {"-F", "-"});
        GitResult r =
            git.run({.args = args, .cwd = worktree, .env = team_identity(), .input = message});
        if (!r.ok()) throw git_failure("cannot record the snapshot" + where, r);
        return first_line(r.out);
    };
    std::string index_commit = commit(trees.index, {trees.head},
                                      "index of the team snapshot of " + team + "/" + agent + "\n");
    s.commit = commit(trees.work, {trees.head, index_commit}, message_of(team, agent, s));

    // N: one more than the highest; create-only, under the lock, so two stops never share one.
    RepoLock lock(home, repo.common_dir);
    auto refs = list_snapshots(repo, team, agent);
    long next = 1;
    if (!refs.empty()) {
        next =
            std::strtol(refs.back().c_str() + snapshot_prefix(team, agent).size(), nullptr, 10) + 1;
    }
    // A number whose ref a git killed mid-write left locked is skipped, not fought over.
    std::error_code ec;
    while (fs::exists(
        repo.common_dir / (snapshot_prefix(team, agent) + std::to_string(next) + ".lock"), ec)) {
        ++next;
    }
    s.ref = snapshot_prefix(team, agent) + std::to_string(next);
    git_out(git, repo.common_dir, {"update-ref", "-m", "team snapshot", s.ref, s.commit, ""},
            "cannot store the snapshot " + quote(s.ref));
    s.taken = true;
    return s;
}

void restore_snapshot(const Repository& repo, const fs::path& home, const fs::path& worktree,
                      const std::string& ref) {
    Git& git = *repo.git;
    std::string commit = commit_of(repo, ref);
    if (commit.empty() || commit_of(repo, ref + "^2").empty()) {
        throw GitError(ErrorCode::not_found, GitErrorKind::bad_ref,
                       "no snapshot named " + quote(ref));
    }
    RepoLock lock(home, repo.common_dir);
    WorktreeStatus status = worktree_status(repo, worktree, "HEAD");
    if (status.missing) {
        throw GitError(ErrorCode::not_found, GitErrorKind::missing,
                       "the worktree " + quote(worktree.string()) + " is missing");
    }
    if (!status.clean()) {
        throw GitError(ErrorCode::refused, GitErrorKind::dirty,
                       "the worktree " + quote(worktree.string()) +
                           " has uncommitted work or untracked files: a snapshot is restored "
                           "only into a clean tree (take a snapshot of this work first)");
    }
    GitResult r =
        git.run({.args = {"stash", "apply", "--index", "--quiet", commit}, .cwd = worktree});
    if (!r.ok())
        throw git_failure("cannot restore " + quote(ref) + " in " + quote(worktree.string()), r);
    // The files that were untracked (in W, not in the staged tree I) go back untracked: when
    // nothing was staged, `stash apply` adds W's new files to the index.
    std::string untracked = git_out(git, worktree,
                                    read_args({"diff-tree", "-r", "--no-renames", "--name-only",
                                               "--diff-filter=A", "-z", commit + "^2", commit}),
                                    "cannot list the untracked files of " + quote(ref));
    if (!untracked.empty()) {
        GitResult u = git.run({.args = {"rm", "--cached", "--quiet", "--ignore-unmatch",
                                        "--pathspec-from-file=-", "--pathspec-file-nul"},
                               .cwd = worktree,
                               .env = {{"GIT_LITERAL_PATHSPECS", "1"}},
                               .input = untracked});
        if (!u.ok()) {
            throw git_failure("cannot leave the untracked files of " + quote(ref) + " untracked",
                              u);
        }
    }
}

}  // namespace team::git
