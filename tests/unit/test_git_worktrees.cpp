// git/ on real repositories: finding a repository and a base, adding agents' worktrees under
// the repository's lock (refusals that make nothing, 32 at once), .worktreeinclude, the list.
#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "git/repo_lock.hpp"
#include "git/worktrees.hpp"
#include "tests/support/git_repo.hpp"

using namespace team;
using namespace team::git;
using team::test::git_ok;
using team::test::git_try;
using team::test::TestRepo;
using team::test::write_file;
namespace fs = std::filesystem;

namespace {

AddResult add(TestRepo& r, const std::string& agent, const std::string& branch = "",
              bool reuse = false) {
    RepoLock lock(r.home, r.repo.common_dir);
    AddRequest req{r.home / "worktrees" / ("web " + agent), "web", agent, branch,
                   resolve_base(r.repo), reuse};
    return add_worktree(r.repo, req);
}

template <typename F>
GitErrorKind kind_of(F&& f) {
    try {
        f();
    } catch (const GitError& e) {
        return e.kind();
    }
    FAIL("no GitError was thrown");
    return GitErrorKind::git_failed;
}

}  // namespace

TEST_CASE("a path in no repository and a repository with no commit are refused by kind", "[git]") {
    TestRepo empty(false);
    GitProcess git;
    CHECK(kind_of([&] { resolve_base(empty.repo); }) == GitErrorKind::no_commit);
    CHECK(kind_of([&] { resolve_repository(git, empty.tmp.path()); }) == GitErrorKind::no_repository);
    try {
        resolve_repository(git, empty.tmp.path());
    } catch (const GitError& e) {
        CHECK(e.code() == ErrorCode::usage);
        CHECK(std::string(e.what()).find("is in no git repository") != std::string::npos);
    }
    CHECK_THROWS_AS(resolve_repository(git, empty.tmp.path() / "nonexistent"), Error);

    TestRepo r;
    CHECK(kind_of([&] { resolve_base(r.repo, "no-such-ref"); }) == GitErrorKind::bad_ref);
    Base base = resolve_base(r.repo);
    CHECK(base.commit == r.head());
    CHECK(base.name == "main");
    CHECK(r.repo.main_checkout == fs::canonical(r.dir));
    // From a subdirectory and from a linked worktree, the same repository.
    CHECK(resolve_repository(git, r.dir / "src").common_dir == r.repo.common_dir);
}

TEST_CASE("an agent's worktree: its branch, locked with its reason, .worktreeinclude copied",
          "[git]") {
    TestRepo r;
    write_file(r.dir / ".env", "SECRET=1\n");
    write_file(r.dir / "build/out.o", "binary\n");
    write_file(r.dir / ".worktreeinclude", ".env\nnot-ignored.txt\n");
    write_file(r.dir / "not-ignored.txt", "untracked but not ignored\n");
    auto before = team::test::fingerprint(r.dir);

    AddResult a = add(r, "alice");
    CHECK(a.branch_created);
    CHECK(a.worktree.branch == "team/web/alice");
    CHECK(a.worktree.locked);
    CHECK(a.worktree.lock_reason == "team:web/alice");
    CHECK(a.worktree.path == r.home / "worktrees" / "web alice");
    CHECK(a.worktree.head == r.head());
    CHECK(a.included == std::vector<std::string>{".env"});
    CHECK(team::test::slurp(a.worktree.path / ".env") == "SECRET=1\n");
    CHECK_FALSE(fs::exists(a.worktree.path / "not-ignored.txt"));
    CHECK_FALSE(fs::exists(a.worktree.path / "build"));
    // No upstream was set up for the new branch.
    CHECK_FALSE(git_try(r.dir, {"config", "branch.team/web/alice.merge"}).ok());
    // A locked worktree survives plain removal and prune.
    CHECK_FALSE(git_try(r.dir, {"worktree", "remove", a.worktree.path.string()}).ok());
    CHECK(team::test::fingerprint(r.dir) == before);
}

TEST_CASE("refusals make nothing: branch taken, checked out elsewhere, bad name, path taken",
          "[git]") {
    TestRepo r;
    add(r, "alice");
    std::string refs_before = r.git({"for-each-ref"});
    std::string list_before = r.git({"worktree", "list", "--porcelain"});

    // The branch is checked out in alice's worktree: the message says where.
    try {
        add(r, "bob", "team/web/alice", true);
        FAIL("no refusal");
    } catch (const GitError& e) {
        CHECK(e.kind() == GitErrorKind::branch_checked_out);
        CHECK(std::string(e.what()).find("web alice") != std::string::npos);
    }
    r.git({"branch", "feature/x"});
    refs_before = r.git({"for-each-ref"});
    CHECK(kind_of([&] { add(r, "bob", "feature/x"); }) == GitErrorKind::branch_exists);
    CHECK(kind_of([&] { add(r, "bob", "bad..name"); }) == GitErrorKind::bad_branch);
    CHECK(kind_of([&] { add(r, "bob", "-x"); }) == GitErrorKind::bad_branch);
    write_file(r.home / "worktrees" / "web carol" / "file", "x");
    CHECK(kind_of([&] { add(r, "carol"); }) == GitErrorKind::path_taken);
    CHECK(r.git({"for-each-ref"}) == refs_before);
    CHECK(r.git({"worktree", "list", "--porcelain"}) == list_before);
    CHECK_FALSE(fs::exists(r.home / "worktrees" / "web bob"));

    // With reuse, an existing branch that is checked out nowhere is taken as it is.
    AddResult reused = add(r, "bob", "feature/x", true);
    CHECK_FALSE(reused.branch_created);
    CHECK(reused.worktree.branch == "feature/x");
}

TEST_CASE("branch names with quotes and unicode, paths with spaces", "[git]") {
    TestRepo r;
    AddResult a = add(r, "dave", "team/web/dävë's-\"fix\"");
    CHECK(a.worktree.branch == "team/web/dävë's-\"fix\"");
    CHECK(fs::exists(a.worktree.path / "src" / "a.txt"));
    auto listed = list_worktrees(r.repo);
    REQUIRE(listed.size() == 2);
    CHECK(listed[1].branch == "team/web/dävë's-\"fix\"");
    CHECK(listed[1].path == a.worktree.path);
    // A space is the one thing of these git refuses in a branch name: refused, nothing made.
    CHECK(kind_of([&] { add(r, "eve", "team/web/with space"); }) == GitErrorKind::bad_branch);
    CHECK_FALSE(fs::exists(r.home / "worktrees" / "web eve"));
}

TEST_CASE("32 worktrees added at once all succeed, with no orphan branch", "[git]") {
    TestRepo r;
    // A remote-tracking base: without --no-track, parallel adds fight over .git/config.lock.
    r.git({"update-ref", "refs/remotes/origin/main", r.head()});
    Base base = resolve_base(r.repo, "origin/main");
    constexpr int kCount = 32;
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < kCount; ++i) {
        threads.emplace_back([&, i] {
            try {
                GitProcess git;
                Repository repo = r.repo;
                repo.git = &git;
                RepoLock lock(r.home, repo.common_dir);
                std::string agent = "a" + std::to_string(i);
                add_worktree(repo, {r.home / "worktrees" / agent, "web", agent, "", base, false});
            } catch (const std::exception& e) {
                ++failures;
                UNSCOPED_INFO(e.what());
            }
        });
    }
    for (auto& t : threads) t.join();
    CHECK(failures == 0);
    auto branches = team::git::split_lines(r.git({"for-each-ref", "--format=%(refname:short)", "refs/heads/team/web/"}));
    CHECK(branches.size() == kCount);
    int ours = 0;
    for (const Worktree& w : list_worktrees(r.repo)) ours += w.lock_reason.rfind("team:web/", 0) == 0;
    CHECK(ours == kCount);  // every branch has its worktree
}

TEST_CASE("a worktree deleted by hand is listed missing, its branch intact", "[git]") {
    TestRepo r;
    AddResult a = add(r, "erin");
    write_file(a.worktree.path / "src/a.txt", "changed\n");
    r.commit_all("erin's work", a.worktree.path);
    std::string tip = r.head(a.worktree.path);
    fs::remove_all(a.worktree.path);
    r.git({"worktree", "prune"});  // another tool's prune keeps a locked entry
    auto listed = list_worktrees(r.repo);
    REQUIRE(listed.size() == 2);
    CHECK(listed[1].missing);
    CHECK(listed[1].locked);
    CHECK(first_line(r.git({"rev-parse", "team/web/erin"})) == tip);
    // Its branch is still held: a new worktree on it is refused, naming where.
    CHECK(kind_of([&] { add(r, "frank", "team/web/erin", true); }) == GitErrorKind::branch_checked_out);
}
