// Worktrees (SPEC 14) end to end: the real binary, real tmux, real git on repositories each test
// makes (paths with a space, a quote and unicode), each test on a home of its own. An agent
// here is a bash script that does its git work and then waits; the tests prove the refusals
// create nothing, every stop keeps the worktree and a snapshot of the uncommitted work that
// restores byte-identical, the git state and the conflicts between agents, merge and its
// checks, and that rm and gc never take work.

#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "proc/process_table.hpp"
#include "tests/support/agents_home.hpp"
#include "tests/support/git_repo.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/process.hpp"

using team::test::bound;
using team::test::eventually;
using team::test::fingerprint;
using team::test::git_ok;
using team::test::git_try;
using team::test::slurp;
using team::test::write_file;
using Json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

// A home whose team works in a repository of its own (branch main, three files, .env ignored
// and named in .worktreeinclude).
class RepoHome : public team::test::AgentsHome {
  public:
    explicit RepoHome(const std::string& team) : AgentsHome(team, false) {
        repo = env.dir() / "my repo 'q' \xC3\xA9";
        team::test::init_repo(repo);
        write_file(repo / "README.md", "hello\n");
        write_file(repo / "src/a.txt", "one\ntwo\nthree\n");
        write_file(repo / "src/b.txt", "bee\n");
        write_file(repo / ".gitignore", ".env\nbuild/\n");
        write_file(repo / ".worktreeinclude", ".env\n");
        write_file(repo / ".env", "SECRET=1\n");
        git({"add", "-A"});
        git({"commit", "--quiet", "-m", "first"});
        base = head();
        ok({"create", team, "--cwd", repo.string(), "--repo", repo.string()});
    }

    std::string git(std::vector<std::string> args, const fs::path& cwd = {}) const {
        return git_ok(cwd.empty() ? repo : cwd, std::move(args));
    }
    std::string head(const fs::path& cwd = {}) const {
        return team::git::first_line(git({"rev-parse", "HEAD"}, cwd));
    }
    std::string ref(const std::string& name) const {
        auto r = git_try(repo, {"rev-parse", "--verify", "--quiet", name});
        return r.ok() ? team::git::first_line(r.out) : "";
    }

    // `team spawn NAME --worktree [OPTIONS] -- bash -c SCRIPT` (the agent then waits).
    Json spawn_wt(const std::string& name, const std::string& script,
                  const std::vector<std::string>& options = {}) const {
        std::vector<std::string> args{"spawn", name, "--worktree", "--env", mark.entry()};
        args.insert(args.end(), options.begin(), options.end());
        args.insert(args.end(), {"--", "bash", "-c", script});
        return ok(args);
    }

    fs::path worktree(const std::string& name) const {
        return env.home() / "worktrees" / team() / name;
    }

    // The agent's git state in `team agents --json`.
    Json state(const std::string& name) const {
        auto a = find(ok({"agents"}), name);
        REQUIRE(a.is_object());
        REQUIRE(a.contains("worktree"));
        return a["worktree"];
    }

    fs::path repo;
    std::string base;
};

// A script that makes every kind of uncommitted work, commits once first, then marks itself
// done and waits.
const std::string kMixedWork =
    "set -e; git -c user.name=A -c user.email=a@a commit -q --allow-empty -m start;"
    " printf 'staged\\n' > staged.txt; git add staged.txt;"
    " printf 'changed\\n' >> src/a.txt; rm src/b.txt;"
    " mkdir -p 'new dir'; printf 'untracked \\xc3\\xa9\\n' > 'new dir/u t.txt';"
    " printf 'cache' > .env.local; mkdir -p build; printf x > build/out.o;"
    " touch \"$TEAM_WORKTREE.done\"; exec sleep 600";

bool done(const RepoHome& h, const std::string& name) {
    return fs::exists(h.worktree(name).string() + ".done");
}

}  // namespace

TEST_CASE(
    "spawn --worktree: a locked worktree on its own branch, the agent in it with its variables, "
    ".worktreeinclude copied",
    "[worktree][pg]") {
    RepoHome h("wt-spawn");
    // The user's own checkout is dirty (a change, a staged file, an untracked one): left as it is.
    write_file(h.repo / "README.md", "hello, mine\n");
    write_file(h.repo / "staged.txt", "staged\n");
    h.git({"add", "staged.txt"});
    write_file(h.repo / "scratch.txt", "scratch\n");
    auto before = fingerprint(h.repo);
    auto doc = h.spawn_wt("w1",
                          "env | grep ^TEAM_ > vars.txt; pwd > where.txt; touch "
                          "\"$TEAM_WORKTREE.done\"; exec sleep 600");
    fs::path wt = h.worktree("w1");
    CHECK(doc["worktree"]["path"] == wt.string());
    CHECK(doc["worktree"]["branch"] == "team/wt-spawn/w1");
    CHECK(doc["worktree"]["base"] == h.base);
    CHECK(doc["worktree"]["included"] == Json::array({".env"}));
    REQUIRE(eventually([&] { return done(h, "w1"); }));
    std::string vars = slurp(wt / "vars.txt");
    CHECK(vars.find("TEAM_WORKTREE=" + wt.string()) != std::string::npos);
    CHECK(vars.find("TEAM_BRANCH=team/wt-spawn/w1") != std::string::npos);
    CHECK(vars.find("TEAM_BASE=" + h.base) != std::string::npos);
    CHECK(slurp(wt / "where.txt") == wt.string() + "\n");
    CHECK(slurp(wt / ".env") == "SECRET=1\n");
    std::string list = h.git({"worktree", "list", "--porcelain"});
    CHECK(list.find("worktree " + wt.string() + "\n") != std::string::npos);
    CHECK(list.find("locked team:wt-spawn/w1") != std::string::npos);
    CHECK(h.agent("w1")["cwd"] == wt.string());
    CHECK(fingerprint(h.repo) == before);  // the main checkout is untouched
    {
        // Over HTTP the one agent carries the worktree its row of the list does.
        team::test::Serve s(h);
        auto one = s.get("/api/teams/wt-spawn/agents/w1");
        REQUIRE(one.status == 200);
        CHECK(one.json()["worktree"]["path"] == wt.string());
        CHECK(one.json()["worktree"] == h.state("w1"));
        s.stop();
    }
    h.ok({"kill-agent", "w1", "--force"});
    h.check_nothing_left();
}

TEST_CASE(
    "spawn --worktree refusals create nothing: no repository, no commit, a branch that exists or "
    "is checked out, bad values",
    "[worktree]") {
    RepoHome h("wt-refuse");
    auto refs_before = h.git({"for-each-ref"});
    auto expect = [&](std::vector<std::string> args, int code, const std::string& says) {
        args.insert(args.begin(), "--json");
        auto r = h.run(args);
        INFO(r.out << r.err);
        CHECK(r.exit_code == code);
        CHECK(r.out.find(says) != std::string::npos);
    };
    h.git({"branch", "taken"});
    expect({"spawn", "a", "--worktree", "--branch", "taken", "--", "sleep", "600"}, 4,
           "exists (reuse it with --reuse-branch)");
    expect({"spawn", "a", "--worktree", "--branch", "main", "--", "sleep", "600"}, 4,
           "is checked out in");
    expect({"spawn", "a", "--worktree", "--branch", "x;$(touch /tmp/pwned)", "--", "sleep", "600"},
           2, "not a valid branch name");
    expect({"spawn", "a", "--worktree", "--branch", "-D", "--", "sleep", "600"}, 2,
           "not a valid branch name");
    expect({"spawn", "a", "--worktree", "--branch", "a\nb", "--", "sleep", "600"}, 2,
           "not a valid branch name");
    expect({"spawn", "a", "--worktree", "--base", "no-such-ref", "--", "sleep", "600"}, 3, "");
    expect({"spawn", "a", "--branch", "b", "--", "sleep", "600"}, 2, "goes with --worktree");
    expect({"spawn", "a", "--worktree", "--cwd", "/tmp", "--", "sleep", "600"}, 2,
           "--cwd and --worktree");
    expect({"spawn", "a", "--worktree", "--", "/no/such/program"}, 1, "command not found");
    CHECK(!fs::exists(h.worktree("a")));
    CHECK(h.git({"branch", "--list", "team/*"}).empty());
    CHECK(h.ok({"agents", "--all"}).empty());
    CHECK(h.ok({"worktree", "list", "--all"}).empty());
    CHECK(!fs::exists("/tmp/pwned"));
    h.git({"branch", "-d", "taken"});
    CHECK(h.git({"for-each-ref"}) == refs_before);

    // A team made outside any repository, and a repository with no commit yet.
    team::test::AgentsHome plain("wt-norepo");
    auto r = plain.json_run({"spawn", "a", "--worktree", "--", "sleep", "600"});
    CHECK(r.exit_code == 2);
    CHECK(r.out.find("no repository") != std::string::npos);
    fs::path empty = plain.env.dir() / "empty";
    fs::create_directories(empty);
    git_ok(empty, {"init", "--quiet"});
    r = plain.json_run({"create", "wt-empty", "--repo", empty.string()});
    CHECK(r.exit_code != 0);
    r = plain.json_run({"create", "wt-nowhere", "--repo", (plain.env.dir() / "nope").string()});
    CHECK(r.exit_code == 2);
    h.check_nothing_left();
}

TEST_CASE(
    "kill-agent --force keeps the worktree and a snapshot of every kind of uncommitted work, "
    "restored byte-identical",
    "[worktree][sanitize]") {
    RepoHome h("wt-force");
    h.spawn_wt("w1", kMixedWork);
    REQUIRE(eventually([&] { return done(h, "w1"); }));
    fs::path wt = h.worktree("w1");
    auto kill = h.ok({"kill-agent", "w1", "--force"});
    auto after_kill = fingerprint(wt);
    std::string status = h.git({"status", "--porcelain=v2", "--untracked-files=all"}, wt);
    REQUIRE(kill["worktree"].is_object());
    const auto& s = kill["worktree"]["snapshot"];
    INFO(kill.dump());
    CHECK(kill["worktree"]["path"] == wt.string());
    CHECK(s["taken"] == true);
    CHECK(s["ref"] == "refs/team/snapshots/wt-force/w1/1");
    CHECK(s["staged"] == 1);
    CHECK(s["modified"] == 2);   // src/a.txt changed, src/b.txt deleted
    CHECK(s["untracked"] == 2);  // new dir/u t.txt, .env.local
    CHECK(s["ignored"] == Json::array({".env", "build/"}));
    CHECK(h.ref("refs/team/snapshots/wt-force/w1/1") == s["commit"]);
    CHECK(!h.ref("team/wt-force/w1").empty());

    // The snapshot keeps its objects through a gc; the work comes back exactly, staged staged.
    h.git({"gc", "--quiet", "--prune=now"});
    h.git({"reset", "--quiet", "--hard"}, wt);
    h.git({"clean", "-q", "-fd"}, wt);  // the test plays the user who threw the work away
    auto restored = h.ok({"worktree", "restore", "w1"});
    CHECK(restored["ref"] == "refs/team/snapshots/wt-force/w1/1");
    // Bytes (and the executable bit) are what git keeps; other mode bits come from the umask of
    // whoever wrote the file (the agent's pane, here the test).
    auto content = [](std::map<std::string, std::string> f) {
        for (auto& [k, v] : f) v = v.substr(v.find(':') + 1);
        return f;
    };
    after_kill = content(after_kill);
    auto now = content(fingerprint(wt));
    for (const auto& [k, v] : after_kill) {
        if (!now.count(k)) {
            INFO("missing after restore: " << k);
            CHECK(false);
        } else if (now[k] != v) {
            INFO("differs after restore: " << k);
            CHECK(false);
        }
    }
    for (const auto& [k, v] : now) {
        if (!after_kill.count(k)) {
            INFO("new after restore: " << k);
            CHECK(false);
        }
    }
    CHECK(h.git({"status", "--porcelain=v2", "--untracked-files=all"}, wt) == status);

    // Restoring into a tree with work in it is refused, and changes nothing.
    auto dirty = fingerprint(wt);
    auto r = h.json_run({"worktree", "restore", "w1"});
    CHECK(r.exit_code == 4);
    CHECK(fingerprint(wt) == dirty);
    h.check_nothing_left();
}

TEST_CASE(
    "the agent's own exit, a teardown and a tmux server killed from outside each keep the work in "
    "a snapshot",
    "[worktree]") {
    RepoHome h("wt-ends");
    // Its own exit: the supervisor takes the snapshot.
    h.spawn_wt("own", "printf 'mine\\n' > mine.txt; printf 'more\\n' >> README.md; exit 0");
    h.wait_terminated("own");
    Json own;
    REQUIRE(eventually([&] {
        own = RepoHome::find(h.ok({"worktree", "list"}), "agent", "own");
        return own.is_object() && own["snapshotOwed"] == false && own["snapshot"].is_object();
    }));
    CHECK(own["snapshot"]["untracked"] == 1);
    CHECK(own["snapshot"]["modified"] == 1);
    CHECK(own["snapshots"].size() == 1);

    // The tmux server killed: the next look records the agent lost and takes the snapshot.
    h.spawn_wt("lost", "printf 'x\\n' > lost.txt; touch \"$TEAM_WORKTREE.done\"; exec sleep 600");
    REQUIRE(eventually([&] { return done(h, "lost"); }));
    h.env.tmux({"kill-server"});
    h.wait_terminated("lost");
    Json lost;
    REQUIRE(eventually([&] {
        lost = RepoHome::find(h.ok({"worktree", "list"}), "agent", "lost");
        return lost.is_object() && lost["snapshot"].is_object();
    }));
    CHECK(lost["snapshot"]["untracked"] == 1);
    CHECK(fs::exists(h.worktree("lost") / "lost.txt"));
    // Only untracked work: it comes back untracked (stash apply alone would stage it).
    h.git({"clean", "-q", "-fd"}, h.worktree("lost"));
    h.ok({"worktree", "restore", "lost", "--ref", "1"});
    CHECK(h.git({"status", "--porcelain", "--untracked-files=all"}, h.worktree("lost")) ==
          "?? lost.txt\n");

    // Teardown of a dirty one and a clean one: each row lists its kept worktree.
    h.spawn_wt("dirty", kMixedWork);
    h.spawn_wt("clean", "touch \"$TEAM_WORKTREE.done\"; exec sleep 600");
    REQUIRE(eventually([&] { return done(h, "dirty") && done(h, "clean"); }));
    auto td = h.ok({"teardown", "--grace", "1s"});
    std::map<std::string, Json> rows;
    for (const auto& row : td["agents"]) rows[row["agentId"]] = row["worktree"];
    CHECK(rows["dirty@wt-ends"]["snapshot"]["taken"] == true);
    CHECK(rows["dirty@wt-ends"]["snapshot"]["staged"] == 1);
    CHECK(rows["clean@wt-ends"]["snapshot"]["taken"] == false);  // nothing uncommitted
    for (const char* name : {"own", "lost", "dirty", "clean"}) {
        CHECK(fs::is_directory(h.worktree(name)));
        CHECK(!h.ref(std::string("team/wt-ends/") + name).empty());
    }
    h.check_nothing_left();
}

TEST_CASE(
    "team agents shows each worktree agent's git state and the conflicts between agents' branches, "
    "files named",
    "[worktree][sanitize]") {
    RepoHome h("wt-state");
    const std::string commit = "git -c user.name=A -c user.email=a@a commit -q -am";
    h.spawn_wt("w1", "printf 'uno\\n' > src/a.txt; " + commit +
                         " w1; touch \"$TEAM_WORKTREE.done\"; exec sleep 600");
    h.spawn_wt("w2", "printf 'dos\\n' > src/a.txt; " + commit +
                         " w2; printf 'u' > u.txt; touch \"$TEAM_WORKTREE.done\"; exec sleep 600");
    h.spawn_wt("w3", "printf 'bee2\\n' > src/b.txt; " + commit +
                         " w3; touch \"$TEAM_WORKTREE.done\"; exec sleep 600");
    REQUIRE(eventually([&] { return done(h, "w1") && done(h, "w2") && done(h, "w3"); }));
    // Each agent's watcher records what changed within a second (team/worktree_watch.hpp). Until
    // every watcher has recorded, a look asks git itself, which may be fresher than the watchers'
    // first records: wait for the watchers' own.
    REQUIRE(eventually([&] {
        auto w1 = h.state("w1"), w2 = h.state("w2"), w3 = h.state("w3");
        return w1["source"] == "watcher" && w2["source"] == "watcher" &&
               w3["source"] == "watcher" && w2["untracked"] == 1 &&
               w1["conflictsWith"].size() == 1 && w2["conflictsWith"].size() == 1;
    }));
    auto w1 = h.state("w1");
    INFO(w1.dump());
    CHECK(w1["branch"] == "team/wt-state/w1");
    CHECK(w1["ahead"] == 1);
    CHECK(w1["behind"] == 0);
    CHECK(w1["mergesCleanly"] == true);
    REQUIRE(w1["conflictsWith"].size() == 1);
    CHECK(w1["conflictsWith"][0]["agent"] == "w2");
    CHECK(w1["conflictsWith"][0]["files"] == Json::array({"src/a.txt"}));
    auto w2 = h.state("w2");
    INFO(w2.dump());
    CHECK(w2["untracked"] == 1);  // u.txt
    CHECK(w2["conflictsWith"][0]["agent"] == "w1");
    CHECK(h.state("w3")["conflictsWith"].empty());

    // The person's view says the same.
    auto r = h.run({"agents"});
    CHECK(r.out.find("w2 (src/a.txt)") != std::string::npos);

    // Merge: the check names the files and changes nothing; w1 goes in; then w2 conflicts.
    std::string main_before = h.head();
    auto check = h.json_run({"merge", "w2", "--check"});
    CHECK(check.exit_code == 0);
    h.ok({"merge", "w1"});
    CHECK(h.head() != main_before);
    auto before = fingerprint(h.repo);
    auto refused = h.json_run({"merge", "w3", "--check"});
    CHECK(refused.exit_code == 0);
    auto conflict = h.json_run({"merge", "w2", "--check"});
    CHECK(conflict.exit_code == 4);
    CHECK(conflict.json()["check"]["files"] == Json::array({"src/a.txt"}));
    CHECK(eventually([&] { return h.state("w2")["mergesCleanly"] == false; }));
    auto dirty = h.json_run({"merge", "w2", "--strategy", "squash"});
    CHECK(dirty.exit_code == 4);  // w2's tree has untracked files
    CHECK(fingerprint(h.repo) == before);
    auto merges = h.activity("worktree_merged");
    CHECK(merges.size() == 1);

    // Into a branch nobody has checked out: its ref moves by compare-and-swap.
    h.git({"branch", "release", h.base});
    auto into = h.ok({"merge", "w3", "--into", "release", "--strategy", "squash"});
    CHECK(into["checkout"].is_null());
    CHECK(h.ref("release") == into["commit"]);
    CHECK(fingerprint(h.repo) == before);
    auto bad = h.json_run({"merge", "w3", "--strategy", "octopus"});
    CHECK(bad.exit_code == 2);
    h.ok({"teardown", "--grace", "1s"});
    h.check_nothing_left();
}

// Issue 38's look: `team agents` reads each worktree's git state from the store, where the
// agent's watcher keeps it; the state is never older than 1 s after a change: an edit, a new
// file, a staged one, a commit, each waited for with a 1 s deadline from the moment it was made.
TEST_CASE("team agents shows a worktree's change within 1 s, as its watcher records it",
          "[worktree]") {
    RepoHome h("wt-fresh");
    h.spawn_wt("w1", "touch \"$TEAM_WORKTREE.done\"; exec sleep 600");
    REQUIRE(eventually([&] { return done(h, "w1") && h.state("w1")["source"] == "watcher"; }));
    fs::path wt = h.worktree("w1");
    struct Step {
        std::string what;
        std::function<void()> make;
        std::function<bool(const Json&)> shown;
    };
    const std::vector<Step> steps = {
        {"an edit", [&] { write_file(wt / "README.md", "hello, edited\n"); },
         [](const Json& s) { return s["modified"] == 1; }},
        {"a new file", [&] { write_file(wt / "new.txt", "new\n"); },
         [](const Json& s) { return s["untracked"] == 1; }},
        {"a staged file",
         [&] {
             h.git({"add", "new.txt"}, wt);
         },
         [](const Json& s) { return s["staged"] == 1 && s["untracked"] == 0; }},
        {"a commit",
         [&] {
             h.git({"-c", "user.name=A", "-c", "user.email=a@a", "commit", "-qam", "c"}, wt);
         },
         [](const Json& s) { return s["ahead"] == 1 && s["clean"] == true; }},
    };
    for (const auto& step : steps) {
        INFO(step.what);
        auto made = std::chrono::steady_clock::now();
        step.make();
        Json last;
        bool shown = eventually(
            [&] {
                last = h.state("w1");
                return step.shown(last);
            },
            1000);
        auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::steady_clock::now() - made);
        INFO(last.dump() << " after " << took.count() << " ms");
        CHECK(shown);
        CHECK(last["source"] == "watcher");
    }
    // Its watcher gone, a look asks git again: nothing regresses.
    for (const auto& p : team::proc::scan_processes()) {
        std::string cmdline = team::proc::cmdline_of(p.pid);
        if (cmdline.find(std::string("__watch") + '\0') != std::string::npos &&
            cmdline.find(h.env.home().string()) != std::string::npos) {
            ::kill(p.pid, SIGKILL);
        }
    }
    write_file(wt / "README.md", "hello, again\n");
    CHECK(eventually([&] {
        auto s = h.state("w1");
        return s["source"] == "git" && s["modified"] == 1 && s["ahead"] == 1;
    }));
    h.ok({"teardown", "--grace", "1s"});
    h.check_nothing_left();
}

TEST_CASE(
    "worktree rm refuses while anything could be lost, removes a merged one, and --discard keeps a "
    "snapshot and the trash",
    "[worktree][sanitize]") {
    RepoHome h("wt-rm");
    const std::string commit = "git -c user.name=A -c user.email=a@a commit -q -am";
    h.spawn_wt("m", "printf 'merged\\n' >> README.md; " + commit + " m; exec sleep 600");
    h.spawn_wt("d", "printf 'dirty\\n' > d.txt; touch \"$TEAM_WORKTREE.done\"; exec sleep 600");
    REQUIRE(eventually([&] { return done(h, "d") && h.ref("team/wt-rm/m") != h.base; }));
    auto live = h.json_run({"worktree", "rm", "m"});
    CHECK(live.exit_code == 4);
    CHECK(live.out.find("is live") != std::string::npos);
    h.ok({"kill-agent", "m", "--force"});
    h.ok({"kill-agent", "d", "--force"});
    auto unmerged = h.json_run({"worktree", "rm", "m"});
    CHECK(unmerged.exit_code == 4);
    CHECK(unmerged.out.find("has commits not in") != std::string::npos);
    auto gc = h.ok({"worktree", "gc", "--dry-run"});
    for (const auto& w : gc["worktrees"]) CHECK(w["removed"] == false);
    // A squash merge leaves the branch patch-equivalent: then it may go, and its branch too.
    h.ok({"merge", "m", "--strategy", "squash"});
    auto removed = h.ok({"worktree", "rm", "m"});
    CHECK(removed["state"] == "removed");
    CHECK(!fs::exists(h.worktree("m")));
    auto kept = h.json_run({"worktree", "rm", "d"});
    CHECK(kept.exit_code == 4);
    CHECK(kept.out.find("uncommitted work") != std::string::npos);
    CHECK(fs::exists(h.worktree("d") / "d.txt"));
    auto discarded = h.ok({"worktree", "rm", "d", "--discard"});
    CHECK(discarded["state"] == "discarded");
    fs::path trash = discarded["trash"].get<std::string>();
    CHECK(slurp(trash / "worktree" / "d.txt") == "dirty\n");
    CHECK(fs::is_directory(trash / "git-admin"));  // git's record of it, with its index
    CHECK(!h.ref(discarded["snapshot"].get<std::string>()).empty());
    CHECK(!h.ref("team/wt-rm/d").empty());  // the branch stays
    auto unknown = h.json_run({"worktree", "rm", "nobody"});
    CHECK(unknown.exit_code == 3);
    h.check_nothing_left();
}

TEST_CASE(
    "a worktree deleted or moved by hand is reported missing, its branch and snapshots intact",
    "[worktree]") {
    RepoHome h("wt-gone");
    h.spawn_wt("w1", "printf 'x\\n' > x.txt; touch \"$TEAM_WORKTREE.done\"; exec sleep 600");
    REQUIRE(eventually([&] { return done(h, "w1"); }));
    h.ok({"kill-agent", "w1", "--force"});
    fs::remove_all(h.worktree("w1"));  // the user's own hand
    auto list = h.ok({"worktree", "list"});
    REQUIRE(list.size() == 1);
    CHECK(list[0]["missing"] == true);
    CHECK(list[0]["snapshots"].size() == 1);
    CHECK(!h.ref("team/wt-gone/w1").empty());
    auto rm = h.json_run({"worktree", "rm", "w1"});
    CHECK(rm.exit_code == 4);
    auto repair = h.ok({"worktree", "repair"});
    CHECK(repair["worktrees"][0]["after"].get<std::string>().find("missing") == 0);

    // Moved by hand: missing where it was, its work intact where it went; moved back, it is
    // present again.
    h.spawn_wt("w2", "printf 'y\n' > y.txt; touch \"$TEAM_WORKTREE.done\"; exec sleep 600");
    REQUIRE(eventually([&] { return done(h, "w2"); }));
    h.ok({"kill-agent", "w2", "--force"});
    fs::path away = h.env.dir() / "moved away";
    fs::rename(h.worktree("w2"), away);
    auto w2 = RepoHome::find(h.ok({"worktree", "list"}), "agent", "w2");
    CHECK(w2["missing"] == true);
    CHECK(!h.ref("team/wt-gone/w2").empty());
    CHECK(slurp(away / "y.txt") == "y\n");
    fs::rename(away, h.worktree("w2"));
    h.ok({"worktree", "repair"});
    w2 = RepoHome::find(h.ok({"worktree", "list"}), "agent", "w2");
    CHECK(w2["missing"] == false);
    CHECK(w2["untracked"] == 1);
    h.check_nothing_left();
}

TEST_CASE(
    "32 concurrent spawns --worktree in one repository all succeed, each on its branch, no orphan",
    "[worktree]") {
    RepoHome h("wt-many");
    std::vector<team::test::Child> children;
    for (int i = 0; i < 32; ++i) {
        children.push_back(h.env.start({"--json", "spawn", "a" + std::to_string(i), "--worktree",
                                        "--env", h.mark.entry(), "--", "sleep", "600"},
                                       h.extra()));
    }
    int ok = 0;
    for (auto& c : children) {
        auto r = c.wait();
        INFO(r.out << r.err);
        ok += r.exit_code == 0;
    }
    CHECK(ok == 32);
    auto branches =
        team::git::split_lines(h.git({"branch", "--list", "team/*", "--format=%(refname:short)"}));
    CHECK(branches.size() == 32);
    CHECK(h.ok({"worktree", "list"}).size() == 32);
    h.ok({"teardown", "--grace", "1s"});
    h.check_nothing_left();
}

TEST_CASE("a graceful stop and a --force-after deadline keep the work in a snapshot too",
          "[worktree]") {
    RepoHome h("wt-grace");
    // examples/agent answers its shutdown request; what it left uncommitted is kept.
    h.ok({"spawn", "g", "--worktree", "--env", h.mark.entry(), "--env",
          "TEAM_BIN=" + team::test::team_binary(), "--", team::test::kExampleAgent.string()});
    write_file(h.worktree("g") / "work.txt", "written before the stop\n");
    auto r = h.ok({"kill-agent", "g", "--wait", "--timeout", "20s"});
    INFO(r.dump());
    CHECK(r["phase"] == "confirmed");
    CHECK(r["worktree"]["snapshot"]["taken"] == true);
    CHECK(r["worktree"]["snapshot"]["untracked"] == 1);

    // A deadline enforced by the pane's supervisor, whatever happens to the command.
    h.spawn_wt("d", "printf 'late\\n' > late.txt; touch \"$TEAM_WORKTREE.done\"; exec sleep 600");
    REQUIRE(eventually([&] { return done(h, "d"); }));
    h.ok({"kill-agent", "d", "--force-after", "500ms"});
    CHECK(h.wait_terminated("d", 10000)["exitReason"] == "force_killed");
    Json d;
    REQUIRE(eventually([&] {
        d = RepoHome::find(h.ok({"worktree", "list"}), "agent", "d");
        return d["snapshot"].is_object();
    }));
    CHECK(d["snapshot"]["untracked"] == 1);
    CHECK(slurp(h.worktree("d") / "late.txt") == "late\n");
    h.check_nothing_left();
}

TEST_CASE(
    "SIGKILL while the agent holds index.lock, a merge in progress, only ignored files, a detached "
    "HEAD: nothing lost",
    "[worktree]") {
    RepoHome h("wt-hard");
    const std::string id = "-c user.name=A -c user.email=a@a";
    // index.lock held (a git of the agent's, stuck): the snapshot is taken from temporary
    // indexes all the same, and the lock is left as it was.
    h.spawn_wt("locked",
               "printf 'mid-write\\n' >> src/a.txt; printf 'new\\n' > n.txt;"
               " touch \"$(git rev-parse --git-dir)/index.lock\"; touch \"$TEAM_WORKTREE.done\"; "
               "exec sleep 600");
    // A merge stopped on a conflict: main moved on the same line.
    h.git({"checkout", "--quiet", "-b", "other"});
    write_file(h.repo / "src/a.txt", "uno\n");
    h.git({"commit", "--quiet", "-am", "other"});
    h.git({"checkout", "--quiet", "main"});
    h.spawn_wt(
        "merging",
        "printf 'dos\\n' > src/a.txt; git " + id + " commit -qam mine; git " + id +
            " merge -q other >/dev/null 2>&1; touch \"$TEAM_WORKTREE.done\"; exec sleep 600");
    h.spawn_wt(
        "ignored",
        "mkdir -p build; printf 'o' > build/x.o; touch \"$TEAM_WORKTREE.done\"; exec sleep 600");
    h.spawn_wt("detached",
               "git checkout -q --detach; printf 'd\\n' > d.txt; git add d.txt; git " + id +
                   " commit -qm detached; touch \"$TEAM_WORKTREE.done\"; exec sleep 600");
    REQUIRE(eventually([&] {
        return done(h, "locked") && done(h, "merging") && done(h, "ignored") && done(h, "detached");
    }));
    fs::path lock =
        h.git({"rev-parse", "--path-format=absolute", "--git-dir"}, h.worktree("locked"));
    lock = fs::path(team::git::first_line(lock.string())) / "index.lock";
    REQUIRE(fs::exists(lock));

    auto locked = h.ok({"kill-agent", "locked", "--force"})["worktree"]["snapshot"];
    INFO(locked.dump());
    CHECK(locked["taken"] == true);
    CHECK(locked["modified"] == 1);
    CHECK(locked["untracked"] == 1);
    CHECK(fs::exists(lock));  // never broken
    CHECK(slurp(h.worktree("locked") / "src/a.txt") == "one\ntwo\nthree\nmid-write\n");

    auto merging = h.ok({"kill-agent", "merging", "--force"})["worktree"]["snapshot"];
    INFO(merging.dump());
    CHECK(merging["taken"] == true);
    CHECK(merging["partial"] == true);
    CHECK(merging["unmerged"] == Json::array({"src/a.txt"}));
    CHECK(slurp(h.worktree("merging") / "src/a.txt").find("<<<<<<<") != std::string::npos);

    auto ignored = h.ok({"kill-agent", "ignored", "--force"})["worktree"]["snapshot"];
    CHECK(ignored["taken"] == false);
    CHECK(ignored["ignored"] == Json::array({".env", "build/"}));
    auto rm_ignored = h.json_run({"worktree", "rm", "ignored"});
    CHECK(rm_ignored.exit_code == 4);
    CHECK(rm_ignored.out.find("build/") != std::string::npos);
    CHECK(fs::exists(h.worktree("ignored") / "build/x.o"));

    h.ok({"kill-agent", "detached", "--force"});
    auto rm_detached = h.json_run({"worktree", "rm", "detached"});
    CHECK(rm_detached.exit_code == 4);
    CHECK(rm_detached.out.find("detached") != std::string::npos);
    CHECK(fs::exists(h.worktree("detached") / "d.txt"));

    // Another tool's `git worktree prune`, or its `worktree remove --force`, leaves the locked
    // worktrees alone (git wants --force twice for a locked one).
    h.git({"worktree", "prune"});
    CHECK(
        !git_try(h.repo, {"worktree", "remove", "--force", h.worktree("detached").string()}).ok());
    CHECK(fs::exists(h.worktree("detached") / "d.txt"));
    CHECK(h.ok({"worktree", "list"}).size() == 4);
    h.check_nothing_left();
}

TEST_CASE("team agents polled every 100 ms never breaks an agent committing in a loop",
          "[worktree]") {
    RepoHome h("wt-poll");
    h.spawn_wt("busy",
               "for i in $(seq 40); do printf \"$i\\n\" >> src/a.txt;"
               " git -c user.name=A -c user.email=a@a commit -qam \"c$i\" || echo \"$i\" >> "
               "\"$TEAM_WORKTREE.failed\";"
               " done; touch \"$TEAM_WORKTREE.done\"; exec sleep 600");
    int polls = 0;
    while (!done(h, "busy") && polls < 2000) {
        h.ok({"agents"});
        ++polls;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    CHECK(done(h, "busy"));
    CHECK(polls > 0);
    CHECK(!fs::exists(h.worktree("busy").string() + ".failed"));
    // The watcher records the last commit within its debounce (about half a second).
    CHECK(eventually([&] { return h.state("busy")["ahead"] == 40; }, bound(5000)));
    h.ok({"kill-agent", "busy", "--force"});
    h.check_nothing_left();
}

TEST_CASE(
    "spawn --worktree --reuse-branch starts a new agent in the kept worktree of an ended one, its "
    "work there",
    "[worktree]") {
    RepoHome h("wt-reuse");
    h.spawn_wt("w1",
               "printf 'draft\\n' > draft.txt; touch \"$TEAM_WORKTREE.done\"; exec sleep 600");
    REQUIRE(eventually([&] { return done(h, "w1"); }));
    h.ok({"kill-agent", "w1", "--force"});
    fs::remove(h.worktree("w1").string() + ".done");
    // Without --reuse-branch the branch is taken by the kept worktree: refused, and it says where.
    auto r = h.json_run({"spawn", "w1", "--worktree", "--", "sleep", "600"});
    CHECK(r.exit_code == 4);
    CHECK(r.out.find("is checked out in") != std::string::npos);
    auto doc =
        h.spawn_wt("w1", "cat draft.txt > seen.txt; touch \"$TEAM_WORKTREE.done\"; exec sleep 600",
                   {"--reuse-branch"});
    CHECK(doc["worktree"]["path"] == h.worktree("w1").string());
    REQUIRE(eventually([&] { return done(h, "w1"); }));
    CHECK(slurp(h.worktree("w1") / "seen.txt") == "draft\n");
    auto list = h.ok({"worktree", "list"});
    REQUIRE(list.size() == 1);
    CHECK(list[0]["live"] == true);
    h.ok({"kill-agent", "w1", "--force"});
    h.check_nothing_left();
}
