// Issue 8, outside interference: what the world does to a home behind team's back, on the real
// binary, real tmux and real processes, each test on its own temporary home.
//
// - The home's tmux server killed (`tmux kill-server`, and SIGKILL to the server process), a
//   pane killed (`tmux kill-pane`), an agent's process or its pane supervisor killed with
//   SIGKILL: the agents are recorded ended by the next command that looks (SPEC 4), their
//   unfinished tasks go back to the pool (SPEC 6), no process of theirs is left, the others are
//   untouched, and kill-agent, teardown and a new spawn still work afterwards.
// - The home made read-only, two ways (by_mode, by_mount): its files and directories lose
//   their write permission (root runs `team` through `setpriv` without CAP_DAC_OVERRIDE and
//   CAP_DAC_READ_SEARCH, which would let it write anyway), or `team` runs in a private mount
//   namespace (`unshare -m`) where the home is a read-only bind mount of itself. Writes fail
//   with a clear error, nothing changes, and once writable again all is intact and works.
// - A full disk (see PrivateDisk): the home is a small tmpfs, mounted in a private mount
//   namespace that this test process enters for the test's duration and leaves afterwards, so
//   the mount is visible to `team` and its tmux server and to nobody else, and vanishes with
//   the namespace even if the test dies. A filler file takes every free block (write() until
//   ENOSPC). Where no namespace or tmpfs can be made, RLIMIT_FSIZE stands in (prlimit, SIGXFSZ
//   ignored, so that an oversized write fails with EFBIG instead of killing the command) and
//   the test says so in a warning.
// - Deadlines on the monotonic clock: tests/proof/clock_jump.cpp, preloaded into a command,
//   makes its wall clock jump an hour forward or back in the middle of a wait; the waits still
//   last what they were asked to (generous bounds, never a measurement). A --force-after
//   deadline is kept as wall-clock time in the store (force_at) and read by the agent's pane
//   supervisor: its test preloads the jump into the supervisor (see that test for what a jump
//   does to it). A look whose wall clock is ahead must not take a spawn under way for a stale
//   one.
//
// Every agent gets a marker of its own (TEAM_TEST_MARK through --env, replacing the home's), so
// scans of /proc prove that no process of it is left, while the home's marker covers the tmux
// server and the pane supervisors. Team names start with `if-` and differ between tests: a lost
// agent's processes are found by its TEAM_AGENT_ID (and TEAM_HOME).
#include <SQLiteCpp/SQLiteCpp.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/agents_home.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/marker.hpp"
#include "tests/support/process.hpp"

using team::test::alive;
using team::test::bound;
using team::test::Child;
using team::test::clean_env;
using team::test::eventually;
using team::test::Marker;
using team::test::RunResult;
using team::test::sq;
using team::test::team_binary;
using team::test::warning_for;
using Env = std::map<std::string, std::string>;
using Json = nlohmann::json;
using Ms = std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;
namespace fs = std::filesystem;

namespace {

// How long a pane supervisor gives an agent after SIGTERM before SIGKILL (LaunchSpec's grace):
// an agent that ignores SIGHUP and SIGTERM outlives its killed pane by that much.
constexpr int kSupervisorGraceMs = 5000;

// A command that ignores SIGHUP and SIGTERM: only SIGKILL ends it. It touches `ready` once the
// traps are set.
std::vector<std::string> stubborn(const fs::path& ready) {
    return {"sh", "-c", "trap '' HUP TERM; touch " + sq(ready) + "; exec sleep 1000"};
}

std::string shown(const std::vector<std::string>& args) {
    std::string out;
    for (const auto& a : args) out += (a.size() > 40 ? a.substr(0, 40) + "..." : a) + " ";
    return out;
}

// One test's home (see AgentsHome), with a marker per agent.
class Home : public team::test::AgentsHome {
  public:
    using AgentsHome::AgentsHome;

    // `team spawn NAME --env <the agent's own marker> -- COMMAND`; returns spawn's document
    // once the agent's process carries its marker.
    Json start_agent(const std::string& name, const std::vector<std::string>& command,
                     const Env& more = {}) {
        auto& m = agent_marks_[name];
        REQUIRE(!m);  // one marker per agent: a test uses a new name for each agent
        m = std::make_unique<Marker>();
        std::vector<std::string> args{"spawn", name, "--env", m->entry(), "--"};
        args.insert(args.end(), command.begin(), command.end());
        auto doc = ok(args, more);
        REQUIRE(doc["paneId"].is_string());
        auto pid = static_cast<pid_t>(doc["pid"].get<long>());
        REQUIRE(eventually([&] {
            auto pids = m->alive();
            return std::find(pids.begin(), pids.end(), pid) != pids.end();
        }));
        return doc;
    }

    const Marker& agent_mark(const std::string& name) const { return *agent_marks_.at(name); }

    // A task added by the leader; with `owner`, owned by it: `pending`, or claimed by it
    // (`in_progress`), or claimed and done (`completed`).
    std::string add_task(const std::string& subject, const std::string& owner = "",
                         const std::string& state = "pending") const {
        std::vector<std::string> args{"task", "add", subject};
        if (!owner.empty() && state == "pending") args.insert(args.end(), {"--owner", owner});
        std::string id = ok(args)["id"];
        if (!owner.empty() && state != "pending") {
            ok({"task", "claim", id, "--as", owner});
            if (state == "completed") ok({"task", "done", id, "--as", owner});
        }
        return id;
    }

    // Pane id -> the pane's first process (the agent's supervisor), on the home's server.
    std::map<std::string, pid_t> pane_pids() const {
        std::map<std::string, pid_t> out;
        auto r = env.tmux({"list-panes", "-a", "-F", "#{pane_id} #{pane_pid}"});
        if (r.exit_code != 0) return out;
        for (const auto& line : team::test::lines_of(r.out)) {
            auto sp = line.find(' ');
            out[line.substr(0, sp)] = static_cast<pid_t>(std::stol(line.substr(sp + 1)));
        }
        return out;
    }

    pid_t supervisor_of(const Json& spawned) const {
        auto pids = pane_pids();
        auto it = pids.find(spawned["paneId"].get<std::string>());
        REQUIRE(it != pids.end());
        return it->second;
    }

    // The pid of the home's tmux server.
    pid_t server_pid() const {
        auto r = env.tmux({"list-sessions", "-F", "#{pid}"});
        REQUIRE(r.exit_code == 0);
        auto lines = team::test::lines_of(r.out);
        REQUIRE(!lines.empty());
        return static_cast<pid_t>(std::stol(lines.front()));
    }

    // Every row a user's data lives in (what a refused command must leave as it was).
    std::string snapshot() const {
        return rows({"SELECT * FROM teams ORDER BY id", "SELECT * FROM agents ORDER BY id",
                     "SELECT * FROM tasks ORDER BY team_id, id",
                     "SELECT * FROM task_blockers ORDER BY 1, 2, 3",
                     "SELECT * FROM messages ORDER BY id", "SELECT * FROM shutdown_requests",
                     "SELECT * FROM shells ORDER BY id",
                     "SELECT * FROM activity WHERE type NOT IN ('agent_state', 'worktree_state') "
                     "ORDER BY id"});
    }

    std::string integrity() const { return rows({"PRAGMA integrity_check"}); }

    // The end of a test: nothing of any agent, no pane, no server, no supervisor is left.
    void finish_all() const {
        for (const auto& [name, m] : agent_marks_) {
            INFO("agent " << name);
            CHECK(m->none_alive_within(5000));
        }
        check_nothing_left();
        finish();
    }

  private:
    std::map<std::string, std::unique_ptr<Marker>> agent_marks_;
};

// An agent ended from outside: terminated, as `exited` (its supervisor recorded how its command
// ended: exactly one of exitCode and signal) or `lost` (nothing more is known: neither).
void check_ended(const Json& a) {
    INFO("agent: " << a.dump());
    CHECK(a["status"] == "terminated");
    CHECK(a["terminatedAt"].is_string());
    CHECK(a["color"].is_string());
    if (a["exitReason"] == "exited") {
        CHECK(a["exitCode"].is_null() != a["signal"].is_null());
    } else {
        CHECK(a["exitReason"] == "lost");
        CHECK(a["exitCode"].is_null());
        CHECK(a["signal"].is_null());
    }
}

// A task handed back to the pool from that agent's end (SPEC 6).
void check_handed_back(const Home& h, const std::string& id, const std::string& name) {
    auto t = h.task(id);
    INFO("task " << id << ": " << t.dump());
    CHECK(t["status"] == "pending");
    CHECK(t["owner"].is_null());
    CHECK(t["claimedAt"].is_null());
    CHECK(t["warning"] == warning_for(name));
}

// The activity entries of that type about that agent.
std::vector<Json> activity_of(const Home& h, const std::string& type, const std::string& name) {
    std::vector<Json> out;
    for (const auto& e : h.activity(type)) {
        const auto& d = e["details"];
        if ((d.contains("agentId") && d["agentId"] == h.id(name)) ||
            (d.contains("from") && d["from"] == h.id(name))) {
            out.push_back(e);
        }
    }
    return out;
}

// A failure a person can act on (SPEC 1.4): exit 1, `failed`, a message that names `names`
// (the home or its database) and says why in one of `why`'s words, never SQLite's soup.
void check_clear_failure(const RunResult& r, const std::string& names,
                         const std::vector<std::string>& why) {
    CHECK(r.exit_code == 1);
    auto doc = Json::parse(r.out, nullptr, false);
    REQUIRE(doc.is_object());
    CHECK(doc["success"] == false);
    CHECK(doc["code"] == "failed");
    REQUIRE(doc["error"].is_string());
    std::string error = doc["error"];
    CHECK_THAT(error, Catch::Contains(names));
    bool says_why = std::any_of(why.begin(), why.end(),
                                [&](const std::string& w) { return error.find(w) != error.npos; });
    CHECK(says_why);
    for (std::string soup : {"locked", "busy", "SQLITE", "sqlite3", "(code", "disk I/O"}) {
        bool expected = std::any_of(why.begin(), why.end(),
                                    [&](const std::string& w) { return w.find(soup) != w.npos; });
        if (!expected) CHECK_THAT(error, !Catch::Contains(soup, Catch::CaseSensitive::No));
    }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The tmux server, panes and processes killed from outside.

TEST_CASE(
    "a tmux server killed from outside: its agents are recorded ended with their tasks "
    "handed back and a new spawn works",
    "[interference]") {
    bool by_signal = false;
    SECTION("tmux kill-server") {}
    SECTION("SIGKILL to the tmux server") {
        by_signal = true;
    }
    Home h("if-server");
    auto ready = h.env.dir() / "ready";
    std::map<std::string, Json> spawned;
    spawned["plain"] = h.start_agent("plain", {"sleep", "1000"});
    // Ignores the hangup; one child left its session, another runs in the background.
    spawned["escaper"] = h.start_agent(
        "escaper", {"sh", "-c", "trap '' HUP; setsid sleep 1001 & sleep 1002 & wait"});
    spawned["stubborn"] = h.start_agent("stubborn", stubborn(ready));
    REQUIRE(eventually([&] { return fs::exists(ready); }));
    REQUIRE(eventually([&] { return h.agent_mark("escaper").alive().size() == 3; }));
    std::map<std::string, std::string> working, owned;
    for (const auto& [name, doc] : spawned) {
        working[name] = h.add_task(name + " works on it", name, "in_progress");
        owned[name] = h.add_task(name + " will do it", name);
    }
    auto done = h.add_task("plain did it", "plain", "completed");
    auto free_task = h.add_task("nobody's");
    auto done_before = h.task(done);
    auto free_before = h.task(free_task);

    pid_t server = h.server_pid();
    if (by_signal) {
        REQUIRE(::kill(server, SIGKILL) == 0);
    } else {
        REQUIRE(h.env.tmux({"kill-server"}).exit_code == 0);
    }
    CHECK(eventually([&] { return !alive(server); }));
    // Every agent process goes (the stubborn one by its supervisor's SIGKILL after the grace),
    // and every supervisor with it, before any team command looks.
    for (const auto& [name, doc] : spawned) {
        INFO("agent " << name);
        CHECK(h.agent_mark(name).none_alive_within(kSupervisorGraceMs + 5000));
    }
    CHECK(h.mark.none_alive_within(5000));

    // The next look records them all ended (SPEC 4), with the server gone.
    auto status = h.ok({"status"});
    CHECK(status["agents"].empty());
    CHECK(status["liveAgents"] == 0);
    CHECK(status["tmux"]["running"] == false);
    auto list = h.agents();
    REQUIRE(list.size() == spawned.size());
    for (const auto& a : list) check_ended(a);
    CHECK(h.ok({"agents"}).empty());
    // Their unfinished tasks are back in the pool; the others are as they were.
    for (const auto& [name, doc] : spawned) {
        check_handed_back(h, working[name], name);
        check_handed_back(h, owned[name], name);
        INFO("agent " << name);
        CHECK(activity_of(h, "agent_exited", name).size() == 1);
        auto moved = activity_of(h, "tasks_reassigned", name);
        REQUIRE(moved.size() == 1);
        CHECK(moved[0]["details"]["tasks"] == Json{working[name], owned[name]});
    }
    CHECK(h.task(done) == done_before);
    CHECK(h.task(free_task) == free_before);

    // kill-agent of an agent that ended is refused, with or without --force, and changes
    // nothing.
    team::test::check_refused(h, {"kill-agent", "plain"}, 4, {}, "already terminated");
    team::test::check_refused(h, {"kill-agent", "stubborn", "--force"}, 4, {},
                              "already terminated");

    // A new spawn starts a new server (over the stale socket the SIGKILLed one left).
    auto fresh = h.start_agent("fresh", {"sleep", "1000"});
    CHECK(h.server_running());
    CHECK(h.panes() == std::set<std::string>{fresh["paneId"].get<std::string>()});
    CHECK(h.ok({"task", "claim", working["plain"], "--as", "fresh"})["status"] == "in_progress");
    CHECK(h.agent("fresh")["status"] == "active");

    // Teardown ends it, dissolves the team and leaves nothing.
    auto td = h.json_run({"teardown", "--grace", "2s"});
    INFO("teardown: " << td.out << td.err);
    CHECK(td.exit_code == 0);
    CHECK(td.json()["dissolved"] == true);
    check_handed_back(h, working["plain"], "fresh");
    h.finish_all();
}

TEST_CASE(
    "kill-agent and teardown right after the tmux server was killed converge and leave "
    "nothing",
    "[interference]") {
    Home h("if-server-late");
    std::map<std::string, Json> spawned;
    std::map<std::string, std::string> working;
    for (std::string name : {"a", "b", "c"}) {
        auto ready = h.env.dir() / ("ready-" + name);
        spawned[name] = h.start_agent(name, stubborn(ready));
        REQUIRE(eventually([&] { return fs::exists(ready); }));
        working[name] = h.add_task(name + "'s", name, "in_progress");
    }
    pid_t server = h.server_pid();
    REQUIRE(h.env.tmux({"kill-server"}).exit_code == 0);
    REQUIRE(eventually([&] { return !alive(server); }));
    // The agents ignore the hangup and SIGTERM; their supervisors are in their grace now.

    // A force-kill meanwhile ends it now: force_killed, or refused when its supervisor was
    // quicker.
    auto r = h.json_run({"kill-agent", "a", "--force", "--grace", "1s"});
    INFO("kill-agent: " << r.exit_code << " " << r.out << r.err);
    CHECK(h.agent_mark("a").alive().empty());  // the moment it returns
    if (r.exit_code == 0) {
        CHECK(r.json()["phase"] == "force_killed");
        CHECK(r.json()["reassignedTasks"] == Json{working["a"]});
        CHECK(h.agent("a")["exitReason"] == "force_killed");
    } else {
        CHECK(r.exit_code == 4);
        CHECK_THAT(r.out, Catch::Contains("already terminated"));
        check_ended(h.agent("a"));
    }
    check_handed_back(h, working["a"], "a");

    // Teardown of the rest, with no tmux server: exit 0, everything ended, team dissolved.
    auto td = h.json_run({"teardown", "--grace", "1s"});
    INFO("teardown: " << td.exit_code << " " << td.out << td.err);
    CHECK(td.exit_code == 0);
    auto doc = td.json();
    CHECK(doc["success"] == true);
    CHECK(doc["dissolved"] == true);
    CHECK(doc["survivors"] == 0);
    for (std::string name : {"b", "c"}) {
        INFO("agent " << name);
        CHECK(h.agent_mark(name).alive().empty());
        CHECK(h.agent(name)["status"] == "terminated");
        check_handed_back(h, working[name], name);
    }
    CHECK(h.ok({"status"})["status"] == "dissolved");
    h.finish_all();
}

TEST_CASE("a pane killed from outside ends that agent only and kill-agent of it converges",
          "[interference]") {
    Home h("if-pane");
    auto ready = h.env.dir() / "ready";
    auto victim = h.start_agent("victim", {"sleep", "1000"});
    auto tough = h.start_agent("tough", stubborn(ready));
    auto bystander = h.start_agent("bystander", {"sleep", "1000"});
    REQUIRE(eventually([&] { return fs::exists(ready); }));
    auto victim_task = h.add_task("victim's", "victim", "in_progress");
    auto tough_task = h.add_task("tough's", "tough", "in_progress");
    auto bystander_task = h.add_task("bystander's", "bystander", "in_progress");
    auto bystander_before = h.task(bystander_task);
    auto bystander_pid = static_cast<pid_t>(bystander["pid"].get<long>());
    auto bystander_supervisor = h.supervisor_of(bystander);

    // The victim: its pane killed, it goes (SIGHUP), and its supervisor records the end.
    auto victim_supervisor = h.supervisor_of(victim);
    REQUIRE(h.env.tmux({"kill-pane", "-t", victim["paneId"]}).exit_code == 0);
    CHECK(h.agent_mark("victim").none_alive_within(5000));
    CHECK(eventually([&] { return !alive(victim_supervisor); }, bound(5000)));
    auto v = Home::find(h.agents(), "victim");
    check_ended(v);
    check_handed_back(h, victim_task, "victim");
    CHECK(h.panes().count(victim["paneId"]) == 0);
    // kill-agent of it: already terminated (exit 4), and nothing changes.
    team::test::check_refused(h, {"kill-agent", "victim"}, 4, {}, "already terminated");
    team::test::check_refused(h, {"kill-agent", "victim", "--force"}, 4, {}, "already terminated");

    // The tough one ignores the hangup: force-killed right after its pane went, it is ended at
    // once (or refused, if its supervisor recorded the end first).
    REQUIRE(h.env.tmux({"kill-pane", "-t", tough["paneId"]}).exit_code == 0);
    auto r = h.json_run({"kill-agent", "tough", "--force", "--grace", "1s"});
    INFO("kill-agent: " << r.exit_code << " " << r.out << r.err);
    CHECK(h.agent_mark("tough").alive().empty());
    if (r.exit_code == 0) {
        CHECK(r.json()["phase"] == "force_killed");
        CHECK(h.agent("tough")["exitReason"] == "force_killed");
    } else {
        CHECK(r.exit_code == 4);
        check_ended(h.agent("tough"));
    }
    check_handed_back(h, tough_task, "tough");

    // The bystander is untouched: its pane, its process, its supervisor, its task.
    CHECK(h.agent("bystander")["status"] == "active");
    CHECK(h.panes() == std::set<std::string>{bystander["paneId"].get<std::string>()});
    CHECK(alive(bystander_pid));
    CHECK(alive(bystander_supervisor));
    CHECK(h.task(bystander_task) == bystander_before);
    CHECK(h.json_run({"kill-agent", "bystander", "--force"}).exit_code == 0);
    h.finish_all();
}

TEST_CASE(
    "agent processes killed with SIGKILL are recorded with their tasks handed back and "
    "leave no orphan",
    "[interference]") {
    bool agent = false, supervisor = false;
    SECTION("the agent's process") {
        agent = true;
    }
    SECTION("its pane supervisor") {
        supervisor = true;
    }
    SECTION("both at once") {
        agent = supervisor = true;
    }
    Home h("if-sigkill");
    // The agent's own process, with a child that left its session and one in the background.
    auto w = h.start_agent("w", {"sh", "-c", "setsid sleep 1001 & sleep 1002 & exec sleep 1000"});
    auto bystander = h.start_agent("bystander", {"sleep", "1000"});
    REQUIRE(eventually([&] { return h.agent_mark("w").alive().size() == 3; }));
    auto working = h.add_task("w's, in progress", "w", "in_progress");
    auto owned = h.add_task("w's, pending", "w");
    auto pid = static_cast<pid_t>(w["pid"].get<long>());
    auto w_supervisor = h.supervisor_of(w);
    auto bystander_supervisor = h.supervisor_of(bystander);

    if (supervisor) REQUIRE(::kill(w_supervisor, SIGKILL) == 0);
    if (agent) REQUIRE(::kill(pid, SIGKILL) == 0);
    CHECK(eventually([&] { return !alive(pid) && !alive(w_supervisor); }, bound(5000)));
    if (!supervisor) {
        // Its supervisor saw it end: it ended what the agent left behind (the escaped child
        // too) before it went.
        CHECK(h.agent_mark("w").none_alive_within(1000));
    }
    // The next look records the end; with the supervisor gone it is lost, and that look ends
    // what was left of it.
    auto a = Home::find(h.agents(), "w");
    check_ended(a);
    if (supervisor) {
        CHECK(a["exitReason"] == "lost");
    } else {
        CHECK(a["exitReason"] == "exited");
        CHECK(a["signal"] == "SIGKILL");
    }
    CHECK(h.agent_mark("w").none_alive_within(1000));
    check_handed_back(h, working, "w");
    check_handed_back(h, owned, "w");
    CHECK(eventually([&] { return h.panes().count(w["paneId"]) == 0; }, bound(5000)));
    CHECK(activity_of(h, "agent_exited", "w").size() == 1);
    // The bystander is untouched.
    CHECK(h.agent("bystander")["status"] == "active");
    CHECK(alive(static_cast<pid_t>(bystander["pid"].get<long>())));
    CHECK(alive(bystander_supervisor));
    CHECK(h.panes() == std::set<std::string>{bystander["paneId"].get<std::string>()});
    team::test::check_refused(h, {"kill-agent", "w", "--force"}, 4, {}, "already terminated");
    CHECK(h.json_run({"kill-agent", "bystander", "--force"}).exit_code == 0);
    h.finish_all();
}

// ---------------------------------------------------------------------------------------------
// A read-only home.

namespace {

// How `team` is run on a home that cannot be written (read-only, or a full disk): `prefix` runs
// it (empty: directly); with `by_mode` the home's files and directories lose their write
// permission first; `why` are the words a clear error says it with.
struct RunWay {
    std::string name;
    std::vector<std::string> prefix;
    bool by_mode = false;
    std::vector<std::string> why;
};

// Write permission taken from everything in a directory (and the directory), and given back
// exactly as it was when the guard goes.
class ReadOnlyModes {
  public:
    explicit ReadOnlyModes(const fs::path& root) {
        std::error_code ec;
        saved_.emplace_back(root, fs::status(root).permissions());
        for (auto it = fs::recursive_directory_iterator(root, ec);
             !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
            if (it->is_symlink()) continue;
            saved_.emplace_back(it->path(), it->symlink_status().permissions());
        }
        for (const auto& [path, perms] : saved_) {
            fs::permissions(path,
                            perms & ~(fs::perms::owner_write | fs::perms::group_write |
                                      fs::perms::others_write),
                            fs::perm_options::replace, ec);
        }
    }
    ~ReadOnlyModes() {
        std::error_code ec;
        for (const auto& [path, perms] : saved_) {
            fs::permissions(path, perms, fs::perm_options::replace, ec);
        }
    }
    ReadOnlyModes(const ReadOnlyModes&) = delete;
    ReadOnlyModes& operator=(const ReadOnlyModes&) = delete;

  private:
    std::vector<std::pair<fs::path, fs::perms>> saved_;
};

// Modes: root writes whatever the modes say (CAP_DAC_OVERRIDE; CAP_DAC_READ_SEARCH for
// directories), so root's `team` runs through setpriv without those two capabilities, in its
// bounding set too (nothing it starts can get them back).
RunWay by_mode() {
    RunWay way{"read-only files and directories", {}, true, {"read-only", "Permission denied"}};
    if (::geteuid() == 0) {
        way.prefix = {"/usr/bin/setpriv", "--inh-caps=-dac_override,-dac_read_search",
                      "--bounding-set=-dac_override,-dac_read_search", "--"};
    }
    return way;
}

// A mount: `team` runs in a private mount namespace of its own (gone when it exits) where the
// home is bound read-only onto itself; a user who is not root maps itself to root in a user
// namespace of its own to be allowed to mount there.
RunWay by_mount(const fs::path& home) {
    RunWay way{
        "a read-only mount", {"/usr/bin/unshare"}, false, {"read-only", "Read-only file system"}};
    if (::geteuid() != 0) way.prefix.push_back("--map-root-user");
    for (const std::string& a :
         {std::string("--mount"), std::string("--propagation"), std::string("private"),
          std::string("/bin/sh"), std::string("-c"),
          std::string("mount --bind -o ro \"$0\" \"$0\" && exec \"$@\""), home.string()}) {
        way.prefix.push_back(a);
    }
    return way;
}

// Runs `program ARGS...` the way `way` says, as one of the test's commands (its marker and its
// team, TEAM_HOME the home).
RunResult run_way(const Home& h, const RunWay& way, const std::vector<std::string>& argv,
                  const std::string& input = "") {
    std::vector<std::string> full = way.prefix;
    full.insert(full.end(), argv.begin(), argv.end());
    auto env = clean_env(h.extra());
    env["TEAM_HOME"] = h.env.home().string();
    return Child(full, env, input).wait();
}

RunResult team_way(const Home& h, const RunWay& way, std::vector<std::string> args,
                   const std::string& input = "") {
    args.insert(args.begin(), {team_binary(), "--json"});
    return run_way(h, way, args, input);
}

// Empty when the way makes the home read-only for the commands it runs; else why not.
std::string read_only_refusal(const Home& h, const RunWay& way) {
    for (const auto& tool : way.prefix) {
        if (!tool.empty() && tool[0] == '/' && !fs::exists(tool)) return tool + " is missing";
        break;
    }
    auto probe = h.env.home() / "probe";
    auto r = run_way(
        h, way,
        {"/bin/sh", "-c",
         "if touch " + sq(probe) + " 2>/dev/null; then echo writable; else echo read-only; fi"});
    std::error_code ec;
    fs::remove(probe, ec);
    if (r.exit_code == 0 && r.out == "read-only\n") return "";
    return "the probe said [" + r.out + "] with exit " + std::to_string(r.exit_code) +
           ", stderr: " + r.err;
}

}  // namespace

TEST_CASE(
    "a read-only home: writes fail with a clear error and change nothing and all works "
    "once it is writable again",
    "[interference]") {
    bool mount = false;
    SECTION("read-only files and directories") {}
    SECTION("a read-only mount") {
        mount = true;
    }
    Home h("if-readonly");
    // Something of every kind: an agent that ended, tasks (one blocked), messages, a shell.
    h.start_agent("old", {"sleep", "1000"});
    REQUIRE(h.json_run({"kill-agent", "old", "--force"}).exit_code == 0);
    REQUIRE(eventually([&] { return !h.server_running(); }, bound(5000)));
    auto first = h.add_task("first");
    h.add_task("second");
    h.ok({"task", "add", "third", "--blocked-by", first});
    h.ok({"send", "leader", "hello"});
    h.ok({"send", "leader", "again"});
    std::string shell = h.ok({"shell", "start", "--", "true"})["shell_id"];
    h.ok({"shell", "wait", shell, "--timeout", "20s"});

    const std::vector<std::vector<std::string>> reads{{"task", "list"},
                                                      {"task", "show", first},
                                                      {"inbox"},
                                                      {"agents", "--all"},
                                                      {"list"},
                                                      {"activity"},
                                                      {"status"},
                                                      {"shell", "list", "--all"},
                                                      {"shutdown", "status", "old"}};
    std::map<std::vector<std::string>, Json> before;
    for (const auto& r : reads) before[r] = h.ok(r);
    auto rows_before = h.snapshot();

    RunWay way = mount ? by_mount(h.env.home()) : by_mode();
    {
        std::optional<ReadOnlyModes> modes;
        if (way.by_mode) modes.emplace(h.env.home());
        auto refusal = read_only_refusal(h, way);
        if (!refusal.empty()) {
            WARN("cannot make the home read-only with " << way.name << ": " << refusal
                                                        << "; this way is not tested here");
            return;
        }
        const std::string home = h.env.home().string();
        auto nested = h.env.home() / "nested";
        // Writes of every kind fail, with a message naming the home or its database.
        const std::vector<std::vector<std::string>> writes{
            {"send", "leader", "while read-only"},
            {"task", "add", "while read-only"},
            {"task", "claim", first},
            {"task", "update", first, "--subject", "renamed"},
            {"inbox", "--mark-read"},
            {"inbox", "ack", "1"},
            {"create", "if-readonly-two"},
            {"spawn", "w", "--env", h.mark.entry(), "--", "sleep", "1000"},
            {"shell", "start", "--", "sleep", "1000"},
            {"teardown", "--grace", "1s"}};
        for (const auto& args : writes) {
            auto r = team_way(h, way, args);
            INFO(way.name << ": team " << shown(args) << "-> " << r.exit_code
                          << " stdout: " << r.out << " stderr: " << r.err);
            check_clear_failure(r, home, way.why);
        }
        // A new home cannot be made inside it either.
        {
            auto r = team_way(h, way, {"--home", nested.string(), "create", "nested"});
            INFO(way.name << ": create in a new home -> " << r.out << r.err);
            check_clear_failure(r, nested.string(), way.why);
        }
        // Nothing was started: no pane, no server, no process.
        CHECK_FALSE(h.server_running());
        CHECK(h.mark.none_alive_within(1000));

        // Reads: SQLite reads a WAL database on a read-only home (its -wal and -shm files
        // exist), so every read command works and shows what it showed before.
        for (const auto& args : reads) {
            auto rr = team_way(h, way, args);
            INFO(way.name << ": team " << shown(args) << "-> " << rr.exit_code
                          << " stdout: " << rr.out << " stderr: " << rr.err);
            CHECK(rr.exit_code == 0);
            if (rr.exit_code == 0) {
                CHECK(Json::parse(rr.out, nullptr, false) == before[args]);
            } else {
                check_clear_failure(rr, home, way.why);  // at least a clear error
            }
        }
        CHECK_FALSE(fs::exists(nested));
    }

    // Writable again: intact, nothing lost or half-written, and everything works.
    CHECK(h.integrity() == "ok|\n--\n");
    CHECK(h.snapshot() == rows_before);
    for (const auto& r : reads) CHECK(h.ok(r) == before[r]);
    CHECK(h.ok({"send", "leader", "writable again"})["text"] == "writable again");
    auto added = h.add_task("after");
    CHECK(h.ok({"task", "claim", first})["status"] == "in_progress");
    h.start_agent("w", {"sleep", "1000"});
    CHECK(h.ok({"task", "claim", added, "--as", "w"})["owner"] == "w");
    auto killed = h.ok({"kill-agent", "w", "--force"});
    CHECK(killed["reassignedTasks"] == Json{added});
    CHECK(h.integrity() == "ok|\n--\n");
    h.finish_all();
}

// ---------------------------------------------------------------------------------------------
// A full disk.

namespace {

std::string errno_text(const std::string& what) {
    return what + ": " + std::strerror(errno);
}

std::size_t threads_of_this_process() {
    std::size_t n = 0;
    std::error_code ec;
    for (auto it = fs::directory_iterator("/proc/self/task", ec);
         !ec && it != fs::directory_iterator(); it.increment(ec)) {
        ++n;
    }
    return n;
}

// A tmpfs of `bytes` mounted on `at`, in a private mount namespace that this process (and so
// every command it starts from now on, and their tmux server) enters for the guard's lifetime.
// The guard unmounts it and takes the process back to its own namespace; should the process
// die first, the namespace, and with it the mount, goes with the last process in it. Nothing
// outside the namespace ever sees the mount. Needs root (CAP_SYS_ADMIN) and a process with one
// thread (unshare and setns of a mount namespace refuse more).
class PrivateDisk {
  public:
    PrivateDisk(const fs::path& at, std::size_t bytes) : at_(at) {
        if (threads_of_this_process() != 1) {
            why_not_ = "the test process has more than one thread";
            return;
        }
        saved_ns_ = ::open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
        saved_cwd_ = ::open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (saved_ns_ < 0 || saved_cwd_ < 0) {
            why_not_ = errno_text("open /proc/self/ns/mnt");
            return;
        }
        if (::unshare(CLONE_NEWNS) != 0) {
            why_not_ = errno_text("unshare(CLONE_NEWNS)");
            return;
        }
        entered_ = true;
        // Nothing mounted here propagates back to the namespace this process came from.
        if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
            why_not_ = errno_text("making / private");
            return;
        }
        std::error_code ec;
        fs::create_directories(at, ec);
        std::string options = "size=" + std::to_string(bytes) + ",mode=0700";
        if (::mount("team-test-disk", at.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) !=
            0) {
            why_not_ = errno_text("mount -t tmpfs");
            return;
        }
        mounted_ = true;
    }
    ~PrivateDisk() {
        if (mounted_) ::umount2(at_.c_str(), MNT_DETACH);
        if (entered_ && ::setns(saved_ns_, CLONE_NEWNS) != 0) {
            std::fprintf(stderr, "cannot go back to the test's mount namespace: %s\n",
                         std::strerror(errno));
        }
        if (entered_ && saved_cwd_ >= 0) (void)!::fchdir(saved_cwd_);
        if (saved_ns_ >= 0) ::close(saved_ns_);
        if (saved_cwd_ >= 0) ::close(saved_cwd_);
    }
    PrivateDisk(const PrivateDisk&) = delete;
    PrivateDisk& operator=(const PrivateDisk&) = delete;

    bool mounted() const { return mounted_; }
    const std::string& why_not() const { return why_not_; }

  private:
    fs::path at_;
    int saved_ns_ = -1;
    int saved_cwd_ = -1;
    bool entered_ = false;
    bool mounted_ = false;
    std::string why_not_;
};

// Writes `path` until the file system says ENOSPC, in ever smaller pieces down to one byte.
// Returns how much it wrote.
std::size_t fill(const fs::path& path) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    REQUIRE(fd >= 0);
    std::vector<char> chunk(1 << 20, 'f');
    std::size_t total = 0;
    for (std::size_t size = chunk.size(); size > 0; size /= 2) {
        for (;;) {
            ssize_t n = ::write(fd, chunk.data(), size);
            if (n > 0) {
                total += static_cast<std::size_t>(n);
                continue;
            }
            INFO("writing the filler: " << std::strerror(errno));
            REQUIRE((n < 0 && (errno == ENOSPC || errno == EFBIG)));
            break;
        }
    }
    ::close(fd);
    return total;
}

}  // namespace

TEST_CASE(
    "a full disk: writes fail with a clear error and leave nothing half-written and all "
    "works once space is free again",
    "[interference]") {
    Home h("if-full", false);
    PrivateDisk disk(h.env.home(), 8u << 20);
    // The fallback: RLIMIT_FSIZE at the size the store's files have once the data is in.
    RunWay full{"a full disk", {}, false, {"disk is full"}};
    bool by_limit = !disk.mounted();
    if (by_limit) {
        WARN("no private tmpfs (" << disk.why_not()
                                  << "): the full disk is simulated with RLIMIT_FSIZE instead");
        full.why.push_back("disk I/O error");  // EFBIG at the limit is an I/O error to SQLite
    }
    {
        auto r = h.run({"create", h.team(), "--cwd", h.env.dir().string()});
        INFO("create: " << r.out << r.err);
        REQUIRE(r.exit_code == 0);
    }
    std::vector<std::string> subjects{"first", "second", "third"};
    for (const auto& s : subjects) h.add_task(s);
    std::vector<std::string> texts{"hello", "again"};
    for (const auto& t : texts) h.ok({"send", "leader", t});
    auto rows_before = h.snapshot();

    auto filler = h.env.home() / "filler";
    if (by_limit) {
        std::uintmax_t limit = 0;
        for (const char* f : {"team.db", "team.db-wal"}) {
            std::error_code ec;
            auto size = fs::file_size(h.env.home() / f, ec);
            if (!ec) limit = std::max(limit, size);
        }
        full.prefix = {"/bin/sh", "-c", "trap '' XFSZ; exec prlimit --fsize=\"$0\" -- \"$@\"",
                       std::to_string(limit)};
    } else {
        auto wrote = fill(filler);
        INFO("filler: " << wrote << " bytes");
        struct statvfs st {};
        REQUIRE(::statvfs(h.env.home().c_str(), &st) == 0);
        CHECK(st.f_bavail == 0);
    }
    auto check_full = [&](const RunResult& r, const std::vector<std::string>& args) {
        INFO(full.name << ": team " << shown(args) << "-> " << r.exit_code << " stdout: " << r.out
                       << " stderr: " << r.err);
        check_clear_failure(r, "", full.why);
    };

    // A message of 900 KiB needs more pages than any WAL of the home has room for: it fails,
    // and nothing of it is kept.
    std::string big(900 * 1024, 'x');
    check_full(team_way(h, full, {"send", "leader", "-"}, big), {"send", "leader", "-"});
    CHECK(h.snapshot() == rows_before);
    CHECK(h.integrity() == "ok|\n--\n");

    // Small writes go on until the space the WAL had left is used up: each one either is done
    // or fails with a clear error, and leaves nothing.
    int failed_adds = 0, failed_sends = 0;
    for (int i = 0; i < 400 && (failed_adds == 0 || failed_sends == 0); ++i) {
        if (failed_adds == 0) {
            std::string subject = "task " + std::to_string(i) + std::string(2000, 't');
            auto r = team_way(h, full, {"task", "add", subject});
            if (r.exit_code == 0) {
                subjects.push_back(subject);
            } else {
                check_full(r, {"task", "add", "task " + std::to_string(i)});
                ++failed_adds;
            }
        }
        if (failed_sends == 0) {
            std::string text = "message " + std::to_string(i) + std::string(2000, 'm');
            auto r = team_way(h, full, {"send", "leader", text});
            if (r.exit_code == 0) {
                texts.push_back(text);
            } else {
                check_full(r, {"send", "leader", "message " + std::to_string(i)});
                ++failed_sends;
            }
        }
    }
    CHECK(failed_adds > 0);
    CHECK(failed_sends > 0);

    // Reads still work on the full disk, and show exactly what was reported done.
    auto tasks = team_way(h, full, {"task", "list"});
    INFO("task list: " << tasks.err);
    REQUIRE(tasks.exit_code == 0);
    std::vector<std::string> listed;
    for (const auto& t : tasks.json()) listed.push_back(t["subject"]);
    CHECK(listed == subjects);
    auto inbox = team_way(h, full, {"inbox"});
    INFO("inbox: " << inbox.err);
    REQUIRE(inbox.exit_code == 0);
    std::vector<std::string> received;
    for (const auto& m : inbox.json()) received.push_back(m["text"]);
    CHECK(received == texts);
    CHECK(h.integrity() == "ok|\n--\n");

    // Space again: everything works, the earlier data is intact.
    if (by_limit) {
        full.prefix.clear();
    } else {
        fs::remove(filler);
    }
    auto sent = h.env.start({"--json", "send", "leader", "-"}, h.extra(), big).wait();
    INFO("the big send again: " << sent.exit_code << " " << sent.err);
    CHECK(sent.exit_code == 0);
    auto added = h.add_task("after");
    h.start_agent("w", {"sleep", "1000"});
    CHECK(h.ok({"task", "claim", added, "--as", "w"})["owner"] == "w");
    CHECK(h.ok({"kill-agent", "w", "--force"})["reassignedTasks"] == Json{added});
    listed.clear();
    for (const auto& t : h.ok({"task", "list"})) listed.push_back(t["subject"]);
    subjects.push_back("after");
    CHECK(listed == subjects);
    CHECK(h.integrity() == "ok|\n--\n");
    h.finish_all();
}

// ---------------------------------------------------------------------------------------------
// Deadlines on the monotonic clock, the wall clock jumping (tests/proof/clock_jump.cpp).

namespace {

// When the wall clock jumps, after a command starts: once it has read the clock to set its
// deadline, well before the deadline.
constexpr int kJumpAfterMs = 300;

// The library built from clock_jump.cpp, beside this executable.
std::string clock_jump_library() {
    return team::test::test_build_file("libclock_jump.so");
}

// The environment that preloads clock_jump: the wall clock jumps by `seconds`, `after_ms`
// after each process that inherits it started.
Env jump_env(int seconds, int after_ms) {
    std::string asan = std::getenv("ASAN_OPTIONS") ? std::getenv("ASAN_OPTIONS") : "";
    // ASan refuses a library preloaded before its runtime unless told not to check.
    asan += (asan.empty() ? "" : ":") + std::string("verify_asan_link_order=0");
    return {{"LD_PRELOAD", clock_jump_library()},
            {"CLOCK_JUMP_SECONDS", (seconds > 0 ? "+" : "") + std::to_string(seconds)},
            {"CLOCK_JUMP_AFTER_MS", std::to_string(after_ms)},
            {"ASAN_OPTIONS", asan}};
}

double wall_now() {
    using namespace std::chrono;
    return duration<double>(system_clock::now().time_since_epoch()).count();
}

// 2026-11-22T10:04:05.123Z -> seconds since the epoch.
double epoch_of(const std::string& iso) {
    std::tm tm{};
    int ms = 0;
    REQUIRE(std::sscanf(iso.c_str(), "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                        &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms) == 7);
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return static_cast<double>(::timegm(&tm)) + ms / 1000.0;
}

struct Timed {
    RunResult r;
    Ms took;
};

Timed timed(const Home& h, const std::vector<std::string>& args, const Env& more) {
    auto start = Steady::now();
    auto r = h.json_run(args, more);
    return {r, std::chrono::duration_cast<Ms>(Steady::now() - start)};
}

// A deadline of about a second held: not cut short by a forward jump, not stretched by a
// backward one (which would make it wait an hour). Generous bounds, not a measurement.
void check_about_a_second(const Timed& t, const std::vector<std::string>& args) {
    INFO("team " << shown(args) << "-> " << t.r.exit_code << " after " << t.took.count()
                 << " ms, stdout: " << t.r.out.substr(0, 500) << " stderr: " << t.r.err);
    CHECK(t.took >= Ms(800));
    CHECK(t.took <= Ms(bound(10000)));
}

}  // namespace

TEST_CASE("the clock_jump library moves the wall clock of team and of the programs it starts",
          "[interference]") {
    Home h("if-clock-lib");
    for (int offset : {3600, -3600}) {
        INFO("offset " << offset << " s");
        // In one process: the real time first, then, 300 ms after it started, the jump.
        double before = wall_now();
        auto r = Child({"/bin/bash", "-c", "echo $EPOCHREALTIME; sleep 1; echo $EPOCHREALTIME"},
                       clean_env(jump_env(offset, kJumpAfterMs)))
                     .wait();
        INFO("bash: " << r.out << r.err);
        REQUIRE(r.exit_code == 0);
        auto lines = team::test::lines_of(r.out);
        REQUIRE(lines.size() == 2);
        CHECK(std::abs(std::stod(lines[0]) - before) < 30);
        CHECK(std::abs(std::stod(lines[1]) - (before + 1 + offset)) < 30);
        // team's own clock: a message stored an hour ahead or behind.
        before = wall_now();
        auto sent = h.ok({"send", "leader", "when?"}, jump_env(offset, 0));
        CHECK(std::abs(epoch_of(sent["createdAt"]) - (before + offset)) < 30);
    }
}

TEST_CASE("deadlines hold on the monotonic clock while the wall clock jumps forward or back",
          "[interference]") {
    int offset = 0;
    SECTION("an hour forward") {
        offset = 3600;
    }
    SECTION("an hour back") {
        offset = -3600;
    }
    Home h("if-clock");
    auto jump = jump_env(offset, kJumpAfterMs);
    INFO("the wall clock jumps by " << offset << " s " << kJumpAfterMs
                                    << " ms after each command starts");

    // inbox --wait: nothing comes, it gives up after its second with 124 and an empty list.
    std::vector<std::string> args{"inbox", "--wait", "1s"};
    auto t = timed(h, args, jump);
    check_about_a_second(t, args);
    CHECK(t.r.exit_code == 124);
    CHECK(Json::parse(t.r.out, nullptr, false) == Json::array());

    // run --timeout: the command is ended at its second, 124.
    args = {"run", "--timeout", "1s", "--", "sleep", "30"};
    t = timed(h, args, jump);
    check_about_a_second(t, args);
    CHECK(t.r.exit_code == 124);
    CHECK(Json::parse(t.r.out, nullptr, false)["timedOut"] == true);

    // shell start --timeout: the shell's supervisor (which inherits the jump) ends it at its
    // second.
    auto start = Steady::now();
    std::string timing_out =
        h.ok({"shell", "start", "--timeout", "1s", "--", "sleep", "30"}, jump)["shell_id"];
    auto waited = h.json_run({"shell", "wait", timing_out, "--timeout", "30s"});
    check_about_a_second({waited, std::chrono::duration_cast<Ms>(Steady::now() - start)},
                         {"shell start --timeout 1s, then shell wait"});
    CHECK(h.ok({"shell", "status", timing_out})["status"] == "timed_out");

    // shell wait --timeout: it gives up after its second with 124.
    std::string running = h.ok({"shell", "start", "--", "sleep", "30"})["shell_id"];
    args = {"shell", "wait", running, "--timeout", "1s"};
    t = timed(h, args, jump);
    check_about_a_second(t, args);
    CHECK(t.r.exit_code == 124);
    CHECK(h.ok({"shell", "status", running})["status"] == "running");
    h.ok({"shell", "kill", running});

    // kill-agent --wait --timeout: the agent never answers; it gives up after its second.
    h.start_agent("quiet", {"sleep", "1000"});
    args = {"kill-agent", "quiet", "--wait", "--timeout", "1s"};
    t = timed(h, args, jump);
    check_about_a_second(t, args);
    CHECK(t.r.exit_code == 124);
    CHECK(h.agent("quiet")["status"] == "shutting_down");

    // kill-agent --force --grace: SIGTERM is ignored; SIGKILL comes after the grace, not before.
    auto ready = h.env.dir() / "ready";
    auto tough = h.start_agent("tough", stubborn(ready));
    REQUIRE(eventually([&] { return fs::exists(ready); }));
    args = {"kill-agent", "tough", "--force", "--grace", "1s"};
    t = timed(h, args, jump);
    check_about_a_second(t, args);
    CHECK(t.took >= Ms(1000));  // the grace itself, on the monotonic clock
    CHECK(t.r.exit_code == 0);
    CHECK(Json::parse(t.r.out, nullptr, false)["phase"] == "force_killed");
    CHECK(h.agent_mark("tough").alive().empty());

    // teardown --grace: the quiet agent never confirms; it is forced after the grace.
    args = {"teardown", "--grace", "1s"};
    t = timed(h, args, jump);
    check_about_a_second(t, args);
    CHECK(t.r.exit_code == 0);
    CHECK(h.agent("quiet")["exitReason"] == "force_killed");
    CHECK(h.agent_mark("quiet").alive().empty());
    h.finish_all();
}

// A look (every command that reconciles) leaves a `spawning` record with no supervisor alone
// while the `team spawn` named in the record lives, whatever the clocks say. A look whose wall
// clock is an hour ahead (a step forward while a spawn is under way) must not end a spawn that
// is merely waiting for tmux. The spawn is held there by stopping the home's tmux server
// (SIGSTOP; SIGCONT whatever happens).
TEST_CASE("a wall clock an hour ahead in a look does not end an agent that is being spawned",
          "[interference]") {
    Home h("if-clock-spawn");
    h.start_agent("first", {"sleep", "1000"});
    struct Resume {
        pid_t pid;
        ~Resume() { ::kill(pid, SIGCONT); }
    } resume{h.server_pid()};
    REQUIRE(::kill(resume.pid, SIGSTOP) == 0);
    auto spawn = h.env.start(
        {"--json", "spawn", "second", "--env", h.mark.entry(), "--", "sleep", "1000"}, h.extra());
    auto spawning = [&] {
        return h.rows({"SELECT status FROM agents WHERE name = 'second'"}) == "spawning|\n--\n";
    };
    REQUIRE(eventually(spawning, bound(5000)));
    auto look = h.json_run({"agents", "--all"}, jump_env(3600, 0));
    INFO("the look: " << look.out << look.err);
    CHECK(look.exit_code == 0);
    ::kill(resume.pid, SIGCONT);
    auto r = spawn.wait();
    INFO("spawn: " << r.exit_code << " " << r.out << r.err);
    CHECK(r.exit_code == 0);
    auto doc = Json::parse(r.out, nullptr, false);
    CHECK(doc["pid"].is_number_integer());
    CHECK(doc["paneId"].is_string());
    auto second = h.agent("second");
    INFO("second: " << second.dump());
    CHECK(second["status"] == "active");
    for (std::string name : {"first", "second"}) h.json_run({"kill-agent", name, "--force"});
    h.finish_all();
}

// kill-agent --force-after stores its deadline twice: as wall-clock milliseconds (force_at,
// shown as forceAt) and on CLOCK_BOOTTIME (force_at_boot), which no one sets and every process
// of the machine reads alike. The agent's pane supervisor arms it from the boot clock, each
// time it reads its plan (when woken by SIGUSR1, and at each deadline it armed), so a step of
// its wall clock, before or after the deadline was set, moves nothing. These tests preload the
// jump into the pane supervisors (the first tmux server of the home is started with it, and
// passes it on).
TEST_CASE("a --force-after deadline holds when the wall clock of the agent's supervisor jumps",
          "[interference]") {
    int offset = 0, after_ms = 0;
    SECTION("back an hour after the deadline was set") {
        offset = -3600;
        after_ms = 1500;
    }
    SECTION("forward an hour before the deadline was set") {
        offset = 3600;
    }
    Home h("if-clock-deadline");
    auto w = h.start_agent("w", {"sleep", "1000"}, jump_env(offset, after_ms));
    auto supervisor = h.supervisor_of(w);
    REQUIRE(team::proc::environ_has(supervisor, std::string("LD_PRELOAD=") + clock_jump_library()));

    auto start = Steady::now();
    auto asked = h.ok({"kill-agent", "w", "--force-after", "3s"});
    REQUIRE(asked["phase"] == "requested");
    // Read from the store (the supervisor records the end), not through `team agents`: the
    // look is repeated for seconds.
    auto ended = [&] {
        std::this_thread::sleep_for(Ms(50));
        return h.rows({"SELECT status FROM agents WHERE name = 'w'"}) == "terminated|\n--\n";
    };
    // Not before its deadline...
    CHECK_FALSE(eventually(ended, 2000));
    // ...and at it, force-killed (a generous bound: an hour late is what a wall-clock deadline
    // would do).
    bool on_time = eventually(ended, bound(15000));
    auto took = std::chrono::duration_cast<Ms>(Steady::now() - start);
    INFO("the agent: " << h.agent("w").dump() << " after " << took.count() << " ms");
    CHECK(on_time);
    if (on_time) CHECK(h.agent("w")["exitReason"] == "force_killed");
    // Whatever happened, it ends now.
    if (!on_time) h.json_run({"kill-agent", "w", "--force"});
    h.finish_all();
}
