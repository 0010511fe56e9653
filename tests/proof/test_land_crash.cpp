// Issue 42, landing under crashes (SPEC 20): `team land` of five branches (four green, one red:
// the team's check fails on it) SIGKILLed (only `team`, as a crash would end it: the check's
// detached shell lives on) at a random moment, then `team land` run again to its end. Whatever
// the moment, the target then holds exactly the green branches, each once (merge: one merge
// each; squash: one squashed commit each; rebase: each commit once), the red one's nothing; no
// scratch worktree, no directory under <home>/land, no running shell and no land lock is left;
// no land is still recorded running; and the target's checkout (the repository's main one, on
// the target) is clean and at the target.
//
// Each round is a home of its own: a repository whose path holds a space and non-ASCII letters,
// a team created with --repo and a check that sleeps a round's own 50 to 300 ms (so that many
// kills fall during a check) and fails when red.txt exists; five worktree agents (`sleep 1000`)
// whose branches the test commits to, landed in an order of the round's own. The rounds cycle
// through merge, squash and rebase. The delay before the SIGKILL comes from std::mt19937(seed),
// uniform in [0, 1.2 x] the median of the uninterrupted lands so far (one calibration land at the
// start, then every round's land that ended before its SIGKILL). A round whose land ended before
// the kill proves little, so the test counts where the kills fell (before the first check,
// during a check, while the target moved, between branches; after a landing or not), prints it
// (WARN) and requires that at least a quarter of the rounds were interrupted, as test_crash.cpp
// does. TEAM_CRASH_SEED=N runs round N alone. (12 rounds: some 26 s on a quiet 2-core machine,
// 45 s on a loaded one; 80 rounds held too.)
//
// Three moments the random kills seldom hit follow, each at a fixed point (each found a bug):
// the kill while the git that moves the target runs, that git ending after the next land's
// look (squash landed twice); while the git that adds the scratch worktree runs (a scratch left
// behind); and during a check, the home named through a symbolic link (the check left running,
// the scratch left behind).
#include <SQLiteCpp/SQLiteCpp.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/programs.hpp"
#include "tests/support/agents_home.hpp"
#include "tests/support/git_repo.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/process.hpp"

using team::test::bound;
using team::test::Child;
using team::test::eventually;
using team::test::git_ok;
using team::test::git_try;
using team::test::RunResult;
using Json = nlohmann::json;
using Us = std::chrono::microseconds;
using Steady = std::chrono::steady_clock;
namespace fs = std::filesystem;

namespace {

constexpr unsigned kFirstSeed = 42000;
constexpr unsigned kRounds = 12;
const std::vector<std::string> kStrategies{"merge", "squash", "rebase"};
const std::vector<std::string> kGreen{"g1", "g2", "g3", "g4"};
const std::string kRed = "r1";

std::vector<unsigned> rounds() {
    if (const char* only = std::getenv("TEAM_CRASH_SEED"); only && *only) {
        return {static_cast<unsigned>(std::stoul(only))};
    }
    std::vector<unsigned> out;
    for (unsigned i = 0; i < kRounds; ++i) out.push_back(kFirstSeed + i);
    return out;
}

std::string shown(const RunResult& r) {
    return std::to_string(r.exit_code) + " " + r.out.substr(0, 3000) + " " + r.err.substr(0, 2000);
}

// The subjects of the commits a green or red agent makes: one or two, each naming its agent.
std::vector<std::string> subjects_of(const std::string& agent, unsigned seed) {
    std::vector<std::string> out{agent + ": first work of round " + std::to_string(seed)};
    if ((seed + agent.back()) % 2 == 0) out.push_back(agent + ": more work");
    return out;
}

std::string content_of(const std::string& agent, unsigned seed) {
    return agent + " of round " + std::to_string(seed) + " \xC3\xA9\n";
}

// One round's home: team "landing" on a repository of its own, with five worktree agents whose
// branches hold commits.
class LandHome : public team::test::AgentsHome {
  public:
    LandHome(unsigned seed, const std::string& check) : AgentsHome("landing", false) {
        repo = env.dir() / "the repo \xC3\xA9\xE6\x97\xA5";  // "the repo é日"
        team::test::init_repo(repo);
        team::test::write_file(repo / "README.md", "hello\n");
        git_ok(repo, {"add", "-A"});
        git_ok(repo, {"commit", "--quiet", "-m", "first"});
        ok({"create", team(), "--cwd", env.dir().string(), "--repo", repo.string(), "--check",
            check});
        std::vector<std::string> all = kGreen;
        all.push_back(kRed);
        for (const auto& name : all) {
            ok({"spawn", name, "--worktree", "--env", mark.entry(), "--", "sleep", "1000"});
            fs::path wt = env.home() / "worktrees" / team() / name;
            auto subjects = subjects_of(name, seed);
            for (std::size_t i = 0; i < subjects.size(); ++i) {
                std::string content = content_of(name, seed);
                if (i > 0) content += "more\n";
                team::test::write_file(wt / (name + ".txt"), content);
                if (name == kRed) team::test::write_file(wt / "red.txt", "red\n");
                git_ok(wt, {"add", "-A"});
                git_ok(wt, {"commit", "--quiet", "-m", subjects[i]});
            }
        }
    }

    fs::path repo;

    std::string branch(const std::string& agent) const { return "team/" + team() + "/" + agent; }

    std::unique_ptr<SQLite::Database> db() const {
        auto db = std::make_unique<SQLite::Database>((env.home() / "team.db").string(),
                                                     SQLite::OPEN_READONLY);
        db->setBusyTimeout(10000);
        return db;
    }

    fs::path land_dir() const { return env.home() / "land"; }
};

// Whether some process holds the team's land lock (an flock on <home>/locks/land-*.lock).
bool lock_held(const LandHome& h) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(h.env.home() / "locks", ec)) {
        if (e.path().filename().string().rfind("land-", 0) != 0) continue;
        int fd = ::open(e.path().c_str(), O_RDWR | O_CLOEXEC);
        if (fd < 0) continue;
        bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0;
        ::close(fd);
        if (held) return true;
    }
    return false;
}

// Where the kill left the land, from its rows.
std::string where_of(const LandHome& h) {
    auto db = h.db();
    SQLite::Statement lands(*db, "SELECT id FROM lands ORDER BY id DESC LIMIT 1");
    if (!lands.executeStep()) return "before the land was recorded";
    auto id = lands.getColumn(0).getInt64();
    SQLite::Statement items(*db, "SELECT state FROM land_items WHERE land_id = ?");
    items.bind(1, id);
    bool checking = false, landing = false, decided = false, landed = false;
    while (items.executeStep()) {
        std::string state = items.getColumn(0).getString();
        checking = checking || state == "checking";
        landing = landing || state == "landing";
        landed = landed || state == "landed";
        decided = decided || (state != "queued" && state != "checking" && state != "landing");
    }
    std::string phase = checking  ? "during a check"
                        : landing ? "while the target moved"
                        : decided ? "between branches"
                                  : "before the first check";
    return phase + (landed ? ", after a landing" : "");
}

class Tally {
  public:
    void add(bool interrupted, const std::string& where) {
        ++runs_;
        if (interrupted) ++interrupted_;
        ++where_[interrupted ? where : "finished before the kill"];
    }
    // Prints the counts; requires that at least a quarter of the rounds were interrupted (as
    // test_crash.cpp's Tally does: a loaded machine is slower, the kill may come late).
    void report(const std::string& spans) const {
        std::string text = "land: " + std::to_string(interrupted_) + " of " +
                           std::to_string(runs_) + " rounds interrupted (uninterrupted: " + spans +
                           ")";
        for (const auto& [where, n] : where_) text += "; " + where + ": " + std::to_string(n);
        WARN(text);
        if (runs_ > 1) REQUIRE(interrupted_ * 4 >= runs_);
    }

  private:
    int runs_ = 0, interrupted_ = 0;
    std::map<std::string, int> where_;
};

// Waits until `delay` after `begun`, then SIGKILLs the child (only it), unless it has ended
// by then (not reaped: its pid stays its own). Returns when it ended, or the delay: a land that
// ended before its kill gives its own duration, not the delay, to the span kills are drawn from.
Us ended_or_killed(const Child& child, Steady::time_point begun, Us delay) {
    for (;;) {
        siginfo_t info{};
        if (::waitid(P_PID, static_cast<id_t>(child.pid()), &info, WEXITED | WNOHANG | WNOWAIT) ==
                0 &&
            info.si_pid == child.pid()) {
            return std::chrono::duration_cast<Us>(Steady::now() - begun);
        }
        auto now = Steady::now();
        if (now - begun >= delay) {
            ::kill(child.pid(), SIGKILL);
            return delay;
        }
        std::this_thread::sleep_for(
            std::min<Steady::duration>(begun + delay - now, std::chrono::milliseconds(2)));
    }
}

Us median(std::vector<Us> took) {
    std::sort(took.begin(), took.end());
    return took[took.size() / 2];
}

// The round's check: a sleep of its own, then red.txt must not exist.
std::string check_for(std::mt19937& rng) {
    std::uniform_int_distribution<int> ms(50, 300);
    char delay[16];
    std::snprintf(delay, sizeof delay, "%d.%03d", 0, ms(rng));
    return std::string("sleep ") + delay + " && test ! -e red.txt";
}

// `team --json land` of the five agents in an order of the round's own.
std::vector<std::string> land_args(const std::string& strategy, std::mt19937& rng) {
    std::vector<std::string> order = kGreen;
    order.push_back(kRed);
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<std::string> args{"--json", "land"};
    args.insert(args.end(), order.begin(), order.end());
    args.insert(args.end(), {"--strategy", strategy});
    return args;
}

// The subjects of the target's history, newest first.
std::vector<std::string> subjects(const LandHome& h, bool merges_only = false) {
    std::vector<std::string> args{"log", "--format=%s", "main"};
    if (merges_only) args.insert(args.begin() + 1, "--merges");
    return team::test::lines_of(git_ok(h.repo, args));
}

int count_with(const std::vector<std::string>& lines, const std::string& part) {
    return static_cast<int>(std::count_if(lines.begin(), lines.end(), [&](const std::string& l) {
        return l.find(part) != std::string::npos;
    }));
}

// No scratch worktree: none listed by git, nothing under <home>/land.
void check_no_scratch_left(const LandHome& h) {
    auto worktrees = git_ok(h.repo, {"worktree", "list", "--porcelain"});
    INFO("worktrees:\n" << worktrees);
    CHECK(worktrees.find(h.land_dir().string()) == std::string::npos);
    std::error_code ec;
    std::vector<std::string> left;
    for (const auto& e : fs::directory_iterator(h.land_dir(), ec)) left.push_back(e.path());
    CHECK(left == std::vector<std::string>{});
}

// What holds after the second land, whatever the moment of the kill.
void check_landed(const LandHome& h, unsigned seed, const std::string& strategy) {
    INFO("main's history:\n" << git_ok(h.repo, {"log", "--format=%h %p %s", "main"}));
    // The target's files: README.md and each green agent's file, as its branch has it.
    std::vector<std::string> expected{"README.md"};
    for (const auto& g : kGreen) expected.push_back(g + ".txt");
    std::sort(expected.begin(), expected.end());
    CHECK(team::test::lines_of(git_ok(h.repo, {"ls-tree", "--name-only", "main"})) == expected);
    for (const auto& g : kGreen) {
        INFO("agent " << g << " (" << strategy << ")");
        CHECK(git_ok(h.repo, {"show", "main:" + g + ".txt"}) ==
              git_ok(h.repo, {"show", h.branch(g) + ":" + g + ".txt"}));
        auto all = subjects(h);
        for (const auto& s : subjects_of(g, seed)) {
            CHECK(count_with(all, s) == (strategy == "squash" ? 0 : 1));
        }
        if (strategy == "merge") {
            CHECK(git_try(h.repo, {"merge-base", "--is-ancestor", h.branch(g), "main"}).ok());
            CHECK(count_with(subjects(h, true), "branch '" + h.branch(g) + "'") == 1);
        } else if (strategy == "squash") {
            CHECK(count_with(all, "Squashed branch '" + h.branch(g) + "'") == 1);
        }
    }
    for (const auto& s : subjects_of(kRed, seed)) CHECK(count_with(subjects(h), s) == 0);
    CHECK(count_with(subjects(h), "'" + h.branch(kRed) + "'") == 0);

    // No scratch worktree, nothing under <home>/land.
    check_no_scratch_left(h);

    // No running shell, no land recorded running or undecided.
    CHECK(h.ok({"shell", "list"}) == Json::array());
    {
        auto db = h.db();
        CHECK(db->execAndGet("SELECT count(*) FROM lands WHERE status = 'running'").getInt() == 0);
        CHECK(db->execAndGet("SELECT count(*) FROM land_items WHERE decided_at IS NULL").getInt() ==
              0);
    }

    // The main checkout: on main, at main, clean.
    CHECK(git_ok(h.repo, {"symbolic-ref", "HEAD"}) == "refs/heads/main\n");
    CHECK(git_ok(h.repo, {"rev-parse", "HEAD"}) == git_ok(h.repo, {"rev-parse", "main"}));
    CHECK(git_ok(h.repo, {"status", "--porcelain"}).empty());

    // The lock is free: nothing holds it, and a land runs (it has nothing to do: every agent
    // still works, and `r1` is red).
    CHECK_FALSE(lock_held(h));
    auto third = h.json_run({"land", "--strategy", strategy});
    INFO("a third land -> " << shown(third));
    CHECK(third.exit_code == 0);
}

// A git on the PATH that holds the first command whose arguments match `pattern` (a sh case
// pattern of " ARGS ") until the test removes the gate (<dir>/git-gate; .reached once held, .done
// once that git has ended): the environment of a `team` that runs it.
team::test::TeamHome::Env gated_git(const LandHome& h, const std::string& pattern) {
    const char* path = std::getenv("PATH");
    auto real_git = team::find_program("git", path ? path : "");
    REQUIRE(real_git);
    auto bin = h.env.dir() / "gated-bin";
    auto gate = h.env.dir() / "git-gate";
    fs::create_directories(bin);
    team::test::write_file(bin / "git",
                           "#!/bin/sh\n"
                           "case \" $* \" in " +
                               pattern +
                               ")\n"
                               "  if [ ! -e \"$GIT_GATE.reached\" ]; then\n"
                               "    : > \"$GIT_GATE.reached\"\n"
                               "    while [ -e \"$GIT_GATE\" ]; do sleep 0.01; done\n"
                               "    '" +
                               *real_git +
                               "' \"$@\"; rc=$?\n"
                               "    : > \"$GIT_GATE.done\"; exit $rc\n"
                               "  fi;;\n"
                               "esac\n"
                               "exec '" +
                               *real_git + "' \"$@\"\n");
    fs::permissions(bin / "git", fs::perms::owner_all);
    team::test::write_file(gate, "");
    return h.extra(
        {{"PATH", bin.string() + ":" + (path ? path : "")}, {"GIT_GATE", gate.string()}});
}

}  // namespace

TEST_CASE("crash: land of five branches, then land again", "[crash][serial]") {
    // Calibration: one land run to its end (merge, the first strategy), on a home of its own.
    std::vector<Us> seen;
    {
        std::mt19937 rng(kFirstSeed - 1);
        LandHome h(kFirstSeed - 1, check_for(rng));
        auto args = land_args("merge", rng);
        auto started = Steady::now();
        auto r = h.env.start(args, h.extra()).wait();
        seen.push_back(std::chrono::duration_cast<Us>(Steady::now() - started));
        INFO("uninterrupted land -> " << shown(r));
        REQUIRE(r.exit_code == 1);  // r1 failed its check
        check_landed(h, kFirstSeed - 1, "merge");
        h.finish();
    }
    std::string spans = std::to_string(seen[0].count() / 1000) + "ms";

    Tally tally;
    auto started = Steady::now();
    for (unsigned seed : rounds()) {
        std::mt19937 rng(seed);
        std::string strategy = kStrategies[seed % kStrategies.size()];
        std::string check = check_for(rng);
        std::uniform_int_distribution<long long> pick(0, median(seen).count() * 6 / 5);
        Us delay(pick(rng));
        INFO("round " << seed << " (" << strategy << ", check " << check << "), SIGKILL after "
                      << delay.count() << "us");
        LandHome h(seed, check);
        auto args = land_args(strategy, rng);

        auto begun = Steady::now();
        Child child = h.env.start(args, h.extra());
        Us took = ended_or_killed(child, begun, delay);
        RunResult crashed = child.wait();
        bool interrupted = crashed.exit_code == 128 + SIGKILL;
        INFO("the crashed land -> " << shown(crashed));
        if (!interrupted) {
            CHECK(crashed.exit_code == 1);
            seen.push_back(took);
        }
        std::string where = interrupted ? where_of(h) : "";
        INFO("the kill left: " << (interrupted ? where : "(not interrupted)"));
        tally.add(interrupted, where);
        // `team` is gone: nothing holds the lock (the check's shell never inherits it; a child
        // that team was starting at the kill, between its fork and its exec, shares the lock's
        // open file until its exec closes it: a moment, once seen in 80 rounds under load).
        CHECK(eventually([&] { return !lock_held(h); }, bound(2000)));

        auto again = h.env.start(args, h.extra()).wait();
        INFO("the land again -> " << shown(again));
        CHECK(again.exit_code == 1);  // r1 fails its check again
        auto doc = Json::parse(again.out, nullptr, false);
        if (doc.is_object() && doc["branches"].is_array()) {
            for (const auto& row : doc["branches"]) {
                INFO(row.dump());
                if (row["agent"] == kRed) {
                    CHECK(row["outcome"] == "check_failed");
                } else {
                    CHECK((row["outcome"] == "landed" || row["outcome"] == "skipped"));
                }
            }
        }
        check_landed(h, seed, strategy);
        h.finish();
    }
    auto took = std::chrono::duration_cast<std::chrono::seconds>(Steady::now() - started);
    WARN("land: " << took.count() << "s for the rounds");
    tally.report(spans);
}

// A moment the random kills seldom hit: `team land --strategy squash` killed while the git that
// moves the target (`git merge --ff-only` in the main checkout) runs. That git outlives it (a git
// on the PATH holds it until the test lets it go): the next land finds the branch `landing` with
// a candidate the target does not hold yet and records it interrupted; then the held git moves
// the target to the squashed commit. The land must see that the branch has landed (its recorded
// candidate is on the target) and not land it a second time, as an empty squashed commit.
TEST_CASE(
    "crash: land killed while its git moves the target, that git ending after the next land's look",
    "[crash][serial]") {
    const unsigned seed = 42999;
    LandHome h(seed, "test ! -e red.txt");
    auto gated = gated_git(h, "*\" merge \"*\" --ff-only \"*");
    auto gate = h.env.dir() / "git-gate";
    std::vector<std::string> args{"--json", "land", "g1", "--strategy", "squash"};
    Child child = h.env.start(args, gated);
    REQUIRE(eventually([&] { return fs::exists(gate.string() + ".reached"); }, bound(20000)));
    ::kill(child.pid(), SIGKILL);
    REQUIRE(child.wait().exit_code == 128 + SIGKILL);
    CHECK(where_of(h) == "while the target moved");

    // The next land (same PATH: its own merge passes the gate) finds the first one killed; once
    // it has recorded g1 interrupted, the held git goes on and moves main.
    std::thread release([&] {
        eventually(
            [&] {
                auto db = h.db();
                return db->execAndGet(
                             "SELECT count(*) FROM land_items WHERE land_id = 1 AND "
                             "state = 'interrupted'")
                           .getInt() == 1;
            },
            bound(20000));
        fs::remove(gate);
    });
    auto again = h.env.start(args, gated).wait();
    release.join();
    INFO("the land again -> " << shown(again));
    CHECK(again.exit_code == 0);
    auto doc = Json::parse(again.out, nullptr, false);
    REQUIRE(doc.is_object());
    REQUIRE(doc["branches"].size() == 1);
    CHECK(doc["branches"][0]["outcome"] == "skipped");
    CHECK_THAT(doc["branches"][0].value("why", std::string()), Catch::Contains("landed already"));
    INFO("main's history:\n" << git_ok(h.repo, {"log", "--format=%h %p %s", "main"}));
    CHECK(eventually(
        [&] {
            return git_ok(h.repo, {"show", "main:g1.txt"}) ==
                   content_of("g1", seed) + (subjects_of("g1", seed).size() > 1 ? "more\n" : "");
        },
        bound(5000)));
    CHECK(count_with(subjects(h), "Squashed branch '" + h.branch("g1") + "'") == 1);
    CHECK(git_ok(h.repo, {"status", "--porcelain"}).empty());
    CHECK(git_ok(h.repo, {"rev-parse", "HEAD"}) == git_ok(h.repo, {"rev-parse", "main"}));
    CHECK(h.ok({"shell", "list"}) == Json::array());
    CHECK_FALSE(lock_held(h));
    h.finish();
}

// The other git a killed land leaves at work: its scratch worktree's `git worktree add`, held
// until the next land has finished the killed one, or for 1.5 s. The next land must wait for
// that git (else it finds no scratch worktree yet, ends the killed land, and then that git
// makes one that nobody removes) and then remove what it made.
TEST_CASE(
    "crash: land killed while its git adds the scratch worktree, that git ending after the next "
    "land's look",
    "[crash][serial]") {
    const unsigned seed = 42998;
    LandHome h(seed, "test ! -e red.txt");
    auto gated = gated_git(h, "*\" worktree add \"*");
    auto gate = h.env.dir() / "git-gate";
    std::vector<std::string> args{"--json", "land", "g1", "g2", "--strategy", "merge"};
    Child child = h.env.start(args, gated);
    REQUIRE(eventually([&] { return fs::exists(gate.string() + ".reached"); }, bound(20000)));
    ::kill(child.pid(), SIGKILL);
    REQUIRE(child.wait().exit_code == 128 + SIGKILL);

    // Let go once the next land has ended the killed one (which it must not do while that git
    // works), or after a while (a land that waits for that git waits until then).
    auto next_started = Steady::now();
    std::thread release([&] {
        eventually(
            [&] {
                auto db = h.db();
                return db->execAndGet("SELECT status FROM lands WHERE id = 1").getString() !=
                           "running" ||
                       Steady::now() - next_started > std::chrono::milliseconds(1500);
            },
            bound(20000));
        fs::remove(gate);
    });
    auto again = h.env.start(args, gated).wait();
    release.join();
    INFO("the land again -> " << shown(again));
    CHECK(again.exit_code == 0);
    // The held git has ended: it made the killed land's scratch worktree, or failed to.
    CHECK(eventually([&] { return fs::exists(gate.string() + ".done"); }, bound(5000)));
    check_no_scratch_left(h);
    CHECK(h.ok({"shell", "list"}) == Json::array());
    CHECK_FALSE(lock_held(h));
    h.finish();
}

// A land killed during its check, its home reached through a symbolic link (TEAM_HOME names
// the link): the next land must still find the check running in the killed land's scratch
// worktree (a shell records its directory resolved) and end it, and remove the scratch.
TEST_CASE("crash: land killed during its check, the home named through a symbolic link",
          "[crash][serial]") {
    const unsigned seed = 42997;
    LandHome h(seed, "test ! -e red.txt");
    auto link = h.env.dir() / "home link";
    fs::create_directory_symlink(h.env.home(), link);
    auto via = h.extra({{"TEAM_HOME", link.string()}});
    Child child = h.env.start({"--json", "land", "g1", "--check", "sleep 60"}, via);
    std::string shell;
    REQUIRE(eventually(
        [&] {
            auto db = h.db();
            SQLite::Statement s(*db,
                                "SELECT shell_id FROM land_items WHERE state = 'checking' "
                                "AND shell_id IS NOT NULL");
            if (!s.executeStep()) return false;
            shell = s.getColumn(0).getString();
            return true;
        },
        bound(20000)));
    ::kill(child.pid(), SIGKILL);
    REQUIRE(child.wait().exit_code == 128 + SIGKILL);

    auto again = h.env.start({"--json", "land", "g1", "--check", "true"}, via).wait();
    INFO("the land again -> " << shown(again));
    CHECK(again.exit_code == 0);
    auto status = h.ok({"shell", "status", shell});
    INFO("the killed land's check: " << status.dump());
    CHECK(status["status"] == "killed");
    CHECK(h.ok({"shell", "list"}) == Json::array());
    auto worktrees = git_ok(h.repo, {"worktree", "list", "--porcelain"});
    INFO("worktrees:\n" << worktrees);
    CHECK(worktrees.find("/land/") == std::string::npos);
    std::error_code ec;
    std::vector<std::string> left;
    for (const auto& e : fs::directory_iterator(h.land_dir(), ec)) left.push_back(e.path());
    CHECK(left == std::vector<std::string>{});
    h.json_run({"shell", "kill", shell});  // should it still run: not beyond the test
    h.finish();
}
