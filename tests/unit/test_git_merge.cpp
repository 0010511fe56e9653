// git/ on real repositories: a worktree's status against its base, merge checks and conflicts
// between branches, diffs, merges by each strategy (in the target's checkout or by a
// compare-and-swap of its ref), and the checks before any removal. The main checkout is kept
// dirty throughout and must come out byte-identical.
#include <catch2/catch.hpp>

#include "git/merge.hpp"
#include "git/removal.hpp"
#include "git/repo_lock.hpp"
#include "git/status.hpp"
#include "git/worktrees.hpp"
#include "tests/support/git_repo.hpp"

using namespace team;
using namespace team::git;
using team::test::fingerprint;
using team::test::git_try;
using team::test::slurp;
using team::test::TestRepo;
using team::test::write_file;
namespace fs = std::filesystem;

namespace {

Worktree add(TestRepo& r, const std::string& agent, const std::string& base = "main") {
    RepoLock lock(r.home, r.repo.common_dir);
    return add_worktree(r.repo, {r.home / "worktrees" / agent, "web", agent, "", resolve_base(r.repo, base), false})
        .worktree;
}

// The main checkout dirty in every way: staged, modified, untracked and ignored.
void dirty_main(TestRepo& r) {
    write_file(r.dir / "src/b.txt", "bee, staged in main\n");
    r.git({"add", "src/b.txt"});
    write_file(r.dir / "README.md", "hello, modified in main\n");
    write_file(r.dir / "notes.txt", "untracked in main\n");
    write_file(r.dir / ".env", "MAIN=1\n");
}

std::string main_index(TestRepo& r) {
    return slurp(r.repo.common_dir / "index");
}

MergeRequest req(const std::string& branch, const fs::path& worktree, const std::string& into,
                 Strategy strategy, bool check_only = false) {
    MergeRequest m;
    m.branch = branch;
    m.agent_worktree = worktree;
    m.into = into;
    m.strategy = strategy;
    m.check_only = check_only;
    return m;
}

GitErrorKind kind_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const GitError& e) {
        return e.kind();
    }
    FAIL("no GitError was thrown");
    return GitErrorKind::git_failed;
}

}  // namespace

TEST_CASE("status, merge checks, conflicts between agents and diffs of real branches", "[git]") {
    TestRepo r;
    dirty_main(r);
    auto main_files = fingerprint(r.dir);
    std::string main_idx = main_index(r);
    std::string base = resolve_base(r.repo).commit;

    Worktree a = add(r, "alice");
    Worktree b = add(r, "bob");
    Worktree c = add(r, "carol");
    write_file(a.path / "src/a.txt", "one\nALICE\nthree\n");
    r.commit_all("alice 1", a.path);
    write_file(a.path / "alice.txt", "a\n");
    r.commit_all("alice 2", a.path);
    write_file(b.path / "src/a.txt", "one\nBOB\nthree\n");  // the same line as alice
    r.commit_all("bob", b.path);
    write_file(c.path / "carol.txt", "c\n");  // nothing in common with anyone
    r.commit_all("carol", c.path);
    write_file(a.path / "wip.txt", "untracked\n");
    write_file(a.path / "src/b.txt", "bee, modified\n");

    WorktreeStatus s = worktree_status(r.repo, a.path, base);
    CHECK(s.branch == "team/web/alice");
    CHECK(s.ahead == 2);
    CHECK(s.behind == 0);
    CHECK(s.modified == 1);
    CHECK(s.untracked == 1);
    CHECK(s.staged == 0);

    CHECK(merge_check(r.repo, "main", "team/web/alice").clean);
    CHECK(merge_check(r.repo, "main", "team/web/bob").clean);
    auto conflicts = branch_conflicts(r.repo, base, "team/web/alice",
                                      {"team/web/alice", "team/web/bob", "team/web/carol"});
    REQUIRE(conflicts.size() == 1);
    CHECK(conflicts[0].other == "team/web/bob");
    CHECK(conflicts[0].files == std::vector<std::string>{"src/a.txt"});

    CHECK(diff(r.repo, base, "team/web/alice", true).find("2 files changed") != std::string::npos);
    CHECK(diff(r.repo, base, "team/web/alice", false).find("+ALICE") != std::string::npos);
    std::string wip = diff_wip(r.repo, a.path, true);
    CHECK(wip.find("wip.txt") != std::string::npos);
    CHECK(wip.find("src/b.txt") != std::string::npos);

    // Another line of work moves on in a way that conflicts with bob: the check names the
    // file and changes nothing.
    Worktree mover = add(r, "mover");
    write_file(mover.path / "src/a.txt", "one\nMOVER\nthree\n");
    r.commit_all("mover", mover.path);
    CHECK(worktree_status(r.repo, b.path, "team/web/mover").behind == 1);
    std::string bob_status = r.status(b.path);
    MergeCheck m = merge_check(r.repo, "team/web/mover", "team/web/bob");
    CHECK_FALSE(m.clean);
    CHECK(m.files == std::vector<std::string>{"src/a.txt"});
    CHECK(r.status(b.path) == bob_status);
    CHECK(fingerprint(r.dir) == main_files);
    CHECK(main_index(r) == main_idx);
}

TEST_CASE("merges: refused when dirty or conflicting, each strategy by ref CAS", "[git]") {
    TestRepo r;
    r.git({"branch", "target"});  // a target that is not checked out anywhere
    Worktree a = add(r, "alice");
    write_file(a.path / "alice.txt", "a\n");
    r.commit_all("alice", a.path);

    // A dirty agent tree is refused, and nothing moves.
    write_file(a.path / "loose.txt", "x\n");
    std::string before = r.head();
    CHECK(kind_of([&] {
              merge_branch(r.repo, r.home, req("team/web/alice", a.path, "target", Strategy::merge));
          }) == GitErrorKind::dirty);
    fs::remove(a.path / "loose.txt");

    // --check only: the answer, nothing changed.
    MergeOutcome checked = merge_branch(r.repo, r.home, req("team/web/alice", a.path, "target", Strategy::merge, true));
    CHECK(checked.check.clean);
    CHECK_FALSE(checked.merged);
    CHECK(first_line(r.git({"rev-parse", "target"})) == before);

    // ff by compare-and-swap.
    MergeOutcome ff = merge_branch(r.repo, r.home, req("team/web/alice", a.path, "target", Strategy::ff));
    CHECK(ff.merged);
    CHECK(ff.checkout.empty());
    CHECK(ff.commit == r.head(a.path));

    // target moves on; ff is no longer possible, a merge commit is.
    r.git({"update-ref", "refs/heads/target",
           first_line(r.git({"commit-tree", "-p", "target", "-m", "elsewhere", "target^{tree}"}))});
    write_file(a.path / "alice2.txt", "a2\n");
    r.commit_all("alice 2", a.path);
    CHECK(kind_of([&] {
              merge_branch(r.repo, r.home, req("team/web/alice", a.path, "target", Strategy::ff));
          }) == GitErrorKind::not_mergeable);
    MergeOutcome merged = merge_branch(r.repo, r.home, req("team/web/alice", a.path, "target", Strategy::merge));
    CHECK(r.git({"rev-list", "--parents", "-n", "1", "target"}).size() > 2 * 41);  // two parents
    CHECK(r.git({"show", "target:alice2.txt"}) == "a2\n");

    // squash: one commit, one parent, the content there; the branch counts as merged after.
    Worktree b = add(r, "bob");
    write_file(b.path / "b1.txt", "1\n");
    r.commit_all("bob 1", b.path);
    write_file(b.path / "b2.txt", "2\n");
    r.commit_all("bob 2", b.path);
    MergeOutcome squashed = merge_branch(r.repo, r.home, req("team/web/bob", b.path, "target", Strategy::squash));
    CHECK(first_line(r.git({"rev-parse", "target^"})) == merged.commit);
    CHECK(git_try(r.dir, {"rev-parse", "--verify", "-q", "target^2"}).exit_code != 0);
    CHECK(merged_as(r.repo, "target", "team/web/bob") == "content");

    // rebase: the branch rebased in its worktree, the target fast-forwarded.
    Worktree c = add(r, "carol");
    write_file(c.path / "c.txt", "c\n");
    r.commit_all("carol", c.path);
    MergeOutcome rebased = merge_branch(r.repo, r.home, req("team/web/carol", c.path, "target", Strategy::rebase));
    CHECK(first_line(r.git({"rev-parse", "target^"})) == squashed.commit);
    CHECK(rebased.commit == r.head(c.path));

    // A conflict is refused and named.
    Worktree d = add(r, "dave");
    write_file(d.path / "c.txt", "dave's c\n");
    r.commit_all("dave", d.path);
    try {
        merge_branch(r.repo, r.home, req("team/web/dave", d.path, "target", Strategy::merge));
        FAIL("no refusal");
    } catch (const GitError& e) {
        CHECK(e.kind() == GitErrorKind::conflicts);
        CHECK(std::string(e.what()).find("'c.txt'") != std::string::npos);
    }
    CHECK(first_line(r.git({"rev-parse", "target"})) == rebased.commit);
}

TEST_CASE("a merge into a checked-out branch runs there, and a dirty checkout is refused intact",
          "[git]") {
    TestRepo r;
    Worktree a = add(r, "alice");
    write_file(a.path / "alice.txt", "a\n");
    r.commit_all("alice", a.path);

    dirty_main(r);
    auto main_files = fingerprint(r.dir);
    std::string main_idx = main_index(r);
    std::string head = r.head();
    CHECK(kind_of([&] {
              merge_branch(r.repo, r.home, req("team/web/alice", a.path, "main", Strategy::merge));
          }) == GitErrorKind::dirty);
    CHECK(fingerprint(r.dir) == main_files);
    CHECK(main_index(r) == main_idx);
    CHECK(r.head() == head);

    r.git({"stash", "push", "--quiet", "--include-untracked"});
    MergeOutcome out = merge_branch(r.repo, r.home, req("team/web/alice", a.path, "main", Strategy::squash));
    CHECK(out.checkout == fs::canonical(r.dir));
    CHECK(slurp(r.dir / "alice.txt") == "a\n");
    CHECK(r.git({"status", "--porcelain"}).empty());
}

TEST_CASE("removal: only clean and merged worktrees go, and discard keeps a snapshot and a trash",
          "[git]") {
    TestRepo r;
    dirty_main(r);
    auto main_files = fingerprint(r.dir);
    std::string main_idx = main_index(r);

    Worktree fresh = add(r, "fresh");
    Worktree unmerged = add(r, "unmerged");
    write_file(unmerged.path / "u.txt", "u\n");
    r.commit_all("unmerged work", unmerged.path);
    Worktree untracked = add(r, "untracked");
    write_file(untracked.path / "new.txt", "n\n");
    Worktree ignored = add(r, "ignored");
    write_file(ignored.path / ".env", "KEY=1\n");
    Worktree detached = add(r, "detached");
    r.git({"checkout", "--quiet", "--detach"}, detached.path);
    write_file(detached.path / "d.txt", "d\n");
    r.commit_all("detached work", detached.path);
    Worktree squashed = add(r, "squashed");
    write_file(squashed.path / "s1.txt", "1\n");
    r.commit_all("s 1", squashed.path);
    write_file(squashed.path / "s2.txt", "2\n");
    r.commit_all("s 2", squashed.path);
    r.git({"branch", "integration"});
    merge_branch(r.repo, r.home, req("team/web/squashed", squashed.path, "integration", Strategy::squash));

    auto check = [&](const Worktree& w, const std::string& base) {
        for (const Worktree& now : list_worktrees(r.repo)) {
            if (now.path == w.path) return check_removal(r.repo, now, base);
        }
        FAIL("not listed");
        return RemovalCheck{};
    };
    CHECK(check(fresh, "main").removable());
    CHECK_FALSE(check(unmerged, "main").removable());
    CHECK_FALSE(check(untracked, "main").removable());
    CHECK_FALSE(check(ignored, "main").removable());
    RemovalCheck d = check(detached, "main");
    CHECK(d.detached_unheld);
    CHECK_FALSE(d.removable());
    CHECK(check(squashed, "integration").merged_as == "content");
    CHECK(check(squashed, "integration").removable());

    // gc against main removes only the fresh one; against integration, the squashed one too.
    auto dry = gc_worktrees(r.repo, r.home, "web", "main", true);
    int would = 0;
    for (const auto& e : dry) would += e.removed;
    CHECK(would == 1);
    CHECK(fs::exists(fresh.path));
    gc_worktrees(r.repo, r.home, "web", "main", false);
    CHECK_FALSE(fs::exists(fresh.path));
    CHECK_FALSE(branch_exists(r.repo, "team/web/fresh"));
    CHECK(fs::exists(unmerged.path / "u.txt"));
    CHECK(fs::exists(ignored.path / ".env"));
    CHECK(fs::exists(detached.path / "d.txt"));
    CHECK(branch_exists(r.repo, "team/web/unmerged"));
    gc_worktrees(r.repo, r.home, "web", "integration", false);
    CHECK_FALSE(fs::exists(squashed.path));

    // A refused removal says why; discard snapshots, then moves everything into the trash.
    for (const Worktree& w : list_worktrees(r.repo)) {
        if (w.path != untracked.path) continue;
        CHECK_THROWS_WITH(remove_worktree(r.repo, r.home, w, "main"), Catch::Contains("uncommitted work"));
        Discarded gone = discard_worktree(r.repo, r.home, "web", "untracked", w, r.home / "trash");
        CHECK(gone.snapshot_ref == "refs/team/snapshots/web/untracked/1");
        CHECK(slurp(gone.trash_path / "worktree" / "new.txt") == "n\n");
        CHECK(fs::exists(gone.trash_path / "git-admin" / "index"));
        CHECK(r.git({"show", gone.snapshot_ref + ":new.txt"}) == "n\n");
    }
    CHECK_FALSE(fs::exists(untracked.path));
    CHECK(branch_exists(r.repo, "team/web/untracked"));
    for (const Worktree& w : list_worktrees(r.repo)) CHECK(w.path != untracked.path);

    CHECK(fingerprint(r.dir) == main_files);
    CHECK(main_index(r) == main_idx);
}
