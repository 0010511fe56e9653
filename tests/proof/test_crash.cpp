// Issue 8, crash consistency: `team` is SIGKILLed (and only `team`, as a crash would end it) at
// a random moment of spawn, kill-agent (graceful, and --force), teardown, task claim and send,
// 34 seeds each (204 runs), each on a fresh home with a team of real agents in tmux, tasks and
// messages. After each crash the test checks what must hold whatever the moment of the crash
// (check_invariants), runs the interrupted command again, checks that the state converges to
// what an uninterrupted run leaves, and checks the invariants again; at the end of every seed no
// process and no tmux server of it is left.
//
// The delay before the SIGKILL comes from std::mt19937(seed), uniform in [0, 1.2 x] the median
// of the uninterrupted runs of that operation (and variant) so far: three timed at the start of
// its test case, then every seed's run that ended before its SIGKILL (these proofs run beside
// other tests, one at a time, so the load changes while they run) (one calibration run under
// AddressSanitizer, where each seed also sets up fewer tasks and agents:
// every `team` process is much slower there, and each test case must stay well under 300 s).
// A run that ends before its SIGKILL proves little, so every test case counts the runs it
// interrupted, and where the crash left the state, prints both (WARN) and requires that at
// least a third of the runs were interrupted. TEAM_CRASH_SEED=N runs seed N alone in every test
// case (the delay still depends on the timing of the machine, so it reproduces the moment only
// roughly).
#include <SQLiteCpp/SQLiteCpp.h>
#include <signal.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/programs.hpp"
#include "tests/support/agents_home.hpp"
#include "tests/support/git_repo.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/process.hpp"

using team::test::alive;
using team::test::bound;
using team::test::Child;
using team::test::eventually;
using team::test::kSanitized;
using team::test::RunResult;
using team::test::warning_for;
using Json = nlohmann::json;
using Us = std::chrono::microseconds;
using Steady = std::chrono::steady_clock;

namespace {

constexpr unsigned kSeedsPerOperation = 34;  // six operations: 204 crashes

// Under AddressSanitizer every `team` process takes some 0.4 s to start and end (25 times as long
// as in the plain build), so there a seed sets up less: no bystander agent, one or two tasks,
// shorter graces and deadlines, and examples/agent looks at the task list less often (it still
// answers a shutdown request at once: its inbox wait wakes at every commit).
const bool kFull = !kSanitized;
const char* const kGrace = kSanitized ? "500ms" : "1s";
const std::map<std::string, std::string> kAgentKnobs{{"AGENT_POLL", kSanitized ? "5" : "1"}};

// The seeds of one operation: kSeedsPerOperation from `first`, or TEAM_CRASH_SEED alone.
std::vector<unsigned> seeds_from(unsigned first, unsigned count = kSeedsPerOperation) {
    if (const char* only = std::getenv("TEAM_CRASH_SEED"); only && *only) {
        return {static_cast<unsigned>(std::stoul(only))};
    }
    std::vector<unsigned> out;
    for (unsigned i = 0; i < count; ++i) out.push_back(first + i);
    return out;
}

// One agent's record, straight from the store.
struct AgentRow {
    std::int64_t id = 0;
    std::string name, status, color, pane, exit_reason;
    std::optional<pid_t> pid, supervisor;
    bool leader = false;
    bool live() const { return status != "terminated"; }
};

std::optional<pid_t> pid_or_none(const SQLite::Column& c) {
    if (c.isNull()) return std::nullopt;
    return static_cast<pid_t>(c.getInt64());
}

// The command a seed runs (and crashes): `team ARGS` with INPUT on stdin, and `rivals`, other
// `team` commands started at the same moment that run to their end (never killed).
struct Command {
    std::vector<std::string> args;
    std::string input;
    std::vector<std::vector<std::string>> rivals;
    std::string untouched;  // what the operation must not change (a snapshot), if anything
};

// One seed's home: a team ("crash") of its own, its store read directly.
class CrashHome : public team::test::AgentsHome {
  public:
    // With `repo`, the team works in a git repository of its own (worktrees, SPEC 14): `repo`
    // below, branch main, one commit.
    explicit CrashHome(bool with_repo = false) : AgentsHome("crash", !with_repo) {
        if (!with_repo) return;
        repo = env.dir() / "repo";
        team::test::init_repo(repo);
        team::test::write_file(repo / "README.md", "hello\n");
        team::test::git_ok(repo, {"add", "-A"});
        team::test::git_ok(repo, {"commit", "--quiet", "-m", "first"});
        ok({"create", team(), "--cwd", env.dir().string(), "--repo", repo.string()});
    }

    std::filesystem::path repo;

    // A read-only connection to the home's store (it waits for writers rather than failing).
    std::unique_ptr<SQLite::Database> db() const {
        auto db = std::make_unique<SQLite::Database>((env.home() / "team.db").string(),
                                                     SQLite::OPEN_READONLY);
        db->setBusyTimeout(10000);
        return db;
    }

    // What the queries return, as text, from a fresh read-only connection.
    std::string select(std::initializer_list<const char*> queries) const {
        auto connection = db();
        return team::test::rows_as_text(*connection, queries);
    }

    // The one value the query returns, as text.
    std::string scalar(const char* query) const { return db()->execAndGet(query).getString(); }

    std::vector<AgentRow> agent_rows() const {
        auto connection = db();
        SQLite::Statement select(*connection, R"sql(
            SELECT id, name, status, is_leader, pid, supervisor_pid, color, pane_id, exit_reason
            FROM agents ORDER BY id
        )sql");
        std::vector<AgentRow> out;
        while (select.executeStep()) {
            AgentRow a;
            a.id = select.getColumn(0).getInt64();
            a.name = select.getColumn(1).getString();
            a.status = select.getColumn(2).getString();
            a.leader = select.getColumn(3).getInt() != 0;
            a.pid = pid_or_none(select.getColumn(4));
            a.supervisor = pid_or_none(select.getColumn(5));
            a.color = select.getColumn(6).getString();
            a.pane = select.getColumn(7).getString();
            a.exit_reason = select.getColumn(8).getString();
            out.push_back(a);
        }
        return out;
    }

    // The records of that name, oldest first.
    std::vector<AgentRow> named(const std::string& name) const {
        std::vector<AgentRow> out;
        for (const auto& a : agent_rows()) {
            if (a.name == name) out.push_back(a);
        }
        return out;
    }

    std::vector<AgentRow> live_named(const std::string& name) const {
        std::vector<AgentRow> out;
        for (const auto& a : named(name)) {
            if (a.live()) out.push_back(a);
        }
        return out;
    }

    // The open shutdown requests of that agent (any record of that name).
    int open_requests(const std::string& name) const {
        auto connection = db();
        SQLite::Statement count(*connection, R"sql(
            SELECT count(*) FROM shutdown_requests r JOIN agents a ON a.id = r.agent_id
            WHERE a.name = ? AND r.closed_at IS NULL
        )sql");
        count.bind(1, name);
        count.executeStep();
        return count.getColumn(0).getInt();
    }

    // A task as the store holds it: status, owner, claimedAt and warning (null when NULL).
    Json task_row(const std::string& id) const {
        auto connection = db();
        SQLite::Statement select(
            *connection, "SELECT status, owner, claimed_at, warning FROM tasks WHERE id = ?");
        select.bind(1, static_cast<std::int64_t>(std::stoll(id)));
        REQUIRE(select.executeStep());
        auto text = [&](int i) {
            auto c = select.getColumn(i);
            return c.isNull() ? Json() : Json(c.getString());
        };
        return {{"id", id},
                {"status", text(0)},
                {"owner", text(1)},
                {"claimedAt", text(2)},
                {"warning", text(3)}};
    }

    Json sleeper(const std::string& name) const { return spawn(name, {"sleep", "1000"}); }

    // A task added by the leader (owned by `owner` if given), claimed by `claimer` if given.
    void add_task(const std::string& id, const std::vector<std::string>& options,
                  const std::string& claimer = "") const {
        std::vector<std::string> args{"task", "add", "task " + id};
        args.insert(args.end(), options.begin(), options.end());
        REQUIRE(ok(args)["id"] == id);
        if (!claimer.empty()) ok({"task", "claim", id, "--as", claimer});
    }

    // `team ARGS` of the command, run to its end.
    RunResult again(const Command& c) const { return env.start(c.args, extra(), c.input).wait(); }
};

// Whether a process of this agent (its command or its pane supervisor) is still alive.
bool any_alive(const AgentRow& a) {
    return (a.pid && alive(*a.pid)) || (a.supervisor && alive(*a.supervisor));
}

// What a run printed, for the messages of a failure (cut: a send's text is 900 KiB).
std::string shown(const RunResult& r) {
    return std::to_string(r.exit_code) + " " + r.out.substr(0, 2000) + " " + r.err.substr(0, 2000);
}

std::int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// The invariants of issue 8, which hold whatever the moment of the crash:
// - the store is sound: `PRAGMA integrity_check` is ok, no foreign key is dangling, the task
//   counts kept by triggers match the tasks;
// - after one `team status`, no agent is live (active, shutting_down) whose process or pane
//   supervisor was gone before that look (SPEC 4: "marked terminated ... by the next command
//   that looks, at the latest");
// - no unfinished task is owned by a name that has no live member (SPEC 6 reassignment), and a
//   task's status, owner and claimedAt agree;
// - no colour is held twice: colours are held by live agents only (spawn picks the first colour
//   no live agent holds), so a colour still "held" by an agent that has ended shows up as a
//   live record of a dead agent (above) or as a colour given to two live agents (here);
// - no shutdown request is stuck with no way forward. From docs/shutdown.md: a request is closed
//   by finish_agent in the transaction that ends its agent, or by a rejection; nothing else ever
//   looks at it. So an open request must (a) belong to an agent that is not terminated, (b) whose
//   pane supervisor is alive (it carries out a confirmation or a deadline; a look marks an agent
//   whose supervisor is gone `lost`, which closes the request), and (c) be answerable or be
//   carried out: an unforced request in phase requested or approved belongs to an agent that is
//   shutting_down (so `shutdown approve | reject | confirm`, or the agent's exit, moves it on);
//   a confirmed one, or one whose deadline (--force-after, teardown's grace) has passed, ends its
//   agent within the grace (checked: the agent ends within a bound); one forced by `kill-agent
//   --force` whose command died is carried out by running `kill-agent --force` again, which is
//   accepted in every live status (the re-run below does it). A shutting_down agent has an open
//   request (else nobody could answer, and only --force would end it).
//   With `wait_deadlines`, every open request with a deadline still to come is also waited for:
//   its agent ends at the deadline even though the command that set it was killed.
// - a record still `spawning` is on its way: its pane's supervisor makes it active (or it ends)
//   within a bound; otherwise it holds a name and a colour with nothing behind it;
// - the panes of the home's tmux server are exactly those of its live agents.
void check_invariants(const CrashHome& h, bool wait_deadlines) {
    {
        auto db = h.db();
        CHECK(db->execAndGet("PRAGMA integrity_check").getString() == "ok");
        CHECK(team::test::rows_as_text(*db, {"PRAGMA foreign_key_check"}) == "--\n");
        CHECK(team::test::rows_as_text(*db, {R"sql(
            SELECT c.team_id, c.status, c.n FROM task_counts c
            WHERE c.n <> (SELECT count(*) FROM tasks t
                          WHERE t.team_id = c.team_id AND t.status = c.status)
            UNION ALL
            SELECT t.team_id, t.status, count(*) FROM tasks t GROUP BY t.team_id, t.status
            HAVING NOT EXISTS (SELECT 1 FROM task_counts c
                               WHERE c.team_id = t.team_id AND c.status = t.status)
        )sql"}) == "--\n");
    }

    std::set<std::int64_t> gone;  // live records of dead agents, before the look
    for (const auto& a : h.agent_rows()) {
        if (a.leader || !a.live() || a.status == "spawning") continue;
        if ((a.pid && !alive(*a.pid)) || (a.supervisor && !alive(*a.supervisor))) gone.insert(a.id);
    }
    auto status = h.json_run({"status", h.team()});
    INFO("status -> " << status.exit_code << " " << status.out << " " << status.err);
    CHECK(status.exit_code == 0);

    auto agents = h.agent_rows();
    for (const auto& a : agents) {
        INFO("agent " << a.name << " (" << a.id << ") " << a.status);
        if (gone.count(a.id)) CHECK(a.status == "terminated");
    }
    CHECK(h.select({R"sql(
        SELECT t.id, t.owner, t.status FROM tasks t
        WHERE t.status IN ('pending', 'in_progress') AND t.owner IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM agents a WHERE a.team_id = t.team_id
                          AND a.name = t.owner AND a.status <> 'terminated')
    )sql",
                    R"sql(
        SELECT id, status, owner, claimed_at FROM tasks
        WHERE (status = 'in_progress' AND (owner IS NULL OR claimed_at IS NULL))
           OR (status = 'pending' AND claimed_at IS NOT NULL)
    )sql",
                    R"sql(
        SELECT team_id, color, count(*) FROM agents
        WHERE status <> 'terminated' AND color IS NOT NULL
        GROUP BY team_id, color HAVING count(*) > 1
    )sql",
                    R"sql(
        SELECT a.name FROM agents a WHERE a.status = 'shutting_down' AND NOT EXISTS
            (SELECT 1 FROM shutdown_requests r WHERE r.agent_id = a.id AND r.closed_at IS NULL)
    )sql",
                    R"sql(
        SELECT r.id, a.name, a.status, r.phase FROM shutdown_requests r
        JOIN agents a ON a.id = r.agent_id
        WHERE r.closed_at IS NOT NULL AND r.phase <> 'rejected' AND a.status <> 'terminated'
    )sql"}) == "--\n--\n--\n--\n--\n");

    // The open requests, each with its way forward.
    struct Due {
        std::string agent;
        std::int64_t by_ms;  // when it must have ended (deadline or now, plus the grace)
    };
    std::vector<Due> due;
    {
        auto db = h.db();
        SQLite::Statement open(*db, R"sql(
            SELECT r.id, a.name, a.status, a.supervisor_pid, r.method, r.phase,
                   r.forced_at IS NOT NULL, r.force_at, r.grace_ms
            FROM shutdown_requests r JOIN agents a ON a.id = r.agent_id
            WHERE r.closed_at IS NULL ORDER BY r.id
        )sql");
        while (open.executeStep()) {
            std::string agent = open.getColumn(1).getString();
            std::string agent_status = open.getColumn(2).getString();
            auto supervisor = pid_or_none(open.getColumn(3));
            std::string phase = open.getColumn(5).getString();
            bool forced = open.getColumn(6).getInt() != 0;
            std::optional<std::int64_t> force_at;
            if (!open.getColumn(7).isNull()) force_at = open.getColumn(7).getInt64();
            std::int64_t grace = open.getColumn(8).getInt64();
            INFO("open request " << open.getColumn(0).getInt64() << " of " << agent << " ("
                                 << agent_status << "): " << open.getColumn(4).getString() << " "
                                 << phase << (forced ? ", forced" : ""));
            CHECK(agent_status != "terminated");
            if (agent_status == "terminated") continue;  // stuck: nothing will ever close it
            CHECK((phase == "requested" || phase == "approved" || phase == "confirmed"));
            if (agent_status != "spawning") {
                CHECK(supervisor.has_value());
                if (supervisor) CHECK(alive(*supervisor));
            }
            if (!forced && phase != "confirmed") CHECK(agent_status == "shutting_down");
            if (phase == "confirmed") due.push_back({agent, now_ms() + grace});
            if (force_at && (*force_at <= now_ms() || wait_deadlines)) {
                due.push_back({agent, std::max(*force_at, now_ms()) + grace});
            }
        }
    }
    for (const auto& d : due) {
        INFO("agent " << d.agent << " must end by its deadline (or confirmation) and grace");
        auto wait = static_cast<int>(std::max<std::int64_t>(d.by_ms - now_ms(), 0));
        CHECK(eventually([&] { return h.live_named(d.agent).empty(); }, wait + bound(5000)));
    }

    // A spawning record is on its way (or gone).
    for (const auto& a : agents) {
        if (a.status != "spawning") continue;
        INFO("agent " << a.name << " (" << a.id << ") is still spawning");
        CHECK(eventually(
            [&] {
                for (const auto& now : h.agent_rows()) {
                    if (now.id == a.id) return now.status != "spawning";
                }
                return true;
            },
            bound(5000)));
    }

    // The server's panes are those of the live agents.
    std::set<std::string> panes, live_panes;
    bool same = eventually(
        [&] {
            live_panes.clear();
            for (const auto& a : h.agent_rows()) {
                if (a.live() && !a.pane.empty()) live_panes.insert(a.pane);
            }
            panes = h.panes();
            return panes == live_panes;
        },
        bound(5000));
    std::string shown;
    for (const auto& p : panes) shown += p + " ";
    shown += "/ live: ";
    for (const auto& p : live_panes) shown += p + " ";
    INFO("panes: " << shown);
    CHECK(same);
}

// Where a crash hit: the counts of one operation.
class Tally {
  public:
    explicit Tally(std::string operation) : operation_(std::move(operation)) {}

    void add(bool interrupted, const std::string& where) {
        ++runs_;
        if (interrupted) ++interrupted_;
        ++where_[interrupted ? where : "finished before the kill"];
    }

    // Prints the counts; requires that at least a quarter of the runs were interrupted (a claim
    // takes some 15 ms, about what a process takes to start here, so fewer of its runs are: a
    // third was asked until a loaded clean-clone CI saw 33 of 100, at issue 41).
    void report(const std::string& spans) const {
        std::string text = operation_ + ": " + std::to_string(interrupted_) + " of " +
                           std::to_string(runs_) + " runs interrupted (uninterrupted: " + spans +
                           ")";
        for (const auto& [where, n] : where_) text += "; " + where + ": " + std::to_string(n);
        WARN(text);
        if (runs_ > 1) REQUIRE(interrupted_ * 4 >= runs_);
    }

  private:
    std::string operation_;
    int runs_ = 0, interrupted_ = 0;
    std::map<std::string, int> where_;
};

struct Crash {
    bool interrupted = false;
    RunResult result;
    Us took{0};  // from the start to the command's end (its whole run when not interrupted)
};

// Runs the command (and its rivals), SIGKILLs the command (only it) after `delay`.
Crash crash(const CrashHome& h, const Command& c, Us delay) {
    auto started = Steady::now();
    Child child = h.env.start(c.args, h.extra(), c.input);
    std::vector<Child> rivals;
    for (const auto& args : c.rivals) rivals.push_back(h.env.start(args, h.extra()));
    std::this_thread::sleep_for(delay);
    ::kill(child.pid(), SIGKILL);
    Crash out;
    out.result = child.wait();
    out.took = std::chrono::duration_cast<Us>(Steady::now() - started);
    out.interrupted = out.result.exit_code == 128 + SIGKILL;
    for (auto& rival : rivals) rival.wait();
    return out;
}

// One operation of the test: how to set up a seed's home (and the command it runs), where the
// crash left the state, and what the command's re-run must converge to.
struct Operation {
    std::string name;
    unsigned first_seed = 0;
    unsigned variants = 1;  // the variant of a seed is seed % variants
    std::function<Command(CrashHome&, unsigned seed)> setup;
    std::function<std::string(const CrashHome&, unsigned seed)> where;
    std::function<void(const CrashHome&, unsigned seed, const Command&)> converge;
    bool dissolves = false;  // the team is gone at the end: nothing at all is left
    bool repo = false;       // the team works in a git repository (CrashHome)
    unsigned seeds = kSeedsPerOperation;
};

// The median of what uninterrupted runs took.
Us median(std::vector<Us> took) {
    std::sort(took.begin(), took.end());
    return took[took.size() / 2];
}

// The median of three uninterrupted runs of a variant (one under AddressSanitizer), each on a
// fresh home, without its rivals.
Us calibrate(const Operation& op, unsigned variant) {
    std::vector<Us> took;
    for (unsigned k = 0; k < (kSanitized ? 1u : 3u); ++k) {
        CrashHome h(op.repo);
        Command c = op.setup(h, variant + k * op.variants);
        auto started = Steady::now();
        auto r = h.again(c);
        took.push_back(std::chrono::duration_cast<Us>(Steady::now() - started));
        INFO(op.name << " uninterrupted -> " << shown(r));
        REQUIRE(r.exit_code == 0);
        h.finish();
    }
    return median(took);
}

void run_operation(const Operation& op) {
    // The runs of each variant that were not interrupted, the calibration's first: the span the
    // delays are drawn from follows the machine's load while the seeds run (other tests run
    // beside these ones), so that a lighter moment does not leave most runs uninterrupted.
    std::vector<std::vector<Us>> samples;
    std::string spans_text;
    for (unsigned v = 0; v < op.variants; ++v) {
        samples.push_back({calibrate(op, v)});
        spans_text += (v ? ", " : "") + std::to_string(samples.back()[0].count() / 1000) + "ms";
    }
    Tally tally(op.name);
    auto started = Steady::now();
    for (unsigned seed : seeds_from(op.first_seed, op.seeds)) {
        std::mt19937 rng(seed);
        auto& seen = samples[seed % op.variants];
        std::uniform_int_distribution<long long> pick(0, median(seen).count() * 6 / 5);
        Us delay(pick(rng));
        INFO(op.name << ", seed " << seed << ", SIGKILL after " << delay.count() << "us");
        CrashHome h(op.repo);
        Command c = op.setup(h, seed);
        Crash crashed = crash(h, c, delay);
        INFO("the crashed run -> " << shown(crashed.result));
        // A run that ended by itself succeeded (unless a rival took what it wanted).
        if (!crashed.interrupted && c.rivals.empty()) CHECK(crashed.result.exit_code == 0);
        std::string where = crashed.interrupted ? op.where(h, seed) : "";
        INFO("the crash left: " << (crashed.interrupted ? where : "(not interrupted)"));
        tally.add(crashed.interrupted, where);
        if (!crashed.interrupted) seen.push_back(crashed.took);

        check_invariants(h, seed % 2 == 0);
        op.converge(h, seed, c);
        check_invariants(h, true);
        if (op.dissolves) h.check_nothing_left();
        h.finish();
    }
    auto took = std::chrono::duration_cast<std::chrono::seconds>(Steady::now() - started);
    WARN(op.name << ": " << took.count() << "s for the seeds");
    tally.report(spans_text);
}

// The JSON error of a refused re-run mentions `what`.
void check_refused_with(const RunResult& r, int code, const std::string& what) {
    CHECK(r.exit_code == code);
    auto doc = Json::parse(r.out, nullptr, false);
    REQUIRE(doc.is_object());
    CHECK(doc["success"] == false);
    CHECK_THAT(doc.value("error", std::string()), Catch::Contains(what));
}

// The task went back to the pool from that agent's end (SPEC 6 reassignment).
void check_handed_back(const CrashHome& h, const std::string& id, const std::string& from) {
    auto t = h.task_row(id);
    INFO("task " << id << ": " << t.dump());
    CHECK(t["status"] == "pending");
    CHECK(t["owner"].is_null());
    CHECK(t["claimedAt"].is_null());
    CHECK(t["warning"] == warning_for(from));
}

// The agent `name` has ended (with one of `reasons`), nothing of it is left, and (with `probe`)
// its colour is free again: a new agent gets it.
// Waits until agent `name`'s script has marked its work done (beside its worktree).
void fs_wait(const CrashHome& h, const std::string& name) {
    auto marker = h.env.home() / "worktrees" / h.team() / (name + ".done");
    REQUIRE(eventually([&] { return std::filesystem::exists(marker); }, bound(10000)));
}

void check_ended(const CrashHome& h, const std::string& name, const std::set<std::string>& reasons,
                 bool probe) {
    CHECK(eventually([&] { return h.live_named(name).empty(); }, bound(15000)));
    auto a = h.named(name).back();
    INFO("agent " << name << ": " << a.status << " " << a.exit_reason);
    CHECK(reasons.count(a.exit_reason) == 1);
    for (const auto& row : h.named(name)) {
        CHECK(eventually([&] { return !any_alive(row); }, bound(5000)));
    }
    CHECK(h.open_requests(name) == 0);
    if (probe) CHECK(h.sleeper("probe")["color"] == a.color);
}

}  // namespace

// A spawn killed after its record is written and before its pane's supervisor has taken the
// record over leaves the agent `spawning`; the record names the `team spawn` that makes it, so
// the next look sees at once that its maker is gone and declares it lost (a supervisor that
// was starting then ends its command and leaves), and a re-run makes the agent anew.
TEST_CASE("crash: spawn", "[crash][serial]") {
    Operation op;
    op.name = "spawn";
    op.first_seed = 1000;
    op.variants = 2;
    // Variant 0: the spawn starts the home's tmux server. 1: it joins a server where `a` was
    // force-killed (its colour, blue, is free again) and `b` holds green.
    op.setup = [](CrashHome& h, unsigned seed) {
        if (seed % 2 == 1) {
            h.sleeper("a");
            h.sleeper("b");
            h.ok({"kill-agent", "a", "--force"});
        }
        return Command{
            {"--json", "spawn", "w", "--env", h.mark.entry(), "--", "sleep", "1000"}, "", {}, ""};
    };
    op.where = [](const CrashHome& h, unsigned) -> std::string {
        auto w = h.named("w");
        return w.empty() ? "before the record" : "record " + w.back().status;
    };
    // The agent exists and runs exactly once: the re-run made it, or refused because it exists
    // (and then it is live, or becomes live: its pane was made before the crash).
    op.converge = [](const CrashHome& h, unsigned, const Command& c) {
        auto r = h.again(c);
        INFO("the re-run -> " << shown(r));
        if (r.exit_code != 0) check_refused_with(r, 4, "already exists");
        AgentRow w;
        CHECK(eventually(
            [&] {
                auto live = h.live_named("w");
                if (live.size() != 1) return false;
                w = live.front();
                return w.status == "active" && w.pid && alive(*w.pid);
            },
            bound(5000)));
        INFO("w: " << w.status << " " << w.color);
        CHECK(w.color == "blue");  // the first free colour, whichever spawn made the record
        if (r.exit_code == 0) CHECK(r.json()["pid"] == *w.pid);
    };
    run_operation(op);
}

TEST_CASE("crash: kill-agent --force", "[crash][serial]") {
    Operation op;
    op.name = "kill-agent --force";
    op.first_seed = 2000;
    op.variants = 2;
    // Variant 0: `w` is `sleep 1000`, which ends at the SIGTERM. 1: a hung agent that ignores
    // SIGTERM, ended by the SIGKILL after the grace.
    op.setup = [](CrashHome& h, unsigned seed) {
        if (seed % 2 == 0) {
            h.sleeper("w");
        } else {
            h.spawn_agent("w", {{"AGENT_STUCK", "1"}});
        }
        h.add_task("1", {"--owner", "w"}, "w");  // in progress, w's
        if (kFull) {
            h.sleeper("other");
            h.add_task("2", {"--owner", "w"});               // assigned to w
            h.add_task("3", {"--owner", "other"}, "other");  // another agent's: untouched
            h.add_task("4", {"--owner", "w"}, "w");          // completed: stays w's
            h.ok({"task", "done", "4", "--as", "w"});
        }
        return Command{{"--json", "kill-agent", "w", "--force", "--grace", kGrace}, "", {}, ""};
    };
    op.where = [](const CrashHome& h, unsigned) -> std::string {
        if (!h.named("w").back().live()) return "agent ended";
        return h.open_requests("w") > 0 ? "request stored, agent alive" : "before the request";
    };
    op.converge = [](const CrashHome& h, unsigned seed, const Command& c) {
        auto r = h.again(c);
        INFO("the re-run -> " << shown(r));
        if (r.exit_code == 0) {
            CHECK(r.json()["phase"] == "force_killed");
            // SPEC 7.2: when it returns success, no process of the agent is left.
            for (const auto& row : h.named("w")) CHECK_FALSE(any_alive(row));
        } else {
            check_refused_with(r, 4, "already terminated");
        }
        check_ended(h, "w", {"force_killed"}, kFull || seed % 2 == 0);
        check_handed_back(h, "1", "w");
        if (!kFull) return;
        check_handed_back(h, "2", "w");
        auto other = h.task_row("3");
        CHECK(other["status"] == "in_progress");
        CHECK(other["owner"] == "other");
        auto done = h.task_row("4");
        CHECK(done["status"] == "completed");
        CHECK(done["owner"] == "w");
    };
    run_operation(op);
}

TEST_CASE("crash: kill-agent (graceful)", "[crash][serial]") {
    Operation op;
    op.name = "kill-agent";
    op.first_seed = 3000;
    op.variants = 2;
    // Variant 0: `w` is examples/agent, idle, which approves and confirms by itself. 1: `w` is
    // `sleep 1000`, which never answers: the request has a deadline (--force-after) at which
    // its pane's supervisor force-kills it, whether the command still runs or not.
    op.setup = [](CrashHome& h, unsigned seed) {
        if (seed % 2 == 0) {
            h.spawn_agent("w", kAgentKnobs);
        } else {
            h.sleeper("w");
        }
        // Every task has an owner, so that examples/agent (which claims unowned ones) stays idle.
        h.add_task("1", {"--owner", "w"}, "w");  // in progress, w's
        if (kFull) {
            h.sleeper("other");
            h.add_task("2", {"--owner", "w"});               // assigned to w
            h.add_task("3", {"--owner", "other"}, "other");  // another agent's: untouched
        }
        std::vector<std::string> args{"--json",     "kill-agent", "w",         "--reason",
                                      "crash test", "--wait",     "--timeout", "30s"};
        if (seed % 2 == 1) args.insert(args.end(), {"--force-after", kGrace, "--grace", "500ms"});
        return Command{args, "", {}, ""};
    };
    op.where = [](const CrashHome& h, unsigned) -> std::string {
        if (!h.named("w").back().live()) return "agent ended";
        return h.open_requests("w") > 0 ? "request stored" : "before the request";
    };
    op.converge = [](const CrashHome& h, unsigned seed, const Command& c) {
        auto r = h.again(c);
        INFO("the re-run -> " << shown(r));
        if (r.exit_code == 0) {
            auto phase = r.json()["phase"];
            CHECK((phase == "confirmed" || phase == "force_killed"));
        } else {
            // Already shutting down (the agent or its deadline ends it) or already ended.
            check_refused_with(r, 4, "already");
        }
        check_ended(h, "w", {seed % 2 == 0 ? "confirmed" : "force_killed"}, kFull || seed % 4 < 2);
        check_handed_back(h, "1", "w");
        if (!kFull) return;
        check_handed_back(h, "2", "w");
        auto other = h.task_row("3");
        CHECK(other["status"] == "in_progress");
        CHECK(other["owner"] == "other");
    };
    run_operation(op);
}

TEST_CASE("crash: teardown", "[crash][serial]") {
    Operation op;
    op.name = "teardown";
    op.first_seed = 4000;
    op.dissolves = true;
    // A cooperative agent (confirms), one that never answers (force-killed at the deadline)
    // and, in the plain build, a hung one that ignores SIGTERM; each owns a task.
    op.setup = [](CrashHome& h, unsigned) {
        h.spawn_agent("coop", kAgentKnobs);
        h.sleeper("sleeper");
        h.add_task("1", {"--owner", "coop"}, kFull ? "coop" : "");  // in progress (assigned)
        h.add_task("2", {"--owner", "sleeper"});                    // assigned
        if (kFull) {
            h.spawn_agent("stuck", {{"AGENT_STUCK", "1"}});
            h.add_task("3", {"--owner", "stuck"}, "stuck");  // in progress
        }
        return Command{
            {"--json", "teardown", "--grace", kGrace, "--reason", "crash test"}, "", {}, ""};
    };
    op.where = [](const CrashHome& h, unsigned) -> std::string {
        if (h.scalar("SELECT status FROM teams") == "dissolved") return "dissolved";
        if (h.scalar("SELECT count(*) FROM shutdown_requests") == "0") return "before the requests";
        if (h.scalar(
                "SELECT count(*) FROM agents WHERE status <> 'terminated' AND NOT is_leader") ==
            "0")
            return "agents ended, team not dissolved";
        return "requests stored";
    };
    op.converge = [](const CrashHome& h, unsigned, const Command& c) {
        auto r = h.again(c);
        INFO("the re-run -> " << shown(r));
        if (r.exit_code == 0) {
            auto doc = r.json();
            CHECK(doc["dissolved"] == true);
            CHECK(doc["survivors"] == 0);
        } else {
            check_refused_with(r, 4, "already dissolved");
        }
        CHECK(h.scalar("SELECT status FROM teams") == "dissolved");
        for (const auto& a : h.agent_rows()) {
            INFO("agent " << a.name);
            if (!a.leader) CHECK(a.status == "terminated");
        }
        check_handed_back(h, "1", "coop");
        check_handed_back(h, "2", "sleeper");
        if (!kFull) return;
        check_handed_back(h, "3", "stuck");
        CHECK(h.ok({"status", h.team()})["status"] == "dissolved");
        CHECK(h.ok({"list"}) == Json::array());
    };
    run_operation(op);
}

TEST_CASE("crash: task claim", "[crash][serial]") {
    Operation op;
    op.name = "task claim";
    op.first_seed = 5000;
    // The prize is the only available task (in the plain build, among one in progress, one
    // blocked by it and one assigned). Even seeds claim it by id, odd ones claim "the next
    // available"; every third seed, `a1` claims it at the same moment (a rival, never killed).
    static const std::string prize = kFull ? "3" : "1";
    static const std::string others = "SELECT * FROM tasks WHERE id <> " + prize + " ORDER BY id";
    static const std::string claims =
        "SELECT actor FROM activity WHERE type = 'task_claimed' AND "
        "json_extract(details, '$.taskId') = '" +
        prize + "'";
    op.setup = [](CrashHome& h, unsigned seed) {
        h.sleeper("a1");
        h.sleeper("a2");
        if (kFull) {
            h.add_task("1", {"--owner", "a1"}, "a1");
            h.add_task("2", {"--blocked-by", "1"});
        }
        h.add_task(prize, {});
        if (kFull) h.add_task("4", {"--owner", "a2"});
        Command c;
        c.args = {"--json", "task", "claim", "--as", "a2"};
        if (seed % 2 == 0) c.args.insert(c.args.begin() + 3, prize);
        if (seed % 3 == 2) c.rivals.push_back({"--json", "task", "claim", prize, "--as", "a1"});
        c.untouched = h.select({others.c_str(), "SELECT * FROM task_blockers ORDER BY task_id"});
        return c;
    };
    op.where = [](const CrashHome& h, unsigned) -> std::string {
        auto t = h.task_row(prize);
        if (t["status"] == "pending") return "not claimed";
        return "claimed by " + t["owner"].get<std::string>();
    };
    // Claimed exactly once: in progress, one owner (a2, or the rival), one task_claimed entry.
    op.converge = [](const CrashHome& h, unsigned seed, const Command& c) {
        auto r = h.again(c);
        INFO("the re-run -> " << shown(r));
        if (r.exit_code == 0) {
            CHECK(r.json()["id"] == prize);
        } else {
            // Already claimed (by a2 itself, or the rival), or nothing left to claim.
            CHECK((r.exit_code == 4 || r.exit_code == 3));
        }
        auto t = h.task_row(prize);
        INFO("the prize: " << t.dump());
        CHECK(t["status"] == "in_progress");
        std::string owner = t["owner"].is_string() ? t["owner"].get<std::string>() : "";
        if (seed % 3 == 2) {
            CHECK((owner == "a2" || owner == "a1"));
        } else {
            CHECK(owner == "a2");
        }
        CHECK(h.select({claims.c_str()}) == owner + "@crash|\n--\n");  // one entry, the owner's
        CHECK(h.select({others.c_str(), "SELECT * FROM task_blockers ORDER BY task_id"}) ==
              c.untouched);
    };
    run_operation(op);
}

namespace {

// The text a seed sends: 900 KiB (many pages of the store), multibyte characters among ASCII.
std::string text_for(unsigned seed) {
    std::string text = "crash seed " + std::to_string(seed) + ": ";
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> letter('a', 'z');
    while (text.size() < 900 * 1024) {
        text += static_cast<char>(letter(rng));
        if (text.size() % 1000 == 0) text += " 日本 🚀 ";
    }
    return text;
}

// The seed's messages in each inbox, each one checked whole (text and data): never partial,
// never corrupted.
std::map<std::string, int> seed_messages(const CrashHome& h, unsigned seed) {
    const std::string text = text_for(seed);
    std::map<std::string, int> out{{"r1", 0}, {"r2", 0}};
    auto db = h.db();
    SQLite::Statement select(
        *db, "SELECT id, recipient, text, data FROM messages WHERE type = 'message' ORDER BY id");
    while (select.executeStep()) {
        ++out[select.getColumn(1).getString()];
        std::string stored = select.getColumn(2).getString();
        INFO("message " << select.getColumn(0).getInt64() << " to "
                        << select.getColumn(1).getString() << ": " << stored.size() << " bytes");
        CHECK(stored.size() == text.size());
        CHECK((stored == text));  // not shown: 900 KiB
        CHECK(Json::parse(select.getColumn(3).getString(), nullptr, false) == Json{{"seed", seed}});
    }
    return out;
}

}  // namespace

TEST_CASE("crash: send", "[crash][serial]") {
    Operation op;
    op.name = "send";
    op.first_seed = 6000;
    op.variants = 2;
    // Variant 0: a large message (900 KiB, from stdin) to r1. 1: the same to every live agent
    // (--all: one transaction for both) with --notify, which then types a notice into each pane.
    op.setup = [](CrashHome& h, unsigned seed) {
        h.sleeper("r1");
        h.sleeper("r2");
        Command c;
        c.input = text_for(seed);
        std::string data = Json{{"seed", seed}}.dump();
        if (seed % 2 == 0) {
            c.args = {"--json", "send", "r1", "-", "--data", data};
        } else {
            c.args = {"--json", "send", "--all", "-", "--notify", "--data", data};
        }
        return c;
    };
    op.where = [](const CrashHome& h, unsigned seed) -> std::string {
        auto n = seed_messages(h, seed);
        if (n["r1"] == 0 && n["r2"] == 0) return "not stored";
        if (seed % 2 == 1 && n["r1"] != n["r2"]) return "stored for one recipient only";
        return "stored";
    };
    // Stored once more by the re-run: 1 or 2 in each inbox, each one whole; with --all, the
    // same number in both (the crashed run stored for both or for neither).
    op.converge = [](const CrashHome& h, unsigned seed, const Command& c) {
        auto before = seed_messages(h, seed);
        CHECK(before["r1"] <= 1);
        CHECK(before["r2"] == (seed % 2 == 1 ? before["r1"] : 0));
        auto r = h.again(c);
        INFO("the re-run -> " << shown(r));
        CHECK(r.exit_code == 0);
        auto after = seed_messages(h, seed);
        CHECK(after["r1"] == before["r1"] + 1);
        CHECK(after["r2"] == before["r2"] + (seed % 2 == 1 ? 1 : 0));
        // The recipient reads them whole.
        const std::string text = text_for(seed);
        int read = 0;
        for (const auto& m : h.ok({"inbox", "--agent", "r1"})) {
            if (m["type"] != "message") continue;
            ++read;
            CHECK((m["text"] == text));
        }
        CHECK(read == after["r1"]);
    };
    run_operation(op);
}

// Worktrees (SPEC 14): `team` SIGKILLed around spawn --worktree, kill-agent --force of an agent
// with uncommitted work, and merge. Whatever the moment, every byte the agent wrote is in its
// worktree, its branch or a snapshot, a re-run converges, and no branch is left orphaned.
Operation worktrees_operation() {
    Operation op;
    op.name = "worktrees";
    op.first_seed = 7000;
    op.variants = 3;
    op.repo = true;
    op.seeds = 24;
    // The bytes agent w writes, of the seed's own: a file written at its start (variant 0), a
    // mix of uncommitted work (1), a committed file (2).
    auto bytes = [](unsigned seed) { return "seed " + std::to_string(seed) + " \xC3\xA9\n"; };
    op.setup = [bytes](CrashHome& h, unsigned seed) {
        std::string b = bytes(seed);
        std::string write = "printf '%s' '" + b + "' > w.txt; ";
        if (seed % 3 == 0) {
            return Command{{"--json", "spawn", "w", "--worktree", "--env", h.mark.entry(), "--",
                            "bash", "-c", write + "exec sleep 1000"},
                           "",
                           {},
                           ""};
        }
        std::string script =
            seed % 3 == 1
                ? write + "printf 'x' >> README.md; git add README.md; printf 'y' >> README.md; "
                : write + "git add w.txt; git -c user.name=A -c user.email=a@a commit -qm w; ";
        h.ok({"spawn", "w", "--worktree", "--env", h.mark.entry(), "--", "bash", "-c",
              script + "touch \"$TEAM_WORKTREE.done\"; exec sleep 1000"});
        fs_wait(h, "w");
        if (seed % 3 == 1) return Command{{"--json", "kill-agent", "w", "--force"}, "", {}, ""};
        return Command{{"--json", "merge", "w"}, "", {}, ""};
    };
    op.where = [](const CrashHome& h, unsigned seed) -> std::string {
        auto w = h.named("w");
        if (seed % 3 == 2) {
            return team::test::git_ok(h.repo, {"rev-parse", "main"}) ==
                           team::test::git_ok(h.repo, {"rev-parse", "team/crash/w"})
                       ? "merged"
                       : "main not moved";
        }
        return w.empty() ? "before the record" : "record " + w.back().status;
    };
    op.converge = [bytes](const CrashHome& h, unsigned seed, const Command& c) {
        auto r = h.again(c);
        INFO("the re-run -> " << shown(r));
        std::string b = bytes(seed);
        auto wt = [&] {
            auto rows = h.ok({"worktree", "list"});
            REQUIRE(!rows.empty());
            return rows.back();
        };
        if (seed % 3 == 0) {
            // Refused: the agent exists; or its spawn died after its command had run for a
            // moment and written something, so the worktree is kept (its branch with it) and
            // the spawn takes it over with --reuse-branch.
            if (r.exit_code != 0 && r.out.find("is checked out in") != std::string::npos) {
                auto args = c.args;
                args.insert(args.begin() + 4, "--reuse-branch");
                auto reused = h.again(Command{args, "", {}, ""});
                INFO("with --reuse-branch -> " << shown(reused));
                CHECK(reused.exit_code == 0);
            } else if (r.exit_code != 0) {
                check_refused_with(r, 4, "already exists");
            }
            // The agent runs in its worktree, which holds what it wrote.
            REQUIRE(eventually(
                [&] {
                    auto live = h.live_named("w");
                    return live.size() == 1 && live.front().status == "active";
                },
                bound(5000)));
            auto w = wt();
            CHECK(eventually(
                [&] { return team::test::slurp(w["path"].get<std::string>() + "/w.txt") == b; },
                bound(5000)));
        } else if (seed % 3 == 1) {
            if (r.exit_code != 0) check_refused_with(r, 4, "already terminated");
            // A look takes a snapshot still owed; the work is on disk and in the snapshot.
            Json w;
            CHECK(eventually(
                [&] {
                    w = wt();
                    return w["snapshot"].is_object() && w["snapshotOwed"] == false;
                },
                bound(10000)));
            INFO(w.dump());
            std::string path = w["path"];
            CHECK(team::test::slurp(path + "/w.txt") == b);
            CHECK(team::test::slurp(path + "/README.md") == "hello\nxy");
            REQUIRE(w["snapshot"]["taken"] == true);
            std::string ref = w["snapshot"]["ref"];
            CHECK(team::test::git_ok(h.repo, {"show", ref + ":w.txt"}) == b);
            CHECK(team::test::git_ok(h.repo, {"show", ref + ":README.md"}) == "hello\nxy");
            CHECK(team::test::git_ok(h.repo, {"show", ref + "^2:README.md"}) == "hello\nx");
        } else {
            INFO("merge again -> " << r.out << r.err);
            CHECK(r.exit_code == 0);
            // main holds the agent's commit; the main checkout is clean, no merge left open.
            CHECK(team::test::git_ok(h.repo, {"show", "main:w.txt"}) == b);
            CHECK(team::test::git_ok(h.repo, {"status", "--porcelain"}).empty());
            CHECK(!std::filesystem::exists(h.repo / ".git" / "MERGE_HEAD"));
            CHECK(team::test::slurp(h.repo / "w.txt") == b);
        }
        // No orphan: every team branch is checked out in a worktree team knows.
        auto branches = team::git::split_lines(team::test::git_ok(
            h.repo, {"branch", "--list", "team/*", "--format=%(refname:short)"}));
        auto rows = h.ok({"worktree", "list"});
        CHECK(branches.size() == rows.size());
    };
    return op;
}

TEST_CASE("crash: worktrees", "[crash][serial]") {
    run_operation(worktrees_operation());
}

// Seed 7020 of "crash: worktrees" at a fixed moment, where it once failed: the spawn killed
// while its `git worktree add` runs. That git outlives it (a git on the PATH holds the add until
// the test lets it go, once a look has found the spawn dead): the look must wait for it, then
// remove the fresh worktree (or keep it for the spawn run again), never forget a row whose
// worktree is still being made; and the spawn run again succeeds.
TEST_CASE("crash: worktrees at seed 7020: a spawn killed while its git worktree add runs",
          "[crash][serial]") {
    const unsigned seed = 7020;
    Operation op = worktrees_operation();
    CrashHome h(op.repo);
    Command c = op.setup(h, seed);
    REQUIRE(seed % op.variants == 0);  // the variant that spawns
    const char* path = std::getenv("PATH");
    auto real_git = team::find_program("git", path ? path : "");
    REQUIRE(real_git);
    auto bin = h.env.dir() / "gated-bin";
    auto gate = h.env.dir() / "git-gate";
    std::filesystem::create_directories(bin);
    team::test::write_file(bin / "git",
                           "#!/bin/sh\n"
                           "case \" $* \" in *\" worktree add \"*)\n"
                           "  if [ ! -e \"$GIT_GATE.reached\" ]; then\n"
                           "    : > \"$GIT_GATE.reached\"\n"
                           "    while [ -e \"$GIT_GATE\" ]; do sleep 0.01; done\n"
                           "  fi;;\n"
                           "esac\n"
                           "exec '" +
                               *real_git + "' \"$@\"\n");
    std::filesystem::permissions(bin / "git", std::filesystem::perms::owner_all);
    team::test::write_file(gate, "");
    Child child = h.env.start(
        c.args,
        h.extra({{"PATH", bin.string() + ":" + (path ? path : "")}, {"GIT_GATE", gate.string()}}),
        c.input);
    REQUIRE(eventually([&] { return std::filesystem::exists(gate.string() + ".reached"); },
                       bound(10000)));
    ::kill(child.pid(), SIGKILL);
    auto crashed = child.wait();
    REQUIRE(crashed.exit_code == 128 + SIGKILL);
    CHECK(op.where(h, seed) == "record spawning");
    CHECK(h.scalar("SELECT state FROM worktrees") == "creating");

    std::thread release([&] {
        eventually(
            [&] {
                auto w = h.named("w");
                return !w.empty() && w.front().status == "terminated";
            },
            bound(20000));
        std::filesystem::remove(gate);
    });
    check_invariants(h, true);  // its look finds the spawn dead
    release.join();
    op.converge(h, seed, c);
    check_invariants(h, true);
    h.finish();
}
