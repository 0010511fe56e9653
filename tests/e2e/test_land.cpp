// Landing agents' work (SPEC 20) end to end: the real binary, real tmux, real git on a
// repository each test makes (its path holding a space, a quote and unicode), each test on a
// home of its own. The agents are bash scripts that commit in their worktrees and wait. The
// tests prove: only a green branch lands, a conflicting or red one is reported, told and left
// as it was; the checkout of the target is clean and current; squash and rebase; a target
// moved during the check is taken again; a hanging check is ended at its timeout with its tree;
// a dry run, bad input, a second land and a dirty checkout change nothing.

#include <signal.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/agents_home.hpp"
#include "tests/support/git_repo.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/mcp_call.hpp"
#include "tests/support/process.hpp"

using team::test::bound;
using team::test::eventually;
using team::test::git_ok;
using team::test::git_try;
using team::test::mcp_call;
using team::test::slurp;
using team::test::write_file;
using Json = nlohmann::json;
using Env = std::map<std::string, std::string>;
namespace fs = std::filesystem;

namespace {

// The check every test's team has: a branch that adds red.txt is red.
const std::string kCheck = "echo checking \"$TEAM_LAND_BRANCH\"; test ! -e red.txt";

// A home whose team works in a repository of its own (branch main), with kCheck as its check.
class LandHome : public team::test::AgentsHome {
  public:
    explicit LandHome(const std::string& team) : AgentsHome(team, false) {
        repo = env.dir() / "land repo 'q' \xC3\xA9";
        team::test::init_repo(repo);
        write_file(repo / "README.md", "hello\n");
        write_file(repo / "src/a.txt", "one\ntwo\nthree\n");
        git({"add", "-A"});
        git({"commit", "--quiet", "-m", "first"});
        ok({"create", team, "--cwd", repo.string(), "--repo", repo.string(), "--check", kCheck});
    }

    std::string git(std::vector<std::string> args, const fs::path& cwd = {}) const {
        return git_ok(cwd.empty() ? repo : cwd, std::move(args));
    }
    std::string ref(const std::string& name) const {
        auto r = git_try(repo, {"rev-parse", "--verify", "--quiet", name});
        return r.ok() ? team::git::first_line(r.out) : "";
    }
    fs::path worktree(const std::string& name) const {
        return env.home() / "worktrees" / team() / name;
    }

    // A worktree agent that writes `files` (path → text), commits them (one commit each with
    // `each`), marks itself done and waits.
    void agent(const std::string& name,
               const std::vector<std::pair<std::string, std::string>>& files,
               bool each = false) const {
        std::string script = "set -e; g='git -c user.name=A -c user.email=a@a';";
        for (const auto& [path, text] : files) {
            script += " mkdir -p \"$(dirname '" + path + "')\"; printf '%s' '" + text + "' > '" +
                      path + "'; git add -A;";
            if (each) script += " $g commit -q -m '" + name + " " + path + "';";
        }
        if (!each) script += " $g commit -q -m '" + name + " work';";
        script += " touch \"$TEAM_WORKTREE.done\"; exec sleep 600";
        ok({"spawn", name, "--worktree", "--env", mark.entry(), "--", "bash", "-c", script});
        REQUIRE(eventually([&] { return fs::exists(worktree(name).string() + ".done"); },
                           bound(10000)));
    }

    // A commit on main in the repository's checkout.
    void commit_on_main(const std::string& path, const std::string& text) const {
        write_file(repo / path, text);
        git({"add", "-A"});
        git({"commit", "--quiet", "-m", "main: " + path});
    }

    // What a refused or failed request must leave as it was.
    std::string snapshot() const {
        return ref("main") + " " + git({"for-each-ref", "--format=%(refname) %(objectname)"}) +
               git({"worktree", "list", "--porcelain"}) + git({"status", "--porcelain"}) +
               ok({"lands", "--limit", "100"}).dump();
    }

    fs::path repo;
};

Json row_of(const Json& doc, const std::string& agent) {
    for (const auto& r : doc["branches"]) {
        if (r["agent"] == agent) return r;
    }
    return nullptr;
}

// The scratch worktrees git still lists (under the home's land directory).
int scratch_worktrees(const LandHome& h) {
    int n = 0;
    auto land = (h.env.home() / "land").string();
    for (const auto& line : team::test::lines_of(h.git({"worktree", "list", "--porcelain"}))) {
        if (line.rfind("worktree " + land, 0) == 0) ++n;
    }
    return n;
}

}  // namespace

TEST_CASE(
    "land: a good branch lands, a red and a conflicting one are reported, told and left as they "
    "were, the checkout clean and current",
    "[land][pg]") {
    LandHome h("land-three");
    h.agent("w1", {{"good.txt", "good\n"}});
    h.agent("w2", {{"red.txt", "red\n"}});
    h.agent("w3", {{"src/a.txt", "one\nTWO from w3\nthree\n"}});
    h.commit_on_main("src/a.txt", "one\nTWO from main\nthree\n");
    std::string main_before = h.ref("main");
    std::string w2_tip = h.ref("team/land-three/w2"), w3_tip = h.ref("team/land-three/w3");
    // They have ended (in this order), so the default takes them.
    for (const char* w : {"w1", "w2", "w3"}) h.ok({"kill-agent", w, "--force"});

    // The dry run says what would happen, runs no check and changes nothing.
    std::string before = h.snapshot();
    auto dry = h.ok({"land", "--dry-run"});
    CHECK(dry["dryRun"] == true);
    REQUIRE(dry["branches"].size() == 3);
    CHECK(dry["branches"][0]["agent"] == "w1");
    CHECK(dry["branches"][0]["outcome"] == "would_land");
    CHECK(dry["branches"][1]["outcome"] == "would_land");  // its check is not run
    CHECK(row_of(dry, "w3")["outcome"] == "conflict");
    CHECK(h.snapshot() == before);

    auto r = h.json_run({"land"});
    INFO(r.out << r.err);
    CHECK(r.exit_code == 1);  // two branches did not land
    auto doc = r.json();
    CHECK(doc["success"] == false);
    CHECK(doc["landed"] == 1);
    CHECK(doc["failed"] == 2);
    REQUIRE(doc["branches"].size() == 3);
    auto w1 = row_of(doc, "w1"), w2 = row_of(doc, "w2"), w3 = row_of(doc, "w3");
    CHECK(w1["outcome"] == "landed");
    CHECK(w1["previous"] == main_before);
    CHECK(w1["commit"] == h.ref("main"));
    CHECK(w2["outcome"] == "check_failed");
    CHECK(w2["exitCode"] == 1);
    CHECK(w2["outputTail"].get<std::string>().find("checking team/land-three/w2") !=
          std::string::npos);
    REQUIRE(w2["shellId"].is_string());
    CHECK(w3["outcome"] == "conflict");
    CHECK(w3["files"] == Json::array({"src/a.txt"}));

    // main: a merge of what it was and w1's branch; the others' branches as they were.
    CHECK(team::git::first_line(h.git({"rev-parse", "main^1"})) == main_before);
    CHECK(team::git::first_line(h.git({"rev-parse", "main^2"})) == h.ref("team/land-three/w1"));
    CHECK(h.ref("team/land-three/w2") == w2_tip);
    CHECK(h.ref("team/land-three/w3") == w3_tip);
    // The checkout (on main, clean) moved with it: clean, current, the landed file there.
    CHECK(h.git({"status", "--porcelain"}).empty());
    CHECK(team::git::first_line(h.git({"rev-parse", "HEAD"})) == h.ref("main"));
    CHECK(slurp(h.repo / "good.txt") == "good\n");
    CHECK_FALSE(fs::exists(h.repo / "red.txt"));
    // The red check's output is kept in its shell.
    auto out = h.ok({"shell", "output", w2["shellId"]});
    CHECK(out.dump().find("checking team/land-three/w2") != std::string::npos);
    // No scratch worktree left; the lands and the activity log say each.
    CHECK(scratch_worktrees(h) == 0);
    auto lands = h.ok({"lands"});
    REQUIRE(lands.size() == 1);
    CHECK(lands[0]["status"] == "done");
    CHECK(lands[0]["branches"].size() == 3);
    CHECK(h.activity("branch_landed").size() == 1);
    CHECK(h.activity("land_check_failed").size() == 1);
    CHECK(h.activity("land_conflict").size() == 1);
    // Their agents have ended: the leader is told, with the files, the code and the shell.
    auto inbox = h.ok({"inbox"});
    std::string told = inbox.dump();
    CHECK(told.find("land_conflict") != std::string::npos);
    CHECK(told.find("src/a.txt") != std::string::npos);
    CHECK(told.find("land_check_failed") != std::string::npos);
    CHECK(told.find(w2["shellId"].get<std::string>()) != std::string::npos);
    // Each from the agent it is about, not from the leader to itself.
    for (const auto& m : inbox) {
        if (m["type"] == "land_conflict") CHECK(m["from"] == "w3");
        if (m["type"] == "land_check_failed") CHECK(m["from"] == "w2");
    }

    // Again: w1 is in main, w2 still red, w3 still conflicts; nothing moves.
    std::string main_after = h.ref("main");
    auto again = h.json_run({"land", "w1", "w2", "w3"}).json();
    CHECK(row_of(again, "w1")["outcome"] == "skipped");
    CHECK(row_of(again, "w2")["outcome"] == "check_failed");
    CHECK(row_of(again, "w3")["outcome"] == "conflict");
    CHECK(h.ref("main") == main_after);
    CHECK(scratch_worktrees(h) == 0);
}

TEST_CASE(
    "land: squash and rebase strategies land each branch once, in the order named, and a live "
    "agent is told of its red check",
    "[land][sanitize]") {
    LandHome h("land-ways");
    h.ok({"config", "set", "idle-after", "500ms", "--team", "land-ways"});
    h.agent("s1", {{"s1/a.txt", "a\n"}, {"s1/b.txt", "b\n"}}, true);
    h.agent("s2", {{"s2/a.txt", "a\n"}}, true);
    h.agent("r1", {{"r1/a.txt", "a\n"}, {"r1/b.txt", "b\n"}}, true);
    h.agent("red", {{"red.txt", "x\n"}});
    std::string start = h.ref("main");
    std::string s1_tip = h.ref("team/land-ways/s1"), r1_tip = h.ref("team/land-ways/r1");

    // Squash, in the order named: one commit each, one parent, s2's first.
    auto squash = h.ok({"land", "s2", "s1", "--strategy", "squash"});
    CHECK(squash["branches"][0]["agent"] == "s2");
    CHECK(squash["branches"][0]["outcome"] == "landed");
    CHECK(squash["branches"][1]["outcome"] == "landed");
    CHECK(h.git({"rev-list", "--count", start + "..main"}) == "2\n");
    CHECK(h.git({"rev-list", "--merges", "--count", start + "..main"}) == "0\n");
    CHECK(h.git({"log", "-1", "--format=%s", "main~1"}).find("team/land-ways/s2") !=
          std::string::npos);
    CHECK(h.ref("team/land-ways/s1") == s1_tip);
    // Landed already: skipped, not squashed twice.
    auto twice = h.ok({"land", "s1", "--strategy", "squash"});
    CHECK(twice["branches"][0]["outcome"] == "skipped");
    CHECK(twice["branches"][0]["why"].get<std::string>().find("landed already") !=
          std::string::npos);
    CHECK(h.git({"rev-list", "--count", start + "..main"}) == "2\n");

    // Rebase: r1's two commits replayed on main (which has moved), its own branch untouched.
    std::string before = h.ref("main");
    // (Its check scribbles on a tracked file and leaves files behind: the scratch goes all the
    // same.)
    auto rebase = h.ok({"land", "r1", "--strategy", "rebase", "--check",
                        "echo scribble >> README.md; mkdir -p build; touch build/x.o new.txt"});
    CHECK(scratch_worktrees(h) == 0);
    CHECK_FALSE(fs::exists(h.env.home() / "land" / "land-ways-3"));
    CHECK(rebase["branches"][0]["outcome"] == "landed");
    CHECK(h.git({"rev-list", "--count", before + "..main"}) == "2\n");
    CHECK(h.git({"rev-list", "--merges", "--count", before + "..main"}) == "0\n");
    CHECK(team::git::first_line(h.git({"rev-parse", "main~2"})) == before);
    CHECK(h.ref("team/land-ways/r1") == r1_tip);
    CHECK(slurp(h.repo / "r1/b.txt") == "b\n");
    CHECK(h.git({"status", "--porcelain"}).empty());
    auto again = h.ok({"land", "r1", "--strategy", "rebase"});
    CHECK(again["branches"][0]["outcome"] == "skipped");

    // A live agent's red check: the agent is told, not the leader.
    // Whatever the check prints (not UTF-8 here, and a character cut by the tail's end) is kept
    // as valid text.
    std::string latin =
        "printf '\xE2\x82\xAC%.0s' $(seq 1400); printf '\\ncaf\\351 failed\\n'; exit 1";
    auto odd = h.json_run({"land", "red", "--check", latin});
    CHECK(odd.exit_code == 1);
    auto odd_row = odd.json()["branches"][0];
    CHECK(odd_row["outcome"] == "check_failed");
    CHECK(odd_row["outputTail"].get<std::string>().find("\xEF\xBF\xBD failed") !=
          std::string::npos);
    REQUIRE(h.ok({"inbox", "--agent", "red", "--mark-read"}).size() == 1);
    auto red = h.json_run({"land", "red"}).json();
    CHECK(red["branches"][0]["outcome"] == "check_failed");
    auto inbox = h.ok({"inbox", "--agent", "red", "--unread"});
    REQUIRE(inbox.size() == 1);
    CHECK(inbox[0]["type"] == "land_check_failed");
    CHECK(inbox[0]["text"].get<std::string>().find("test ! -e red.txt") != std::string::npos);
    CHECK(h.ok({"inbox"}).empty());
    CHECK(scratch_worktrees(h) == 0);

    // By default: a live agent once it is idle (its screen still), not one still at work (its
    // screen busy), and none whose branch landed.
    h.ok({"spawn", "busy", "--worktree", "--env", h.mark.entry(), "--", "bash", "-c",
          "echo b > busy.txt; git add -A; git -c user.name=A -c user.email=a@a commit -qm busy; "
          "while :; do echo working; sleep 0.1; done"});
    REQUIRE(eventually(
        [&] {
            return !h.ref("team/land-ways/busy").empty() &&
                   h.ref("team/land-ways/busy") != h.ref("main");
        },
        bound(10000)));
    h.ok({"wait", "red", "--until", "idle", "--timeout", "20s"});
    h.ok({"wait", "busy", "--until", "working", "--timeout", "20s"});
    auto by_default = h.ok({"land", "--dry-run"});
    REQUIRE(by_default["branches"].size() == 1);
    CHECK(by_default["branches"][0]["agent"] == "red");
}

TEST_CASE(
    "land: a target moved during the check is taken again onto its new tip, and a check that "
    "hangs is ended at its timeout with its tree",
    "[land]") {
    LandHome h("land-moves");
    h.agent("w1", {{"w1.txt", "w1\n"}});
    // The check moves main the first time it runs (a person committing meanwhile).
    fs::path mark = h.env.dir() / "moved-once";
    Env more = {{"LAND_REPO", h.repo.string()}, {"LAND_MARK", mark.string()}};
    std::string mover =
        "if [ ! -e \"$LAND_MARK\" ]; then touch \"$LAND_MARK\"; "
        "git -C \"$LAND_REPO\" -c user.name=P -c user.email=p@p commit -q --allow-empty -m "
        "meanwhile; fi";
    auto r = h.json_run({"land", "w1", "--check", mover}, more);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    auto row = r.json()["branches"][0];
    CHECK(row["outcome"] == "landed");
    CHECK(row["attempts"] == 2);
    CHECK(h.git({"log", "-1", "--format=%s", "main^1"}) == "meanwhile\n");
    CHECK(team::git::first_line(h.git({"rev-parse", "main^2"})) == h.ref("team/land-moves/w1"));
    CHECK(h.git({"rev-list", "--merges", "--count", "main"}) == "1\n");

    // A check that hangs, its child in the background: ended at 1s, its whole tree gone.
    h.agent("w2", {{"w2.txt", "w2\n"}});
    fs::path pidfile = h.env.dir() / "hang.pid";
    more["LAND_PID"] = pidfile.string();
    std::string main_before = h.ref("main");
    auto hang = h.json_run({"land", "w2", "--check", "sleep 600 & echo $! > \"$LAND_PID\"; wait",
                            "--check-timeout", "1s"},
                           more);
    CHECK(hang.exit_code == 1);
    auto hung = hang.json()["branches"][0];
    CHECK(hung["outcome"] == "check_failed");
    CHECK(hung["why"].get<std::string>().find("timed out") != std::string::npos);
    REQUIRE(fs::exists(pidfile));
    pid_t child = std::stoi(slurp(pidfile));
    CHECK(eventually([&] { return !team::test::alive(child); }));
    CHECK(h.ref("main") == main_before);
    CHECK(scratch_worktrees(h) == 0);

    // A Ctrl-C during the check: the check ended with its tree, the land finished (its branch
    // interrupted, the scratch worktree removed), nothing landed.
    fs::remove(pidfile);
    team::test::Child land({team::test::team_binary(), "--json", "land", "w2", "--check",
                            "sleep 600 & echo $! > \"$LAND_PID\"; wait"},
                           h.env.environment(h.extra(more)));
    REQUIRE(
        eventually([&] { return fs::exists(pidfile) && !slurp(pidfile).empty(); }, bound(10000)));
    ::kill(land.pid(), SIGINT);
    auto cancelled = land.wait();
    CHECK(cancelled.exit_code == 1);
    CHECK(cancelled.out.find("cancelled") != std::string::npos);
    pid_t check_child = std::stoi(slurp(pidfile));
    CHECK(eventually([&] { return !team::test::alive(check_child); }));
    auto last = h.ok({"lands", "--limit", "1"})[0];
    CHECK(last["status"] == "interrupted");
    CHECK(last["branches"][0]["outcome"] == "interrupted");
    CHECK(h.ref("main") == main_before);
    CHECK(scratch_worktrees(h) == 0);
}

TEST_CASE(
    "land: bad input, a second land while one runs, a dirty checkout and not the leader change "
    "nothing, and the check is one argument to sh",
    "[land]") {
    LandHome h("land-bad");
    h.agent("w1", {{"w1.txt", "w1\n"}});
    h.ok({"spawn", "plain", "--", "sleep", "600"});
    std::string before = h.snapshot();
    struct Bad {
        std::vector<std::string> args;
        int code;
    };
    std::string big(100 * 1024, 'a');  // an argument's most is 128 KiB; MCP below takes 1 MiB
    for (const Bad& bad : std::vector<Bad>{
             {{"land", "nobody"}, 3},
             {{"land", "plain"}, 4},
             {{"land", "w1", "w1"}, 2},
             {{"land", "a;b"}, 2},
             {{"land", "$(touch /tmp/x)"}, 2},
             {{"land", "w\n1"}, 2},
             {{"land", big}, 2},
             {{"land", "--into", "nowhere"}, 3},
             {{"land", "--into", "v1"}, 2},  // a tag, made below
             {{"land", "--strategy", "ff"}, 2},
             {{"land", "--strategy", "octopus"}, 2},
             {{"land", "--check", ""}, 2},
             {{"land", "--check", "true\nrm -rf /"}, 2},
             {{"land", "--check-timeout", "0s"}, 2},
             {{"land", "--check-timeout", "soon"}, 2},
         }) {
        if (bad.args.size() > 2 && bad.args[2] == "v1") h.git({"tag", "v1"});
        auto r = h.json_run(bad.args);
        INFO(bad.args[1].substr(0, 40) << " -> " << r.out.substr(0, 300) << r.err.substr(0, 300));
        CHECK(r.exit_code == bad.code);
        CHECK(r.json()["success"] == false);
        if (bad.args.size() > 2 && bad.args[2] == "v1") h.git({"tag", "-d", "v1"});
        CHECK(h.snapshot() == before);
    }
    // Not the leader: refused.
    auto as_agent = h.json_run({"land"}, h.as("w1"));
    CHECK(as_agent.exit_code == 4);
    CHECK(h.snapshot() == before);

    // The check is handed to sh as one argument, never spliced: sh's own command line holds it.
    fs::path argv_file = h.env.dir() / "argv";
    std::string hostile = "cat /proc/$$/cmdline > \"$LAND_ARGV\" # it's; $(x) `y` \"z\" \xC3\xA9";
    auto r = h.json_run({"land", "w1", "--check", hostile}, {{"LAND_ARGV", argv_file.string()}});
    REQUIRE(r.exit_code == 0);
    CHECK(slurp(argv_file) == std::string("/bin/sh") + '\0' + "-c" + '\0' + hostile + '\0');

    // A dirty checkout of the target holds the land, with nothing changed; the dry run warns.
    h.agent("w2", {{"w2.txt", "w2\n"}});
    write_file(h.repo / "README.md", "hello, mine\n");
    before = h.snapshot();
    auto dirty = h.json_run({"land", "w2"});
    CHECK(dirty.exit_code == 4);
    CHECK(dirty.json()["error"].get<std::string>().find("uncommitted") != std::string::npos);
    CHECK(h.snapshot() == before);
    CHECK(h.ok({"land", "w2", "--dry-run"})["warning"].is_string());
    h.git({"checkout", "--", "README.md"});

    // A second land while one runs is refused (exit 4), and the first goes on to land.
    fs::path go = h.env.dir() / "go";
    Env more = {{"LAND_GO", go.string()}};
    team::test::Child first({team::test::team_binary(), "--json", "land", "w2", "--check",
                             "while [ ! -e \"$LAND_GO\" ]; do sleep 0.05; done"},
                            h.env.environment(h.extra(more)));
    REQUIRE(eventually([&] {
        auto lands = h.ok({"lands", "--limit", "1"});
        return !lands.empty() && lands[0]["status"] == "running" &&
               lands[0]["branches"][0]["outcome"] == "checking";
    }));
    auto second = h.json_run({"land", "w2"});
    CHECK(second.exit_code == 4);
    CHECK(second.json()["error"].get<std::string>().find("is running") != std::string::npos);
    write_file(go, "");
    auto done = first.wait();
    CHECK(done.exit_code == 0);
    CHECK(Json::parse(done.out)["branches"][0]["outcome"] == "landed");

    // The MCP face gives the same answers.
    auto plan = mcp_call(h, "land", {{"dry_run", true}});
    CHECK(plan["structuredContent"] == h.ok({"land", "--dry-run"}));
    auto unknown = mcp_call(h, "land", {{"names", {"nobody"}}});
    CHECK(unknown["isError"] == true);
    CHECK(unknown["structuredContent"]["code"] == "not_found");
    auto huge = mcp_call(h, "land", {{"names", {std::string(1 << 20, 'a')}}, {"check", "$(x)\n;"}});
    CHECK(huge["isError"] == true);
    CHECK(huge["structuredContent"]["code"] == "usage");
    auto history = mcp_call(h, "land_history", {{"limit", 1}});
    CHECK(history["structuredContent"]["items"] == h.ok({"lands", "--limit", "1"}));

    // And the HTTP face; garbage on the wire is a clear error, and the server goes on serving.
    team::test::Serve serve(h);
    auto posted = serve.post("/api/teams/land-bad/land", {{"dry_run", true}});
    CHECK(posted.status == 200);
    CHECK(posted.json() == h.ok({"land", "--dry-run"}));
    auto listed = serve.get("/api/teams/land-bad/lands?limit=1");
    CHECK(listed.status == 200);
    CHECK(listed.json() == h.ok({"lands", "--limit", "1"}));
    auto garbage = serve.request("POST", "/api/teams/land-bad/land", "{\"names\": [1, {");
    CHECK(garbage.status == 400);
    auto nobody = serve.post("/api/teams/land-bad/land", {{"names", {"nobody"}}});
    CHECK(nobody.status == 404);
    CHECK(serve.get("/api/teams/land-bad/lands").status == 200);
    serve.stop();
}
