// team shell start | list | status | output | wait | kill | release | gc (SPEC 8), run as a user
// would, on a temporary home. Every process a test starts carries the test's marker, and every
// test that starts processes proves at its end that none of them is alive.
#include <SQLiteCpp/SQLiteCpp.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "proc/process_table.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/marker.hpp"
#include "tests/support/probe.hpp"
#include "tests/support/process.hpp"

using team::test::alive;
using team::test::bound;
using team::test::Child;
using team::test::eventually;
using team::test::Marker;
using team::test::RunResult;
using team::test::TeamEnv;
using Env = std::map<std::string, std::string>;
using Ms = std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;

namespace {

Env with_mark(const Marker& mark) {
    return {{mark.key(), mark.value()}};
}

// Runs `team ARGS` with the marker in its environment (so whatever it starts carries it).
RunResult team_run(const TeamEnv& env, const Marker& mark, const std::vector<std::string>& args) {
    return env.run(args, with_mark(mark));
}

// `team shell start --json OPTIONS -- CMD...`; returns the shell id.
std::string start_shell(const TeamEnv& env, const Marker& mark,
                        const std::vector<std::string>& command,
                        const std::vector<std::string>& options = {}) {
    std::vector<std::string> args{"shell", "start", "--json"};
    args.insert(args.end(), options.begin(), options.end());
    args.push_back("--");
    args.insert(args.end(), command.begin(), command.end());
    auto r = team_run(env, mark, args);
    INFO("stdout: " << r.out << " stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    auto doc = r.json();
    REQUIRE(doc["success"] == true);
    REQUIRE(doc["pid"].is_number_integer());
    REQUIRE(doc["output_file"].is_string());
    std::string id = doc["shell_id"].get<std::string>();
    REQUIRE(id.size() == 9);
    REQUIRE(id.rfind("bg-", 0) == 0);
    REQUIRE(id.find_first_not_of("0123456789abcdef", 3) == std::string::npos);
    return id;
}

nlohmann::json shell_status(const TeamEnv& env, const Marker& mark, const std::string& id) {
    auto r = team_run(env, mark, {"shell", "status", id, "--json"});
    INFO("stdout: " << r.out << " stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    return r.json();
}

nlohmann::json shell_output(const TeamEnv& env, const Marker& mark, const std::string& id,
                            const std::vector<std::string>& options = {}) {
    std::vector<std::string> args{"shell", "output", id, "--json"};
    args.insert(args.end(), options.begin(), options.end());
    auto r = team_run(env, mark, args);
    INFO("stdout: " << r.out << " stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    return r.json();
}

RunResult shell_kill(const TeamEnv& env, const Marker& mark, const std::string& id,
                     const std::vector<std::string>& options = {}) {
    std::vector<std::string> args{"shell", "kill", id, "--json"};
    args.insert(args.end(), options.begin(), options.end());
    return team_run(env, mark, args);
}

nlohmann::json shell_wait(const TeamEnv& env, const Marker& mark, const std::string& id) {
    auto r = team_run(env, mark, {"shell", "wait", id, "--timeout", "5s", "--json"});
    INFO("stdout: " << r.out << " stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    return r.json();
}

// Waits until the shell has printed `text` (so e.g. a trap is installed before it is killed).
bool output_contains(const TeamEnv& env, const Marker& mark, const std::string& id,
                     const std::string& text) {
    return eventually([&] {
        auto r = team_run(env, mark, {"shell", "output", id, "--json"});
        return r.exit_code == 0 &&
               r.json()["output"].get<std::string>().find(text) != std::string::npos;
    });
}

bool gone_within(pid_t pid, int ms) {
    return eventually([&] { return !alive(pid); }, bound(ms));
}

bool valid_utf8(const std::string& s) {
    size_t i = 0;
    while (i < s.size()) {
        auto c = static_cast<unsigned char>(s[i]);
        size_t len = c < 0x80           ? 1
                     : (c >> 5) == 0x6  ? 2
                     : (c >> 4) == 0xE  ? 3
                     : (c >> 3) == 0x1E ? 4
                                        : 0;
        if (len == 0 || i + len > s.size()) return false;
        for (size_t k = 1; k < len; ++k) {
            if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
        }
        i += len;
    }
    return true;
}

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

struct DbPids {
    std::int64_t pid = 0, supervisor_pid = 0, pid_start = 0, supervisor_start = 0;
};

DbPids db_pids(const TeamEnv& env, const std::string& id) {
    SQLite::Database db((env.home() / "team.db").string(), SQLite::OPEN_READONLY);
    db.setBusyTimeout(5000);
    SQLite::Statement q(
        db, "SELECT pid, supervisor_pid, pid_start, supervisor_start FROM shells WHERE id = ?");
    q.bind(1, id);
    REQUIRE(q.executeStep());
    return {q.getColumn(0).getInt64(), q.getColumn(1).getInt64(), q.getColumn(2).getInt64(),
            q.getColumn(3).getInt64()};
}

// A process of the test's own (a session and group leader, with a child), started later than
// the shell's processes: a stand-in for one that reused their pid. The start time (in clock
// ticks of 10 ms) must differ from the recorded ones, as it always does for a real reuse.
Child unrelated_process(const Marker& mark, const DbPids& recorded) {
    std::this_thread::sleep_for(Ms(50));
    Child other({"/usr/bin/setsid", "/bin/sh", "-c", "sleep 1000 & wait"},
                team::test::clean_env(with_mark(mark)));
    auto start = team::proc::start_time_of(other.pid());
    REQUIRE(start);
    REQUIRE(static_cast<std::int64_t>(*start) != recorded.pid_start);
    REQUIRE(static_cast<std::int64_t>(*start) != recorded.supervisor_start);
    return other;
}

const char* const kIgnoreTerm = "trap '' TERM INT; echo ready; while :; do sleep 0.1; done";

double seconds_since(Steady::time_point t0) {
    return std::chrono::duration<double>(Steady::now() - t0).count();
}

}  // namespace

TEST_CASE("shell start, list, wait: the end is recorded after the starter exited",
          "[shells][sanitize]") {
    TeamEnv env;
    Marker mark;
    auto gate = env.dir() / "go";
    std::string script = "while [ ! -e '" + gate.string() + "' ]; do sleep 0.02; done; exit 3";
    auto id = start_shell(env, mark, {"sh", "-c", script});

    // Human table.
    auto human = team_run(env, mark, {"shell", "list"});
    REQUIRE(human.exit_code == 0);
    for (const char* header : {"ID", "COMMAND", "STARTED", "STATUS"}) {
        CHECK_THAT(human.out, Catch::Contains(header));
    }
    CHECK_THAT(human.out, Catch::Contains(id));
    CHECK_THAT(human.out, Catch::Contains("running"));
    CHECK_THAT(human.out, Catch::Contains("sh -c"));

    // JSON: the fields of SPEC 8 "Shell JSON".
    auto list = team_run(env, mark, {"shell", "list", "--json"});
    REQUIRE(list.exit_code == 0);
    auto doc = list.json();
    REQUIRE(doc.is_array());
    REQUIRE(doc.size() == 1);
    auto s = doc[0];
    for (const char* key : {"id", "pid", "command", "cwd", "agent", "status", "startedAt",
                            "endedAt", "exitCode", "signal", "timeout", "outputFile"}) {
        CHECK(s.contains(key));
    }
    CHECK(s["id"] == id);
    CHECK(s["status"] == "running");
    CHECK(s["pid"].is_number_integer());
    CHECK(s["command"] == nlohmann::json::array({"sh", "-c", script}));
    CHECK(s["agent"].is_null());
    CHECK(s["endedAt"].is_null());
    CHECK(s["exitCode"].is_null());
    CHECK(s["signal"].is_null());
    CHECK(s["timeout"].is_null());
    CHECK(s["startedAt"].get<std::string>().size() == 24);
    CHECK(s["startedAt"].get<std::string>().back() == 'Z');
    CHECK(std::filesystem::exists(s["outputFile"].get<std::string>()));

    // The starter exited long ago; let the command end now.
    std::ofstream(gate).put('x');
    auto waited = shell_wait(env, mark, id);
    CHECK(waited == nlohmann::json({{"exitCode", 3}, {"signal", nullptr}}));

    auto running = team_run(env, mark, {"shell", "list", "--json"});
    CHECK(running.json().empty());
    CHECK_THAT(team_run(env, mark, {"shell", "list"}).out, !Catch::Contains(id));
    auto all = team_run(env, mark, {"shell", "list", "--all", "--json"}).json();
    REQUIRE(all.size() == 1);
    CHECK(all[0]["status"] == "completed");
    CHECK(all[0]["exitCode"] == 3);
    CHECK(all[0]["signal"].is_null());
    CHECK(all[0]["endedAt"].is_string());
    CHECK_THAT(team_run(env, mark, {"shell", "list", "--all"}).out, Catch::Contains("completed"));
    auto status = shell_status(env, mark, id);
    CHECK(status["status"] == "completed");
    CHECK(status["exitCode"] == 3);
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("shell kill of a command that obeys SIGTERM", "[shells]") {
    TeamEnv env;
    Marker mark;
    auto id = start_shell(env, mark, {"sleep", "1000"});
    auto t0 = Steady::now();
    auto r = shell_kill(env, mark, id);
    CHECK(seconds_since(t0) < team::test::slack(2.0));
    INFO("stdout: " << r.out << " stderr: " << r.err);
    CHECK(r.exit_code == 0);
    auto doc = r.json();
    CHECK(doc["success"] == true);
    CHECK(doc["shell_id"] == id);
    CHECK(doc["signal_sent"] == "SIGTERM");
    CHECK(doc["force_killed"] == false);
    CHECK(doc["exit_code"].is_null());
    CHECK(doc["exitStatus"] == nlohmann::json({{"exitCode", nullptr}, {"signal", "SIGTERM"}}));
    CHECK(doc["error"].is_null());
    auto status = shell_status(env, mark, id);
    CHECK(status["status"] == "killed");
    CHECK(status["signal"] == "SIGTERM");
    CHECK(status["exitCode"].is_null());

    // Activity of a shell outside any team: `team activity --all`.
    auto activity = team_run(env, mark, {"activity", "--all", "--json"});
    INFO("activity: " << activity.out << activity.err);
    REQUIRE(activity.exit_code == 0);
    auto entries = activity.json();
    auto it = std::find_if(entries.begin(), entries.end(), [&](const nlohmann::json& e) {
        return e["type"] == "execution_cancelled";
    });
    REQUIRE(it != entries.end());
    CHECK((*it)["actor"] == "user");
    CHECK((*it)["details"]["shellId"] == id);
    CHECK((*it)["details"]["signal"] == "SIGTERM");
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("shell kill in a team writes execution_cancelled with the caller", "[shells]") {
    TeamEnv env;
    Marker mark;
    REQUIRE(team_run(env, mark, {"create", "web"}).exit_code == 0);
    auto id = start_shell(env, mark, {"sleep", "1000"}, {"--team", "web"});
    auto r = shell_kill(env, mark, id);
    CHECK(r.exit_code == 0);
    CHECK(r.json()["success"] == true);
    auto activity = team_run(env, mark, {"activity", "--team", "web", "--json"});
    REQUIRE(activity.exit_code == 0);
    auto entries = activity.json();
    std::vector<std::string> types;
    for (const auto& e : entries) types.push_back(e["type"].get<std::string>());
    CHECK(std::count(types.begin(), types.end(), "shell_started") == 1);
    auto it = std::find_if(entries.begin(), entries.end(), [&](const nlohmann::json& e) {
        return e["type"] == "execution_cancelled";
    });
    REQUIRE(it != entries.end());
    CHECK((*it)["actor"] == "leader@web");
    CHECK((*it)["details"]["shellId"] == id);
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("shell kill escalates to SIGKILL on a command that ignores SIGTERM",
          "[shells][sanitize]") {
    TeamEnv env;
    Marker mark;
    auto id = start_shell(env, mark, {"sh", "-c", kIgnoreTerm});
    REQUIRE(output_contains(env, mark, id, "ready"));
    auto t0 = Steady::now();
    auto r = shell_kill(env, mark, id, {"--timeout", "500ms"});
    double took = seconds_since(t0);
    INFO("stdout: " << r.out << " stderr: " << r.err);
    CHECK(took >= 0.45);
    CHECK(took < team::test::slack(2.5));
    CHECK(r.exit_code == 0);
    auto doc = r.json();
    CHECK(doc["success"] == true);
    CHECK(doc["signal_sent"] == "SIGTERM");
    CHECK(doc["force_killed"] == true);
    CHECK(doc["exitStatus"] == nlohmann::json({{"exitCode", nullptr}, {"signal", "SIGKILL"}}));
    CHECK(doc["error"].is_null());
    CHECK(shell_status(env, mark, id)["status"] == "killed");
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("shell kill --no-force leaves a TERM-ignoring command running and says so", "[shells]") {
    TeamEnv env;
    Marker mark;
    auto id = start_shell(env, mark, {"sh", "-c", kIgnoreTerm});
    REQUIRE(output_contains(env, mark, id, "ready"));
    auto r = shell_kill(env, mark, id, {"--timeout", "300ms", "--no-force"});
    INFO("stdout: " << r.out << " stderr: " << r.err);
    CHECK(r.exit_code == 1);
    auto doc = r.json();
    CHECK(doc["success"] == false);
    CHECK(doc["signal_sent"] == "SIGTERM");
    CHECK(doc["force_killed"] == false);
    CHECK(doc["exitStatus"].is_null());
    REQUIRE(doc["error"].is_string());
    CHECK_THAT(doc["error"].get<std::string>(), Catch::Contains("still running"));
    CHECK_THAT(doc["error"].get<std::string>(), Catch::Contains("not forced"));
    // Still alive, still running: the kill has returned, and nothing it sent was a SIGKILL.
    auto left = mark.alive();
    CHECK(left.size() >= 2);  // the supervisor and the command
    for (pid_t p : left) CHECK(team::test::not_killed(p));
    CHECK(shell_status(env, mark, id)["status"] == "running");
    // A normal kill ends it.
    auto again = shell_kill(env, mark, id, {"--timeout", "300ms"});
    CHECK(again.exit_code == 0);
    auto doc2 = again.json();
    CHECK(doc2["success"] == true);
    CHECK(doc2["force_killed"] == true);
    CHECK(doc2["exitStatus"]["signal"] == "SIGKILL");
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("shell kill of a stopped process sends SIGCONT with SIGTERM", "[shells][sanitize]") {
    TeamEnv env;
    Marker mark;
    auto id = start_shell(env, mark, {"sleep", "1000"});
    auto pid = static_cast<pid_t>(shell_status(env, mark, id)["pid"].get<int>());
    REQUIRE(::kill(pid, SIGSTOP) == 0);
    REQUIRE(eventually([&] {
        auto p = team::proc::read_process(pid);
        return p && p->state == 'T';
    }));
    auto t0 = Steady::now();
    auto r = shell_kill(env, mark, id, {"--signal", "SIGTERM", "--timeout", "3s"});
    CHECK(seconds_since(t0) < team::test::slack(2.0));
    INFO("stdout: " << r.out << " stderr: " << r.err);
    CHECK(r.exit_code == 0);
    auto doc = r.json();
    CHECK(doc["success"] == true);
    CHECK(doc["force_killed"] == false);
    CHECK(doc["exitStatus"] == nlohmann::json({{"exitCode", nullptr}, {"signal", "SIGTERM"}}));
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("shell kill is not swallowed by a shell wrapper", "[shells]") {
    TeamEnv env;
    Marker mark;
    auto id = start_shell(env, mark, {"sh", "-c", "sleep 1000; :"});
    REQUIRE(eventually([&] { return mark.alive().size() >= 3; }));  // supervisor, sh, sleep
    auto r = shell_kill(env, mark, id, {"--timeout", "1s"});
    CHECK(r.exit_code == 0);
    CHECK(r.json()["success"] == true);
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("shell kill reaches setsid children and double-forked daemons", "[shells][sanitize]") {
    TeamEnv env;
    Marker mark;
    auto id =
        start_shell(env, mark, {"sh", "-c", "setsid sleep 1000 & (sleep 1001 &); sleep 1002"});
    // supervisor, sh, and the three sleeps
    REQUIRE(eventually([&] { return mark.alive().size() >= 5; }));
    auto r = shell_kill(env, mark, id, {"--timeout", "1s"});
    INFO("stdout: " << r.out << " stderr: " << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.json()["success"] == true);
    CHECK(mark.none_alive_within(2000));
    CHECK(shell_status(env, mark, id)["status"] == "killed");
}

TEST_CASE("a command that exits by itself while being killed is reported as it ended",
          "[shells][sanitize]") {
    TeamEnv env;
    Marker mark;
    auto id =
        start_shell(env, mark, {"sh", "-c", "trap 'exit 7' TERM; echo ready; sleep 1000 & wait"});
    REQUIRE(output_contains(env, mark, id, "ready"));
    auto r = shell_kill(env, mark, id, {"--timeout", "2s"});
    INFO("stdout: " << r.out << " stderr: " << r.err);
    CHECK(r.exit_code == 0);
    auto doc = r.json();
    CHECK(doc["success"] == true);
    CHECK(doc["force_killed"] == false);
    CHECK(doc["exit_code"] == 7);
    CHECK(doc["exitStatus"] == nlohmann::json({{"exitCode", 7}, {"signal", nullptr}}));
    CHECK(doc["error"].is_null());
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("shell kill twice, after completion, and of unknown ids", "[shells][pg]") {
    TeamEnv env;
    Marker mark;
    auto id = start_shell(env, mark, {"sleep", "1000"});
    REQUIRE(shell_kill(env, mark, id).exit_code == 0);
    auto second = shell_kill(env, mark, id);
    CHECK(second.exit_code == 0);
    auto doc = second.json();
    CHECK(doc["success"] == true);
    CHECK(doc["signal_sent"] == "none");
    CHECK(doc["error"] == "Shell already killed");
    CHECK(doc["exitStatus"]["signal"] == "SIGTERM");

    auto done = start_shell(env, mark, {"true"});
    shell_wait(env, mark, done);
    auto late = shell_kill(env, mark, done);
    CHECK(late.exit_code == 0);
    auto doc2 = late.json();
    CHECK(doc2["success"] == true);
    CHECK(doc2["signal_sent"] == "none");
    CHECK(doc2["error"] == "Shell already completed");
    CHECK(doc2["exitStatus"] == nlohmann::json({{"exitCode", 0}, {"signal", nullptr}}));

    for (std::string bad : {"bg-000000", "x;rm"}) {
        auto r = shell_kill(env, mark, bad);
        INFO(bad << " stdout: " << r.out << " stderr: " << r.err);
        CHECK(r.exit_code == 3);
        auto d = r.json();
        CHECK(d["success"] == false);
        CHECK(d["shell_id"] == bad);
        CHECK(d["signal_sent"] == "none");
        CHECK(d["force_killed"] == false);
        CHECK(d.contains("exit_code"));
        CHECK(d.contains("exitStatus"));
        CHECK(d["error"] == "Shell not found: " + bad);
    }
    // Human mode: the error on stderr.
    auto human = team_run(env, mark, {"shell", "kill", "bg-000000"});
    CHECK(human.exit_code == 3);
    CHECK_THAT(human.err, Catch::Contains("Shell not found: bg-000000"));
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("shell kill never signals a process that reused a recorded pid", "[shells][sanitize]") {
    TeamEnv env;
    Marker mark;
    auto id = start_shell(env, mark, {"sleep", "1000"});
    auto pids = db_pids(env, id);
    REQUIRE(pids.pid > 0);
    REQUIRE(pids.supervisor_pid > 0);
    // The supervisor and the command die without anyone recording it.
    REQUIRE(::kill(static_cast<pid_t>(pids.supervisor_pid), SIGKILL) == 0);
    ::kill(static_cast<pid_t>(pids.pid), SIGKILL);  // may already be gone (PR_SET_PDEATHSIG)
    REQUIRE(gone_within(static_cast<pid_t>(pids.supervisor_pid), 2000));
    REQUIRE(gone_within(static_cast<pid_t>(pids.pid), 2000));

    // An unrelated process of ours now "has" the pids.
    Child other = unrelated_process(mark, pids);
    REQUIRE(eventually([&] { return mark.alive().size() == 2; }));
    auto others = mark.alive();
    {
        SQLite::Database db((env.home() / "team.db").string(), SQLite::OPEN_READWRITE);
        db.setBusyTimeout(5000);
        SQLite::Statement up(db, "UPDATE shells SET pid = ?, supervisor_pid = ? WHERE id = ?");
        up.bind(1, static_cast<std::int64_t>(other.pid()));
        up.bind(2, static_cast<std::int64_t>(other.pid()));
        up.bind(3, id);
        REQUIRE(up.exec() == 1);  // the start times stay those of the old processes
    }
    auto r = shell_kill(env, mark, id, {"--timeout", "300ms"});
    INFO("stdout: " << r.out << " stderr: " << r.err);
    CHECK(r.exit_code == 0);
    // The kill has returned: a signal it sent to the strangers would be pending or ending them.
    for (pid_t p : others) CHECK(team::test::not_killed(p));
    auto status = shell_status(env, mark, id);
    CHECK(status["status"] == "killed");
    for (pid_t p : others) CHECK(alive(p));
    ::kill(other.pid(), SIGKILL);
    for (pid_t p : others) ::kill(p, SIGKILL);
    other.wait();
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("shell kill never signals a reused command pid while the supervisor lives", "[shells]") {
    TeamEnv env;
    Marker mark;
    auto id = start_shell(env, mark, {"sleep", "1000"});
    Child other = unrelated_process(mark, db_pids(env, id));
    REQUIRE(eventually([&] { return mark.alive().size() == 4; }));  // + supervisor, command
    {
        SQLite::Database db((env.home() / "team.db").string(), SQLite::OPEN_READWRITE);
        db.setBusyTimeout(5000);
        SQLite::Statement up(db, "UPDATE shells SET pid = ? WHERE id = ?");
        up.bind(1, static_cast<std::int64_t>(other.pid()));
        up.bind(2, id);
        REQUIRE(up.exec() == 1);
    }
    auto r = shell_kill(env, mark, id, {"--timeout", "300ms"});
    INFO("stdout: " << r.out << " stderr: " << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.json()["success"] == true);
    CHECK(team::test::not_killed(other.pid()));
    CHECK(eventually([&] { return mark.alive().size() == 2; }));  // ours: sh and its sleep
    ::kill(other.pid(), SIGKILL);
    for (pid_t p : mark.alive()) ::kill(p, SIGKILL);
    other.wait();
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("a shell whose supervisor was SIGKILLed is recorded killed and cleaned up",
          "[shells][sanitize]") {
    TeamEnv env;
    Marker mark;
    auto id = start_shell(env, mark, {"sh", "-c", "setsid sleep 1000 & sleep 1001"});
    REQUIRE(eventually([&] { return mark.alive().size() >= 4; }));
    auto pids = db_pids(env, id);
    REQUIRE(::kill(static_cast<pid_t>(pids.supervisor_pid), SIGKILL) == 0);
    REQUIRE(gone_within(static_cast<pid_t>(pids.supervisor_pid), 2000));
    auto status = shell_status(env, mark, id);
    CHECK(status["status"] == "killed");
    CHECK(status["signal"] == "SIGKILL");
    CHECK(status["exitCode"].is_null());
    CHECK(status["error"].is_string());
    CHECK(status["endedAt"].is_string());
    CHECK(mark.none_alive_within(2000));
    auto waited = shell_wait(env, mark, id);
    CHECK(waited == nlohmann::json({{"exitCode", nullptr}, {"signal", "SIGKILL"}}));
}

TEST_CASE("shell output is readable while running and after the end", "[shells][sanitize]") {
    TeamEnv env;
    Marker mark;
    auto id = start_shell(env, mark, {"sh", "-c", "echo first; echo err >&2; sleep 1000"});
    REQUIRE(output_contains(env, mark, id, "err"));
    auto doc = shell_output(env, mark, id);
    CHECK(doc["output"] == "first\nerr\n");
    CHECK(doc["truncated"] == false);
    CHECK(doc["exitStatus"].is_null());
    CHECK(shell_status(env, mark, id)["status"] == "running");
    auto raw = team_run(env, mark, {"shell", "output", id});
    CHECK(raw.exit_code == 0);
    CHECK(raw.out == "first\nerr\n");
    REQUIRE(shell_kill(env, mark, id).exit_code == 0);
    auto after = shell_output(env, mark, id);
    CHECK(after["output"] == "first\nerr\n");
    CHECK(after["exitStatus"] == nlohmann::json({{"exitCode", nullptr}, {"signal", "SIGTERM"}}));
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("shell output --limit keeps the end and never cuts a UTF-8 character", "[shells]") {
    TeamEnv env;
    Marker mark;
    std::string text;
    for (int i = 0; i < 40; ++i) text += "é";                 // 2 bytes
    for (int i = 0; i < 20; ++i) text += "\xE2\x82\xAC";      // € 3 bytes
    for (int i = 0; i < 20; ++i) text += "\xF0\x9F\x98\x80";  // 😀 4 bytes
    auto id = start_shell(env, mark, {"sh", "-c", "printf '%s' \"$1\"", "sh", text});
    shell_wait(env, mark, id);
    auto full = shell_output(env, mark, id);
    REQUIRE(full["output"] == text);
    CHECK(full["truncated"] == false);
    for (int limit : {1, 2, 3, 5, 7, 9, 11, 13, 51, 99, 141, 199, 201}) {
        auto doc = shell_output(env, mark, id, {"--limit", std::to_string(limit)});
        auto out = doc["output"].get<std::string>();
        INFO("limit " << limit << " -> " << out.size() << " bytes");
        CHECK(out.size() <= static_cast<size_t>(limit));
        CHECK(out.size() + 3 >= static_cast<size_t>(limit));  // at most a partial char dropped
        CHECK(valid_utf8(out));
        CHECK(ends_with(text, out));
        CHECK(doc["truncated"] == true);
        CHECK(doc["exitStatus"] == nlohmann::json({{"exitCode", 0}, {"signal", nullptr}}));
    }
    auto whole = shell_output(env, mark, id, {"--limit", std::to_string(text.size())});
    CHECK(whole["output"] == text);
    CHECK(whole["truncated"] == false);
    auto more = shell_output(env, mark, id, {"--limit", "100000"});
    CHECK(more["output"] == text);
    CHECK(more["truncated"] == false);
    CHECK(team_run(env, mark, {"shell", "output", id, "--limit", "0"}).exit_code == 2);
    CHECK(team_run(env, mark, {"shell", "output", "bg-000000"}).exit_code == 3);
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("binary shell output does not break the JSON", "[shells]") {
    TeamEnv env;
    Marker mark;
    std::string bytes;
    for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
    auto file = env.dir() / "bytes.bin";
    std::ofstream(file, std::ios::binary) << bytes;
    auto id = start_shell(env, mark, {"cat", file.string()});
    shell_wait(env, mark, id);
    auto r = team_run(env, mark, {"shell", "output", id, "--json"});
    CHECK(r.exit_code == 0);
    auto doc = r.json();  // parses
    CHECK(doc["output"].is_string());
    CHECK(doc["truncated"] == false);
    auto limited = team_run(env, mark, {"shell", "output", id, "--json", "--limit", "7"});
    CHECK(limited.exit_code == 0);
    CHECK(limited.json()["output"].is_string());
    // Human mode passes the bytes through as they are.
    auto raw = team_run(env, mark, {"shell", "output", id});
    CHECK(raw.exit_code == 0);
    CHECK(raw.out == bytes);
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("shell start --output-limit keeps only the end", "[shells]") {
    TeamEnv env;
    Marker mark;
    // 1000 lines of 100 bytes: 100 KB, the last line ends in 999.
    auto id = start_shell(
        env, mark,
        {"sh", "-c", "i=0; while [ $i -lt 1000 ]; do printf '%099d\\n' $i; i=$((i+1)); done"},
        {"--output-limit", "1000"});
    shell_wait(env, mark, id);
    auto doc = shell_output(env, mark, id);
    auto out = doc["output"].get<std::string>();
    INFO("kept " << out.size() << " bytes");
    CHECK(doc["truncated"] == true);
    CHECK(ends_with(out, "0999\n"));
    CHECK(out.size() >= 1000);
    // The file on disk stays small (see the next test for what `output` returns).
    CHECK(std::filesystem::file_size(
              shell_status(env, mark, id)["outputFile"].get<std::string>()) <= 2000);
    CHECK(team_run(env, mark, {"shell", "start", "--output-limit", "0", "--", "true"}).exit_code ==
          2);
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("shell output never returns more than --output-limit bytes", "[shells]") {
    TeamEnv env;
    Marker mark;
    // 1500 bytes with a limit of 1000: "keep only the last BYTES of output" (its --help).
    auto id = start_shell(env, mark, {"sh", "-c", "head -c 1495 /dev/zero | tr '\\0' x; echo LAST"},
                          {"--output-limit", "1000"});
    shell_wait(env, mark, id);
    auto doc = shell_output(env, mark, id);
    auto out = doc["output"].get<std::string>();
    INFO("kept " << out.size() << " bytes, truncated " << doc["truncated"]);
    CHECK(ends_with(out, "xxLAST\n"));
    CHECK(out.size() == 1000);
    CHECK(doc["truncated"] == true);
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("shell wait returns promptly, times out with 124, reports signals", "[shells][pg]") {
    TeamEnv env;
    Marker mark;
    auto quick = start_shell(env, mark, {"sleep", "0.3"});
    auto t0 = Steady::now();
    auto waited = shell_wait(env, mark, quick);
    CHECK(seconds_since(t0) < team::test::slack(2.0));
    CHECK(waited == nlohmann::json({{"exitCode", 0}, {"signal", nullptr}}));

    auto slow = start_shell(env, mark, {"sleep", "1000"});
    t0 = Steady::now();
    auto r = team_run(env, mark, {"shell", "wait", slow, "--timeout", "200ms", "--json"});
    double took = seconds_since(t0);
    CHECK(took >= 0.19);
    CHECK(took < team::test::slack(2.0));
    CHECK(r.exit_code == 124);
    auto doc = r.json();
    CHECK(doc["success"] == false);
    CHECK(doc["code"] == "timeout");
    CHECK(doc["error"].is_string());
    CHECK(team_run(env, mark, {"shell", "wait", slow, "--timeout", "100ms"}).exit_code == 124);

    // A kill by SIGKILL is a signal, never exit code 137 or 9.
    auto k = shell_kill(env, mark, slow, {"--signal", "SIGKILL"});
    CHECK(k.exit_code == 0);
    CHECK(k.json()["exit_code"].is_null());
    auto killed = shell_wait(env, mark, slow);
    CHECK(killed == nlohmann::json({{"exitCode", nullptr}, {"signal", "SIGKILL"}}));
    auto status = shell_status(env, mark, slow);
    CHECK(status["exitCode"].is_null());
    CHECK(status["signal"] == "SIGKILL");

    // A command that kills itself with a signal, too.
    auto self = start_shell(env, mark, {"sh", "-c", "kill -9 $$"});
    CHECK(shell_wait(env, mark, self) ==
          nlohmann::json({{"exitCode", nullptr}, {"signal", "SIGKILL"}}));
    CHECK(team_run(env, mark, {"shell", "wait", "bg-000000"}).exit_code == 3);
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("shell start --timeout ends the command as timed_out", "[shells][sanitize]") {
    TeamEnv env;
    Marker mark;
    auto id = start_shell(env, mark, {"sleep", "1000"}, {"--timeout", "300ms"});
    auto t0 = Steady::now();
    auto waited = shell_wait(env, mark, id);
    CHECK(seconds_since(t0) < team::test::slack(2.0));
    CHECK(waited == nlohmann::json({{"exitCode", nullptr}, {"signal", "SIGTERM"}}));
    auto status = shell_status(env, mark, id);
    CHECK(status["status"] == "timed_out");
    CHECK(status["timeout"] == "300ms");
    CHECK(status["signal"] == "SIGTERM");
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("shell commands refuse bad input and change nothing", "[shells]") {
    TeamEnv env;
    Marker mark;
    auto id = start_shell(env, mark, {"sleep", "1000"});
    auto recorded = [&] {
        return team_run(env, mark, {"shell", "list", "--all", "--json"}).json().size();
    };
    REQUIRE(recorded() == 1);

    for (std::string sig : {"SIGFOO", "SIGSTOP", "SIGCONT", "NOPE", ""}) {
        auto r = team_run(env, mark, {"shell", "kill", id, "--signal", sig, "--json"});
        INFO("--signal '" << sig << "': " << r.out << r.err);
        CHECK(r.exit_code == 2);
        CHECK(r.json()["success"] == false);
    }
    for (std::string dur : {"0", "-1s", "abc", "0ms", "5x"}) {
        INFO("--timeout '" << dur << "'");
        CHECK(team_run(env, mark, {"shell", "kill", id, "--timeout=" + dur}).exit_code == 2);
        CHECK(team_run(env, mark, {"shell", "wait", id, "--timeout=" + dur}).exit_code == 2);
        CHECK(team_run(env, mark, {"shell", "start", "--timeout=" + dur, "--", "true"}).exit_code ==
              2);
    }
    CHECK(team_run(env, mark, {"shell", "start", "--timeout", "-1s", "--", "true"}).exit_code == 2);
    CHECK(team_run(env, mark, {"shell", "start", "--"}).exit_code == 2);
    CHECK(team_run(env, mark, {"shell", "start"}).exit_code == 2);
    CHECK(team_run(env, mark, {"shell", "start", "--env", "NOEQUALS", "--", "true"}).exit_code ==
          2);
    CHECK(team_run(env, mark, {"shell", "start", "--env", "=v", "--", "true"}).exit_code == 2);
    auto nodir = team_run(env, mark,
                          {"shell", "start", "--cwd", (env.dir() / "nope").string(), "--", "true"});
    CHECK(nodir.exit_code == 2);
    CHECK_THAT(nodir.err, Catch::Contains("nope"));
    // Still running, nothing else recorded.
    CHECK(shell_status(env, mark, id)["status"] == "running");
    CHECK(recorded() == 1);
    REQUIRE(shell_kill(env, mark, id).exit_code == 0);
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("shell start of what cannot run fails with a clear error and a failed record",
          "[shells][sanitize]") {
    TeamEnv env;
    Marker mark;
    auto file = env.dir() / "not-executable";
    std::ofstream(file) << "#!/bin/sh\necho hi\n";
    ::chmod(file.c_str(), 0644);
    auto r = team_run(env, mark, {"shell", "start", "--json", "--", file.string()});
    INFO("stdout: " << r.out << " stderr: " << r.err);
    CHECK(r.exit_code == 1);
    auto doc = r.json();
    CHECK(doc["success"] == false);
    CHECK_THAT(doc["error"].get<std::string>(), Catch::Contains("not an executable"));
    auto human = team_run(env, mark, {"shell", "start", "--", file.string()});
    CHECK(human.exit_code == 1);
    CHECK_THAT(human.err, Catch::Contains("team: error:"));
    CHECK_THAT(human.err, Catch::Contains("not an executable"));

    auto missing = team_run(env, mark, {"shell", "start", "--json", "--", "no-such-command-4711"});
    CHECK(missing.exit_code == 1);
    CHECK_THAT(missing.json()["error"].get<std::string>(), Catch::Contains("not found"));

    auto all = team_run(env, mark, {"shell", "list", "--all", "--json"}).json();
    REQUIRE(all.size() == 3);
    for (const auto& s : all) {
        CHECK(s["status"] == "failed");
        CHECK(s["error"].is_string());
        CHECK(s["pid"].is_null());
    }
    CHECK(team_run(env, mark, {"shell", "list", "--json"}).json().empty());
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("shell start passes hostile arguments byte for byte and runs nothing", "[shells]") {
    TeamEnv env;
    Marker mark;
    auto dir = env.dir();
    // Stand-ins for '; rm -rf ~': the same shapes, but harmless if they ever ran.
    std::vector<std::string> hostile{
        "; touch " + (dir / "pwned1").string(),
        "$(touch " + (dir / "pwned2").string() + ")",
        "`touch " + (dir / "pwned3").string() + "`",
        "a'b\"c\\d",
        "line1\nline2",
        "",
        " spaced  out ",
        "ünïcødé 😀",
        "--json",
        "--help",
        "--home",
        "/nowhere",
        "-t",
        "*",
    };
    std::vector<std::string> cmd{"sh", "-c", "printf '[%s]\\n' \"$@\"", "sh"};
    cmd.insert(cmd.end(), hostile.begin(), hostile.end());
    auto id = start_shell(env, mark, cmd, {"--cwd", dir.string()});
    shell_wait(env, mark, id);
    std::string expected;
    for (const auto& a : hostile) expected += "[" + a + "]\n";
    CHECK(shell_output(env, mark, id)["output"] == expected);
    auto status = shell_status(env, mark, id);
    CHECK(status["command"] == nlohmann::json(cmd));
    CHECK(status["cwd"] == std::filesystem::canonical(dir).string());
    for (const char* f : {"pwned1", "pwned2", "pwned3"})
        CHECK_FALSE(std::filesystem::exists(dir / f));
    // The human list shows it without running anything either.
    CHECK(team_run(env, mark, {"shell", "list", "--all"}).exit_code == 0);
    for (const char* f : {"pwned1", "pwned2", "pwned3"})
        CHECK_FALSE(std::filesystem::exists(dir / f));
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("shell start passes arguments in brackets unchanged", "[shells]") {
    TeamEnv env;
    Marker mark;
    // e.g. `jq '[.[] | .x]'` or a JSON argument: recorded and passed as given, one argument each.
    std::vector<std::string> args{"[a,b]", "[x]", "[]", "[1, 2]", "[\"a\",\"b\"]", "[.[] | .x]"};
    std::vector<std::string> cmd{"printf", "<%s>\\n"};
    cmd.insert(cmd.end(), args.begin(), args.end());
    auto id = start_shell(env, mark, cmd);
    shell_wait(env, mark, id);
    std::string expected;
    for (const auto& a : args) expected += "<" + a + ">\n";
    CHECK(shell_status(env, mark, id)["command"] == nlohmann::json(cmd));
    CHECK(shell_output(env, mark, id)["output"] == expected);
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("shell start --env and --cwd reach the command", "[shells]") {
    TeamEnv env;
    Marker mark;
    auto id = start_shell(env, mark, {"sh", "-c", "echo \"$FOO|$(pwd)|$TEAM_SHELL_ID\""},
                          {"--env", "FOO=a=b c", "--cwd", env.dir().string()});
    shell_wait(env, mark, id);
    CHECK(shell_output(env, mark, id)["output"] ==
          "a=b c|" + std::filesystem::canonical(env.dir()).string() + "|" + id + "\n");
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("shell release kills, deletes the output and forgets, and gc releases finished ones",
          "[shells]") {
    TeamEnv env;
    Marker mark;
    auto id = start_shell(env, mark, {"sh", "-c", "echo hi; sleep 1000"});
    REQUIRE(output_contains(env, mark, id, "hi"));
    auto file = shell_status(env, mark, id)["outputFile"].get<std::string>();
    REQUIRE(std::filesystem::exists(file));
    auto r = team_run(env, mark, {"shell", "release", id, "--json"});
    INFO("stdout: " << r.out << " stderr: " << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.json()["success"] == true);
    CHECK(mark.none_alive_within(2000));
    CHECK_FALSE(std::filesystem::exists(file));
    CHECK(team_run(env, mark, {"shell", "status", id}).exit_code == 3);
    CHECK(team_run(env, mark, {"shell", "output", id}).exit_code == 3);
    CHECK(team_run(env, mark, {"shell", "release", id}).exit_code == 3);
    CHECK(team_run(env, mark, {"shell", "list", "--all", "--json"}).json().empty());

    auto done = start_shell(env, mark, {"true"});
    shell_wait(env, mark, done);
    auto done_file = shell_status(env, mark, done)["outputFile"].get<std::string>();
    auto running = start_shell(env, mark, {"sleep", "1000"});
    std::this_thread::sleep_for(Ms(20));
    // Not old enough yet with the default of 1h.
    auto kept = team_run(env, mark, {"shell", "gc", "--json"});
    CHECK(kept.exit_code == 0);
    CHECK(kept.json()["released"].empty());
    auto gc = team_run(env, mark, {"shell", "gc", "--older-than", "1ms", "--json"});
    CHECK(gc.exit_code == 0);
    CHECK(gc.json()["released"] == nlohmann::json::array({done}));
    CHECK(team_run(env, mark, {"shell", "status", done}).exit_code == 3);
    CHECK_FALSE(std::filesystem::exists(done_file));
    CHECK(shell_status(env, mark, running)["status"] == "running");
    CHECK(team_run(env, mark, {"shell", "gc", "--older-than", "0"}).exit_code == 2);
    REQUIRE(shell_kill(env, mark, running).exit_code == 0);
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("shell start --agent needs a team and a member", "[shells]") {
    TeamEnv env;
    Marker mark;
    CHECK(team_run(env, mark, {"shell", "start", "--agent", "bob", "--", "true"}).exit_code == 2);
    REQUIRE(team_run(env, mark, {"create", "web"}).exit_code == 0);
    auto stranger =
        team_run(env, mark, {"shell", "start", "--team", "web", "--agent", "nobody", "--", "true"});
    CHECK(stranger.exit_code == 3);
    CHECK_THAT(stranger.err, Catch::Contains("nobody"));
    CHECK(team_run(env, mark, {"shell", "list", "--all", "--json"}).json().empty());

    auto id = start_shell(env, mark, {"sleep", "1000"}, {"--team", "web", "--agent", "leader"});
    CHECK(shell_status(env, mark, id)["agent"] == "leader@web");
    auto mine =
        team_run(env, mark, {"shell", "list", "--team", "web", "--agent", "leader", "--json"});
    CHECK(mine.exit_code == 0);
    CHECK(mine.json().size() == 1);
    REQUIRE(shell_kill(env, mark, id).exit_code == 0);
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("an empty --timeout is a usage error, not 'no timeout'", "[shells]") {
    TeamEnv env;
    Marker mark;
    auto done = start_shell(env, mark, {"true"});
    shell_wait(env, mark, done);
    // On a finished shell, so that a wait that ignores the bad value cannot block.
    CHECK(team_run(env, mark, {"shell", "wait", done, "--timeout", ""}).exit_code == 2);
    CHECK(team_run(env, mark, {"shell", "kill", done, "--timeout", ""}).exit_code == 2);
    auto start = team_run(env, mark, {"shell", "start", "--timeout", "", "--", "true"});
    INFO("stdout: " << start.out << " stderr: " << start.err);
    CHECK(start.exit_code == 2);
    CHECK(team_run(env, mark, {"shell", "list", "--all", "--json"}).json().size() == 1);
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("shell output --follow streams until the shell ends", "[shells][sanitize]") {
    TeamEnv env;
    Marker mark;
    auto gate = env.dir() / "go";
    auto id = start_shell(
        env, mark,
        {"sh", "-c",
         "echo a; while [ ! -e '" + gate.string() + "' ]; do sleep 0.02; done; echo b; exit 4"});
    auto follower = env.start({"shell", "output", id, "--follow", "--json"}, with_mark(mark));
    REQUIRE(output_contains(env, mark, id, "a"));
    REQUIRE(eventually([&] { return team::test::watching(follower.pid()); }));
    std::ofstream(gate).put('x');
    auto t0 = Steady::now();
    auto r = follower.wait();
    CHECK(seconds_since(t0) < team::test::slack(3.0));
    CHECK(r.exit_code == 0);
    std::istringstream lines(r.out);
    std::string line, output;
    nlohmann::json last;
    while (std::getline(lines, line)) {
        last = nlohmann::json::parse(line);
        if (last.contains("output")) output += last["output"].get<std::string>();
    }
    CHECK(output == "a\nb\n");
    CHECK(last == nlohmann::json({{"exitStatus", {{"exitCode", 4}, {"signal", nullptr}}}}));
    auto human = team_run(env, mark, {"shell", "output", id, "--follow"});
    CHECK(human.exit_code == 0);
    CHECK(human.out == "a\nb\n");
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("shell release in a team logs the kill with the caller, like shell kill", "[shells]") {
    TeamEnv env;
    Marker mark;
    REQUIRE(team_run(env, mark, {"create", "web"}).exit_code == 0);
    auto id = start_shell(env, mark, {"sleep", "1000"}, {"--team", "web"});
    REQUIRE(team_run(env, mark, {"shell", "release", id}).exit_code == 0);
    CHECK(mark.none_alive_within(2000));
    auto entries = team_run(env, mark, {"activity", "--team", "web", "--json"}).json();
    std::map<std::string, std::string> actor_of;
    for (const auto& e : entries) actor_of[e["type"].get<std::string>()] = e["actor"];
    REQUIRE(actor_of.count("execution_cancelled"));
    CHECK(actor_of["shell_started"] == "leader@web");
    CHECK(actor_of["execution_cancelled"] == "leader@web");
    CHECK(actor_of["shell_released"] == "leader@web");
}

TEST_CASE("shell output --follow keeps up past --output-limit", "[shells]") {
    // Once the output is longer than the limit, the follower still gets what comes next.
    TeamEnv env;
    Marker mark;
    auto gate = env.dir() / "go";
    auto id = start_shell(env, mark,
                          {"sh", "-c",
                           "head -c 1500 /dev/zero | tr '\\0' x; while [ ! -e '" + gate.string() +
                               "' ]; do sleep 0.02; done; echo END"},
                          {"--output-limit", "1000"});
    REQUIRE(output_contains(env, mark, id, "xxx"));
    auto follower = env.start({"shell", "output", id, "--follow"}, with_mark(mark));
    REQUIRE(eventually([&] { return team::test::watching(follower.pid()); }));
    std::ofstream(gate).put('x');
    auto r = follower.wait();
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::EndsWith("END\n"));
    CHECK(mark.none_alive_within(2000));
}
