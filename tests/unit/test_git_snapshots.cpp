// Snapshots on real repositories: every kind of uncommitted work kept as a commit of our own,
// the worktree and its index byte-identical after (index.lock held or not), restored exactly,
// a merge in progress recorded as far as it can be, objects kept by gc, submodules named.
#include <fcntl.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "git/repo_lock.hpp"
#include "git/snapshots.hpp"
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

fs::path add(TestRepo& r, const std::string& agent) {
    RepoLock lock(r.home, r.repo.common_dir);
    return add_worktree(r.repo, {r.home / "worktrees" / agent, "web", agent, "", resolve_base(r.repo), false})
        .worktree.path;
}

// Staged, unstaged, both, deleted (staged and not), untracked, ignored, a mode change.
void make_mess(TestRepo& r, const fs::path& w) {
    write_file(w / "staged new.txt", "staged\n");
    r.git({"add", "staged new.txt"}, w);
    write_file(w / "src/a.txt", "one\nTWO\nthree\n");
    r.git({"add", "src/a.txt"}, w);
    write_file(w / "src/a.txt", "one\nTWO\nthree\nfour (unstaged on top)\n");
    r.git({"rm", "--quiet", "--cached", "src/b.txt"}, w);  // staged deletion, file kept
    fs::remove(w / "README.md");                           // unstaged deletion
    write_file(w / "dir/untracked é.txt", "new and untracked\n");
    write_file(w / ".env", "SECRET=2\n");                  // ignored
    write_file(w / "build/cache.bin", "ignored\n");
}

std::string index_bytes(TestRepo& r, const fs::path& w) {
    return slurp(fs::path(first_line(r.git({"rev-parse", "--path-format=absolute", "--git-path", "index"}, w))));
}

}  // namespace

TEST_CASE("a snapshot keeps staged, unstaged, deleted and untracked work, touching nothing",
          "[git]") {
    TestRepo r;
    fs::path w = add(r, "alice");
    make_mess(r, w);
    auto files = fingerprint(w);
    std::string index = index_bytes(r, w);
    std::string status = r.status(w);

    Snapshot s = take_snapshot(r.repo, r.home, "web", "alice", w);
    REQUIRE(s.taken);
    CHECK(s.ref == "refs/team/snapshots/web/alice/1");
    CHECK(s.head == r.head(w));
    CHECK(s.staged == 3);     // the new file, a.txt, b.txt's deletion
    CHECK(s.modified == 2);   // a.txt again, README.md deleted
    CHECK(s.untracked == 2);  // b.txt (unstaged from the index, on disk) and the new one
    CHECK_FALSE(s.partial);
    CHECK(s.ignored == std::vector<std::string>{".env", "build/"});
    CHECK(fingerprint(w) == files);
    CHECK(index_bytes(r, w) == index);
    CHECK(r.status(w) == status);

    // The stash shape: W's parents are HEAD and the index's commit; untracked files are in W.
    CHECK(first_line(r.git({"rev-parse", s.ref + "^1"})) == s.head);
    CHECK(r.git({"show", s.ref + ":dir/untracked é.txt"}) == "new and untracked\n");
    CHECK(r.git({"show", s.ref + "^2:src/a.txt"}) == "one\nTWO\nthree\n");
    CHECK(r.git({"show", s.ref + ":src/a.txt"}) == "one\nTWO\nthree\nfour (unstaged on top)\n");
    CHECK_FALSE(git_try(r.dir, {"cat-file", "-e", s.ref + "^2:src/b.txt"}).ok());

    // A second one is N+1; `git gc --prune=now` keeps both snapshots' objects.
    Snapshot again = take_snapshot(r.repo, r.home, "web", "alice", w);
    CHECK(again.ref == "refs/team/snapshots/web/alice/2");
    r.git({"gc", "--quiet", "--prune=now"});
    CHECK(r.git({"show", s.ref + ":dir/untracked é.txt"}) == "new and untracked\n");
    CHECK(list_snapshots(r.repo, "web", "alice") ==
          std::vector<std::string>{s.ref, again.ref});
}

TEST_CASE("ignored files are listed in a snapshot, not stored, and a clean tree needs none", "[git]") {
    TestRepo r;
    fs::path w = add(r, "bob");
    Snapshot clean = take_snapshot(r.repo, r.home, "web", "bob", w);
    CHECK_FALSE(clean.taken);
    CHECK(clean.ref.empty());

    write_file(w / ".env", "SECRET=3\n");
    write_file(w / "build/out.o", "obj\n");
    Snapshot only_ignored = take_snapshot(r.repo, r.home, "web", "bob", w);
    CHECK_FALSE(only_ignored.taken);
    CHECK(only_ignored.ignored == std::vector<std::string>{".env", "build/"});

    write_file(w / "new.txt", "x\n");
    Snapshot s = take_snapshot(r.repo, r.home, "web", "bob", w);
    REQUIRE(s.taken);
    CHECK(s.untracked == 1);
    CHECK_FALSE(git_try(r.dir, {"cat-file", "-e", s.ref + ":.env"}).ok());
    CHECK(r.git({"log", "-1", "--format=%B", s.ref}).find("  .env\n") != std::string::npos);
}

TEST_CASE("a snapshot while another process holds index.lock, and a restore byte-identical",
          "[git]") {
    TestRepo r;
    fs::path w = add(r, "carol");
    make_mess(r, w);
    fs::path lock = fs::path(first_line(r.git({"rev-parse", "--path-format=absolute", "--git-path", "index.lock"}, w)));
    // Another process (a git that is committing, or one that crashed) holds the lock.
    pid_t holder = ::fork();
    if (holder == 0) {
        int fd = ::open(lock.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
        if (fd < 0) ::_exit(1);
        ::pause();
        ::_exit(0);
    }
    REQUIRE(team::test::eventually([&] { return fs::exists(lock); }));
    auto files = fingerprint(w);
    std::string index = index_bytes(r, w);
    std::string status = r.status(w);
    Snapshot s = take_snapshot(r.repo, r.home, "web", "carol", w);
    REQUIRE(s.taken);
    CHECK(fs::exists(lock));  // never broken
    CHECK(fingerprint(w) == files);
    CHECK(index_bytes(r, w) == index);
    ::kill(holder, SIGKILL);
    ::waitpid(holder, nullptr, 0);
    fs::remove(lock);  // the holder is gone: its lock is stale

    // Restore: refused into a dirty tree (and nothing changes), then exact into a clean one.
    CHECK_THROWS_AS(restore_snapshot(r.repo, r.home, w, s.ref), GitError);
    CHECK(fingerprint(w) == files);
    r.git({"reset", "--quiet", "--hard"}, w);
    r.git({"clean", "-q", "-fdx"}, w);
    CHECK(fingerprint(w) != files);
    restore_snapshot(r.repo, r.home, w, s.ref);
    // Ignored files are not stored: those two are the only difference.
    auto restored = fingerprint(w);
    auto expected = files;
    expected.erase(".env");
    expected.erase("build/");
    expected.erase("build/cache.bin");
    CHECK(restored == expected);
    CHECK(r.status(w) == status);
    CHECK(r.git({"diff", "--cached", "--name-status"}, w) ==
          "M\tsrc/a.txt\nD\tsrc/b.txt\nA\tstaged new.txt\n");
    CHECK_THROWS_AS(restore_snapshot(r.repo, r.home, w, "refs/team/snapshots/web/carol/99"), GitError);
}

TEST_CASE("during a conflicted merge a snapshot records what it can and says so", "[git]") {
    TestRepo r;
    fs::path w = add(r, "dave");
    write_file(w / "src/a.txt", "one\nDAVE\nthree\n");
    r.commit_all("dave", w);
    write_file(r.dir / "src/a.txt", "one\nMAIN\nthree\n");
    r.commit_all("main");
    CHECK_FALSE(git_try(w, {"merge", "--quiet", "main"}).ok());  // conflict in src/a.txt
    write_file(w / "other.txt", "untracked during the merge\n");
    auto files = fingerprint(w);
    std::string index = index_bytes(r, w);

    Snapshot s = take_snapshot(r.repo, r.home, "web", "dave", w);
    REQUIRE(s.taken);
    CHECK(s.partial);
    CHECK(s.unmerged == std::vector<std::string>{"src/a.txt"});
    CHECK(s.note.find("merge was in progress") != std::string::npos);
    CHECK(r.git({"show", s.ref + ":src/a.txt"}).find("<<<<<<<") != std::string::npos);
    CHECK(r.git({"show", s.ref + "^2:src/a.txt"}) == "one\nDAVE\nthree\n");
    CHECK(r.git({"show", s.ref + ":other.txt"}) == "untracked during the merge\n");
    CHECK(fingerprint(w) == files);
    CHECK(index_bytes(r, w) == index);
    CHECK(fs::exists(fs::path(first_line(r.git({"rev-parse", "--path-format=absolute", "--git-path", "MERGE_HEAD"}, w)))));
}

TEST_CASE("a submodule with work of its own is named, its new commit is recorded", "[git]") {
    TestRepo sub;  // the submodule's origin
    TestRepo r;
    r.git({"-c", "protocol.file.allow=always", "submodule", "--quiet", "add", sub.dir.string(), "lib"});
    r.commit_all("add lib");
    fs::path w = add(r, "erin");
    r.git({"-c", "protocol.file.allow=always", "submodule", "--quiet", "update", "--init"}, w);
    write_file(w / "lib/src/a.txt", "changed inside the submodule\n");
    auto files = fingerprint(w);

    Snapshot s = take_snapshot(r.repo, r.home, "web", "erin", w);
    CHECK(s.submodules_not_recorded == std::vector<std::string>{"lib"});
    CHECK(s.note.find("submodules") != std::string::npos);
    CHECK(fingerprint(w) == files);
    CHECK(slurp(w / "lib/src/a.txt") == "changed inside the submodule\n");
}
