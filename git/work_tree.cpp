#include "git/work_tree.hpp"

#include <unistd.h>

#include <atomic>
#include <set>
#include <system_error>

namespace team::git {

namespace fs = std::filesystem;

namespace {

// A temporary index in the worktree's git directory, removed (with a lock git left) when done.
class TempIndex {
  public:
    TempIndex(const fs::path& git_dir, const char* tag) {
        static std::atomic<unsigned> counter{0};
        path_ = git_dir / ("team-index-" + std::to_string(::getpid()) + "-" +
                           std::to_string(counter++) + "-" + tag);
    }
    ~TempIndex() {
        std::error_code ec;
        fs::remove(path_, ec);
        fs::remove(path_.string() + ".lock", ec);
    }
    TempIndex(const TempIndex&) = delete;
    TempIndex& operator=(const TempIndex&) = delete;
    const fs::path& path() const { return path_; }
    std::vector<std::pair<std::string, std::string>> env() const {
        return {{"GIT_INDEX_FILE", path_.string()}};
    }

  private:
    fs::path path_;
};

std::string must(Git& git, GitCall call, const std::string& what) {
    GitResult r = git.run(call);
    if (!r.ok()) throw git_failure(what, r);
    return r.out;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> team_identity() {
    return {{"GIT_AUTHOR_NAME", "team"},
            {"GIT_AUTHOR_EMAIL", "team@localhost"},
            {"GIT_COMMITTER_NAME", "team"},
            {"GIT_COMMITTER_EMAIL", "team@localhost"}};
}

WorkTrees record_work_trees(const Repository& repo, const fs::path& worktree) {
    Git& git = *repo.git;
    std::error_code ec;
    if (!fs::is_directory(worktree, ec)) {
        throw GitError(ErrorCode::not_found, GitErrorKind::missing,
                       "the worktree " + quote(worktree.string()) + " is missing");
    }
    const std::string where = " in " + quote(worktree.string());
    auto lines = split_lines(git_out(git, worktree,
                                     {"rev-parse", "--path-format=absolute", "--git-dir",
                                      "--git-path", "index", "HEAD", "HEAD^{tree}"},
                                     "cannot read HEAD" + where));
    if (lines.size() < 4) throw failed("cannot read HEAD" + where + ": unexpected rev-parse output");
    WorkTrees t;
    t.git_dir = lines[0];
    fs::path index_file = lines[1];
    t.head = lines[2];
    t.head_tree = lines[3];

    // The staged tree, from a copy of the agent's index (git replaces the index by a rename, so
    // the copy is one whole version of it).
    TempIndex staged(t.git_dir, "staged");
    if (fs::exists(index_file, ec)) {
        fs::copy_file(index_file, staged.path(), fs::copy_options::overwrite_existing);
    } else {
        must(git, {.args = {"read-tree", "HEAD"}, .cwd = worktree, .env = staged.env()},
             "cannot read HEAD into a temporary index" + where);
    }
    GitResult wrote = git.run({.args = {"write-tree"}, .cwd = worktree, .env = staged.env()});
    if (!wrote.ok()) {
        // Unmerged entries (a merge in progress): put HEAD's version of those paths in their
        // place, in the temporary index only.
        auto entries = split_z(must(git,
                                    {.args = {"ls-files", "--unmerged", "-z"},
                                     .cwd = worktree, .env = staged.env()},
                                    "cannot list the unmerged paths" + where));
        std::set<std::string> paths;
        for (const std::string& e : entries) {
            auto tab = e.find('\t');
            if (tab != std::string::npos) paths.insert(e.substr(tab + 1));
        }
        if (paths.empty()) throw git_failure("cannot write the staged tree" + where, wrote);
        std::string removal;
        std::vector<std::string> ls_tree = {"ls-tree", "-z", "--full-tree", "HEAD", "--"};
        for (const std::string& p : paths) {
            removal += p + '\0';
            ls_tree.push_back(":(literal)" + p);
            t.unmerged.push_back(p);
        }
        must(git,
             {.args = {"update-index", "-z", "--force-remove", "--stdin"}, .cwd = worktree,
              .env = staged.env(), .input = removal},
             "cannot set the unmerged paths aside" + where);
        std::string at_head = must(git, {.args = ls_tree, .cwd = worktree},
                                   "cannot read HEAD's version of the unmerged paths" + where);
        must(git,
             {.args = {"update-index", "-z", "--index-info"}, .cwd = worktree,
              .env = staged.env(), .input = at_head},
             "cannot stage HEAD's version of the unmerged paths" + where);
        wrote = git.run({.args = {"write-tree"}, .cwd = worktree, .env = staged.env()});
        if (!wrote.ok()) throw git_failure("cannot write the staged tree" + where, wrote);
    }
    t.index = first_line(wrote.out);

    // The working tree: everything git does not ignore, as it is on disk.
    TempIndex work(t.git_dir, "work");
    fs::copy_file(staged.path(), work.path(), fs::copy_options::overwrite_existing);
    must(git,
         {.args = {"add", "--all", "--ignore-errors", "--", ":/"}, .cwd = worktree,
          .env = work.env()},
         "cannot record the working files" + where);
    t.work = first_line(must(git, {.args = {"write-tree"}, .cwd = worktree, .env = work.env()},
                             "cannot write the working tree" + where));
    return t;
}

}  // namespace team::git
