// git/ through its seam: the parsers of git's porcelain, the argv of the reads (every one with
// --no-optional-locks) against a strict fake, and the real runner's environment and timeout.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "git/removal.hpp"
#include "git/repository.hpp"
#include "git/runner.hpp"
#include "git/status.hpp"
#include "git/worktrees.hpp"
#include "tests/support/fake_git.hpp"

using namespace team;
using namespace team::git;
using team::test::FakeGit;

namespace {

std::string z(std::initializer_list<std::string> fields) {
    std::string out;
    for (const auto& f : fields) out += f + '\0';
    return out;
}

Repository fake_repo(FakeGit& fake) {
    return Repository{&fake, "/r/.git", "/r"};
}

}  // namespace

TEST_CASE("status --porcelain=v2 is counted: staged, modified, untracked, unmerged", "[git-seam]") {
    std::string text = z({"# branch.oid 1111", "# branch.head team/web/a b",
                          "1 M. N... 100644 100644 100644 aa bb src/staged.txt",
                          "1 .M N... 100644 100644 100644 aa aa src/mod.txt",
                          "1 MM N... 100644 100644 100644 aa bb both.txt",
                          "1 .D N... 100644 100644 000000 aa aa gone.txt",
                          "2 R. N... 100644 100644 100644 aa aa R100 new name.txt", "old name.txt",
                          "u UU N... 100644 100644 100644 100644 aa bb cc conflict.txt",
                          "? untracked one.txt", "? dir/untracked two.txt"});
    WorktreeStatus s = parse_status(text);
    CHECK(s.branch == "team/web/a b");
    CHECK(s.head == "1111");
    CHECK(s.staged == 3);    // staged, both, the rename
    CHECK(s.modified == 3);  // mod, both, gone
    CHECK(s.untracked == 2);
    CHECK(s.unmerged == 1);
    CHECK_FALSE(s.clean());

    WorktreeStatus detached = parse_status(z({"# branch.oid 2222", "# branch.head (detached)"}));
    CHECK(detached.branch.empty());
    CHECK(detached.clean());
}

TEST_CASE("rev-list --left-right --count reads as behind, ahead", "[git-seam]") {
    CHECK(parse_left_right("3\t5\n") == std::pair<int, int>{3, 5});
    CHECK(parse_left_right("0\t0\n") == std::pair<int, int>{0, 0});
}

TEST_CASE("merge-tree's answer names each conflicting file once", "[git-seam]") {
    MergeCheck clean = parse_merge_tree(z({"abc"}), 0);
    CHECK(clean.clean);
    CHECK(clean.tree == "abc");
    CHECK(clean.files.empty());
    MergeCheck conflict = parse_merge_tree(z({"tree1", "a.txt", "b c.txt", "a.txt"}), 1);
    CHECK_FALSE(conflict.clean);
    CHECK(conflict.tree == "tree1");
    CHECK(conflict.files == std::vector<std::string>{"a.txt", "b c.txt"});
}

TEST_CASE("worktree list --porcelain -z: locked, prunable, detached, missing", "[git-seam]") {
    std::string text =
        z({"worktree /", "HEAD aaa", "branch refs/heads/main", "", "worktree /nonexistent/team/a",
           "HEAD bbb", "branch refs/heads/team/web/a", "locked team:web/a", "",
           "worktree /nonexistent/b", "HEAD ccc", "detached",
           "prunable gitdir file points to non-existent location", ""});
    auto list = parse_worktree_list(text);
    REQUIRE(list.size() == 3);
    CHECK(list[0].main);
    CHECK(list[0].branch == "main");
    CHECK_FALSE(list[0].missing);
    CHECK(list[1].locked);
    CHECK(list[1].lock_reason == "team:web/a");
    CHECK(list[1].branch == "team/web/a");
    CHECK(list[1].missing);
    CHECK_FALSE(list[1].prunable);
    CHECK(list[2].detached);
    CHECK(list[2].prunable);
    CHECK(list[2].branch.empty());
}

TEST_CASE("git's version is read and 2.38 is required", "[git-seam]") {
    CHECK(parse_git_version("git version 2.39.5\n").at_least(2, 38));
    CHECK_FALSE(parse_git_version("git version 2.37.1\n").at_least(2, 38));
    CHECK(parse_git_version("git version 3.0.0").at_least(2, 38));
    CHECK_FALSE(parse_git_version("nonsense").at_least(2, 38));

    FakeGit fake;
    fake.expect({"--version"}, "", {0, "git version 2.30.2\n", ""});
    CHECK_THROWS_WITH(require_git_version(fake),
                      Catch::Contains("2.38") && Catch::Contains("2.30.2"));
}

TEST_CASE("a worktree's status is two reads, both without optional locks", "[git-seam]") {
    FakeGit fake;
    Repository repo = fake_repo(fake);
    fake.expect({"--no-optional-locks", "status", "--porcelain=v2", "-z", "--branch",
                 "--untracked-files=all"},
                "/", {0, z({"# branch.oid 1", "# branch.head team/web/a", "? x"}), ""});
    fake.expect({"--no-optional-locks", "rev-list", "--left-right", "--count", "base...HEAD", "--"},
                "/", {0, "1\t4\n", ""});
    WorktreeStatus s = worktree_status(repo, "/", "base");
    CHECK(s.ahead == 4);
    CHECK(s.behind == 1);
    CHECK(s.untracked == 1);
    CHECK(fake.done());
}

TEST_CASE("a directory that is gone is missing, and git is not asked", "[git-seam]") {
    FakeGit fake;
    Repository repo = fake_repo(fake);
    CHECK(worktree_status(repo, "/nonexistent/worktree", "main").missing);
    CHECK(fake.calls().empty());
}

TEST_CASE("branch conflicts are checked only for branches whose files overlap", "[git-seam]") {
    FakeGit fake;
    Repository repo = fake_repo(fake);
    auto names = [](std::initializer_list<std::string> f) { return git::GitResult{0, z(f), ""}; };
    fake.expect({"--no-optional-locks", "diff", "--name-only", "--no-renames", "-z", "B...a", "--"},
                "/r/.git", names({"x.txt", "y.txt"}));
    fake.expect({"--no-optional-locks", "diff", "--name-only", "--no-renames", "-z", "B...b", "--"},
                "/r/.git", names({"z.txt"}));  // no overlap: merge-tree is not asked
    fake.expect({"--no-optional-locks", "diff", "--name-only", "--no-renames", "-z", "B...c", "--"},
                "/r/.git", names({"y.txt"}));
    fake.expect({"--no-optional-locks", "merge-tree", "--write-tree", "--name-only",
                 "--no-messages", "-z", "--end-of-options", "a", "c"},
                "/r/.git", {1, z({"t", "y.txt"}), ""});
    auto conflicts = branch_conflicts(repo, "B", "a", {"a", "b", "c"});
    REQUIRE(conflicts.size() == 1);
    CHECK(conflicts[0].other == "c");
    CHECK(conflicts[0].files == std::vector<std::string>{"y.txt"});
    CHECK(fake.done());
}

TEST_CASE("merge-tree failing otherwise than by a conflict is an error, not a conflict",
          "[git-seam]") {
    FakeGit fake;
    Repository repo = fake_repo(fake);
    fake.expect({"--no-optional-locks", "merge-tree", "--write-tree", "--name-only",
                 "--no-messages", "-z", "--end-of-options", "main", "nope"},
                "/r/.git", {128, "", "fatal: nope - not something we can merge\n"});
    CHECK_THROWS_WITH(merge_check(repo, "main", "nope"),
                      Catch::Contains("not something we can merge"));
}

TEST_CASE("the main worktree is never removable", "[git-seam]") {
    FakeGit fake;
    Repository repo = fake_repo(fake);
    Worktree main;
    main.path = "/r";
    main.main = true;
    RemovalCheck c = check_removal(repo, main, "main");
    CHECK_FALSE(c.removable());
    CHECK(fake.calls().empty());
}

TEST_CASE("git runs with the caller's GIT_DIR, GIT_INDEX_FILE and GIT_WORK_TREE dropped",
          "[git-seam][git]") {
    ::setenv("GIT_DIR", "/nonexistent/elsewhere", 1);
    ::setenv("GIT_INDEX_FILE", "/nonexistent/index", 1);
    ::setenv("GIT_WORK_TREE", "/nonexistent", 1);
    ::setenv("GIT_CONFIG_KEY_0", "user.name", 1);
    auto env = clean_git_environment();
    ::unsetenv("GIT_DIR");
    ::unsetenv("GIT_INDEX_FILE");
    ::unsetenv("GIT_WORK_TREE");
    ::unsetenv("GIT_CONFIG_KEY_0");
    for (const auto& e : env) {
        CHECK(e.rfind("GIT_DIR=", 0) != 0);
        CHECK(e.rfind("GIT_INDEX_FILE=", 0) != 0);
        CHECK(e.rfind("GIT_WORK_TREE=", 0) != 0);
        CHECK(e.rfind("GIT_CONFIG_KEY_0=", 0) != 0);
    }
    CHECK(std::find(env.begin(), env.end(), "GIT_TERMINAL_PROMPT=0") != env.end());

    // The call's own additions reach git, and a call past its timeout is ended.
    GitProcess real;
    GitResult var = real.run({.args = {"var", "GIT_COMMITTER_IDENT"},
                              .cwd = "/",
                              .env = {{"GIT_COMMITTER_NAME", "Seam Check"},
                                      {"GIT_COMMITTER_EMAIL", "seam@example.com"}}});
    REQUIRE(var.ok());
    CHECK(var.out.rfind("Seam Check <seam@example.com>", 0) == 0);
    CHECK(require_git_version(real).at_least(2, 38));
    GitResult hashed = real.run({.args = {"hash-object", "--stdin"}, .cwd = "/", .input = "x\n"});
    CHECK(first_line(hashed.out) == "587be6b4c3f93f93c489c0111bba5596147a26cb");
    GitResult cut = real.run({.args = {"-c", "alias.slow=!sleep 3", "slow"},
                              .cwd = "/",
                              .timeout = std::chrono::milliseconds(200)});
    CHECK(cut.exit_code == 124);
}

TEST_CASE(
    "the real runner: input larger than a pipe, a directory that is not there, threads at once",
    "[git][git-seam]") {
    GitProcess real;
    // More input than a pipe holds (64 KiB): written while git reads it.
    std::string big(300'000, 'x');
    big += '\n';
    GitResult hashed = real.run({.args = {"hash-object", "--stdin"}, .cwd = "/", .input = big});
    REQUIRE(hashed.ok());
    CHECK(hashed.out.size() == 41);
    // Input that git never reads does not hold the call up, nor end this process (SIGPIPE).
    GitResult unread = real.run({.args = {"--version"}, .cwd = "/", .input = big});
    CHECK(unread.ok());
    // A directory that is not there: git is not started, and the result says why.
    GitResult nowhere = real.run({.args = {"--version"}, .cwd = "/nonexistent/team-test"});
    CHECK(nowhere.exit_code == 126);
    CHECK(nowhere.err.find("/nonexistent/team-test") != std::string::npos);
    // Git's own failure is its exit code and its stderr.
    GitResult failed = real.run({.args = {"rev-parse", "--git-dir"}, .cwd = "/"});
    CHECK(failed.exit_code == 128);
    CHECK(failed.err.find("not a git repository") != std::string::npos);
    // Several threads start git at once (the look does, team/worktrees.cpp), under the
    // sanitizers too: the child runs nothing of ours before exec.
    std::vector<std::thread> threads;
    std::atomic<int> good{0};
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&] {
            GitProcess mine;
            for (int i = 0; i < 10; ++i) {
                GitResult r = mine.run({.args = {"--version"}, .cwd = "/"});
                if (r.ok() && r.out.rfind("git version", 0) == 0) ++good;
            }
        });
    }
    for (auto& t : threads) t.join();
    CHECK(good == 40);
}
