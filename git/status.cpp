#include "git/status.hpp"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <system_error>

#include "git/work_tree.hpp"

namespace team::git {

namespace fs = std::filesystem;

WorktreeStatus parse_status(const std::string& text) {
    WorktreeStatus s;
    std::vector<std::string> fields = split_z(text);
    for (size_t i = 0; i < fields.size(); ++i) {
        const std::string& f = fields[i];
        if (f.rfind("# branch.head ", 0) == 0) {
            std::string head = f.substr(14);
            s.branch = head == "(detached)" ? "" : head;
        } else if (f.rfind("# branch.oid ", 0) == 0) {
            std::string oid = f.substr(13);
            s.head = oid == "(initial)" ? "" : oid;
        } else if (f.size() > 3 && (f[0] == '1' || f[0] == '2') && f[1] == ' ') {
            if (f[2] != '.') ++s.staged;
            if (f[3] != '.') ++s.modified;
            if (f[0] == '2') ++i;  // a rename or copy: its original path is the next field
        } else if (f.rfind("u ", 0) == 0) {
            ++s.unmerged;
        } else if (f.rfind("? ", 0) == 0) {
            ++s.untracked;
        }
    }
    return s;
}

std::pair<int, int> parse_left_right(const std::string& text) {
    char* end = nullptr;
    int left = static_cast<int>(std::strtol(text.c_str(), &end, 10));
    int right = end ? static_cast<int>(std::strtol(end, nullptr, 10)) : 0;
    return {left, right};
}

WorktreeStatus worktree_status(const Repository& repo, const fs::path& path, const std::string& base) {
    std::error_code ec;
    if (!fs::exists(path, ec)) {
        WorktreeStatus s;
        s.missing = true;
        return s;
    }
    WorktreeStatus s = parse_status(git_out(
        *repo.git, path,
        read_args({"status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all"}),
        "cannot read the status of " + quote(path.string())));
    auto [behind, ahead] = parse_left_right(git_out(
        *repo.git, path, read_args({"rev-list", "--left-right", "--count", base + "...HEAD", "--"}),
        "cannot count the commits of " + quote(path.string()) + " against " + quote(base)));
    s.behind = behind;
    s.ahead = ahead;
    return s;
}

MergeCheck parse_merge_tree(const std::string& out, int exit_code) {
    MergeCheck m;
    std::vector<std::string> fields = split_z(out);
    if (!fields.empty()) m.tree = fields[0];
    m.clean = exit_code == 0;
    std::set<std::string> seen;
    for (size_t i = 1; i < fields.size() && !fields[i].empty(); ++i) {
        if (seen.insert(fields[i]).second) m.files.push_back(fields[i]);
    }
    return m;
}

MergeCheck merge_check(const Repository& repo, const std::string& into, const std::string& branch) {
    GitResult r = git_run(*repo.git, repo.common_dir,
                          read_args({"merge-tree", "--write-tree", "--name-only", "--no-messages",
                                     "-z", "--end-of-options", into, branch}));
    if (r.exit_code != 0 && r.exit_code != 1) {
        throw git_failure("cannot check the merge of " + quote(branch) + " into " + quote(into), r);
    }
    return parse_merge_tree(r.out, r.exit_code);
}

std::vector<std::string> changed_files(const Repository& repo, const std::string& base,
                                       const std::string& ref) {
    auto files = split_z(git_out(*repo.git, repo.common_dir,
                                 read_args({"diff", "--name-only", "--no-renames", "-z",
                                            base + "..." + ref, "--"}),
                                 "cannot list the files " + quote(ref) + " changed"));
    std::sort(files.begin(), files.end());
    return files;
}

std::vector<BranchConflict> branch_conflicts(const Repository& repo, const std::string& base,
                                             const std::string& branch,
                                             const std::vector<std::string>& others) {
    std::vector<BranchConflict> out;
    std::vector<std::string> mine = changed_files(repo, base, branch);
    for (const std::string& other : others) {
        if (other == branch) continue;
        std::vector<std::string> theirs = changed_files(repo, base, other);
        std::vector<std::string> both;
        std::set_intersection(mine.begin(), mine.end(), theirs.begin(), theirs.end(),
                              std::back_inserter(both));
        if (both.empty()) continue;  // no file in common: they cannot conflict
        MergeCheck m = merge_check(repo, branch, other);
        if (!m.clean) out.push_back({other, m.files});
    }
    return out;
}

std::string diff(const Repository& repo, const std::string& base, const std::string& branch,
                 bool stat_only) {
    std::vector<std::string> args = {"diff", "--no-color"};
    if (stat_only) args.push_back("--stat");
    args.insert(args.end(), {base + "..." + branch, "--"});
    return git_out(*repo.git, repo.common_dir, read_args(args),
                   "cannot diff " + quote(branch) + " against " + quote(base));
}

std::string diff_wip(const Repository& repo, const fs::path& worktree, bool stat_only) {
    WorkTrees trees = record_work_trees(repo, worktree);
    std::vector<std::string> args = {"diff", "--no-color"};
    if (stat_only) args.push_back("--stat");
    args.insert(args.end(), {trees.head, trees.work, "--"});
    return git_out(*repo.git, worktree, read_args(args),
                   "cannot diff the work in " + quote(worktree.string()));
}

}  // namespace team::git
