// team session exec | start | list | show | close (SPEC 9), run as a user would, on a temporary
// home. Every process a test starts carries the test's marker, and every test that starts
// processes proves at its end that none of them is alive.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "sessions/session_state.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/marker.hpp"
#include "tests/support/probe.hpp"
#include "tests/support/process.hpp"

using team::sessions::bash_quote;
using team::test::Child;
using team::test::eventually;
using team::test::Marker;
using team::test::RunResult;
using team::test::TeamEnv;
using Env = std::map<std::string, std::string>;
namespace fs = std::filesystem;

namespace {

// A home and a marker carried by everything the test starts.
struct Home {
    TeamEnv env;
    Marker mark;

    Env extra(const Env& more = {}) const {
        Env e{{mark.key(), mark.value()}};
        for (const auto& [k, v] : more) e[k] = v;
        return e;
    }
    RunResult run(const std::vector<std::string>& args, const Env& more = {}) const {
        return env.run(args, extra(more));
    }
    // `team session exec NAME --json -- COMMAND`, which must have run (any exit code).
    nlohmann::json exec(const std::string& name, const std::string& command,
                        const Env& more = {}) const {
        // One argument may not be longer than 128 KiB: longer commands go through stdin.
        RunResult r;
        if (command.size() > 64 * 1024) {
            Env e = extra(more);
            e["TEAM_HOME"] = env.home().string();
            r = Child({team::test::team_binary(), "session", "exec", name, "--json", "--", "-"},
                      team::test::clean_env(e), command)
                    .wait();
        } else {
            r = run({"session", "exec", name, "--json", "--", command}, more);
        }
        INFO("exec " << command.substr(0, 200) << "\nstdout: " << r.out.substr(0, 2000)
                     << "\nstderr: " << r.err.substr(0, 2000));
        auto doc = r.json();
        REQUIRE(doc.contains("stdout"));
        return doc;
    }
    // The stdout of a command that must succeed.
    std::string out(const std::string& name, const std::string& command,
                    const Env& more = {}) const {
        auto doc = exec(name, command, more);
        INFO("exec " << command << ": " << doc.dump());
        REQUIRE(doc["exitCode"] == 0);
        return doc["stdout"].get<std::string>();
    }
    // How many commands of the session run now; -1 while it does not exist.
    int running(const std::string& name) const {
        auto r = run({"session", "show", name, "--json"});
        return r.exit_code == 0 ? static_cast<int>(r.json()["running"].size()) : -1;
    }
    nlohmann::json show(const std::string& name) const {
        auto r = run({"session", "show", name, "--json"});
        INFO(r.out << r.err);
        REQUIRE(r.exit_code == 0);
        return r.json();
    }
    std::string start(const std::string& name, const std::string& command) const {
        auto r = run({"session", "start", name, "--json", "--", command});
        INFO(r.out << r.err);
        REQUIRE(r.exit_code == 0);
        return r.json()["shell_id"].get<std::string>();
    }
    std::string shell_output(const std::string& id) const {
        return run({"shell", "output", id}).out;
    }
    ~Home() { CHECK(mark.none_alive_within(3000)); }
};

fs::path make_dir(const fs::path& path) {
    fs::create_directories(path);
    return path;
}

}  // namespace

TEST_CASE(
    "the scenario: cd, export and a function last, and start runs from them, and shell kill "
    "leaves the session alive",
    "[sessions][sanitize]") {
    Home h;
    auto app = make_dir(h.env.dir() / "srv" / "app");
    CHECK(h.exec("app", "cd " + bash_quote(app.string()))["cwd"] == app.string());
    h.out("app", R"(export API_KEY=x; greet() { echo "hi $1"; })");

    auto server = h.start("app", R"(echo "cwd=$PWD key=$API_KEY"; greet server; sleep 1000)");
    auto other = h.start("app", "sleep 1000");
    REQUIRE(
        eventually([&] { return h.shell_output(server).find("hi server") != std::string::npos; }));
    CHECK(h.shell_output(server) == "cwd=" + app.string() + " key=x\nhi server\n");

    auto shown = h.show("app");
    CHECK(shown["running"].size() == 2);
    CHECK(shown["running"][0]["shellId"] == server);

    // Killing one background command leaves the session and its other command alive.
    auto killed = h.run({"shell", "kill", server, "--json"});
    REQUIRE(killed.exit_code == 0);
    CHECK(killed.json()["signal_sent"] == "SIGTERM");
    CHECK(h.run({"shell", "status", other, "--json"}).json()["status"] == "running");
    CHECK(h.out("app", "greet again; pwd; echo $API_KEY") == "hi again\n" + app.string() + "\nx\n");
    CHECK(h.show("app")["running"].size() == 1);

    // The shell records say where they came from.
    auto rec = h.run({"shell", "status", server, "--json"}).json();
    CHECK(rec["session"] == "app");
    CHECK(rec["status"] == "killed");
    CHECK(rec["command"] ==
          nlohmann::json::array(
              {"bash", "-c", R"(echo "cwd=$PWD key=$API_KEY"; greet server; sleep 1000)"}));

    auto closed = h.run({"session", "close", "app", "--json"});
    REQUIRE(closed.exit_code == 0);
    CHECK(closed.json()["shellsKilled"] == nlohmann::json::array({other}));
    CHECK(h.run({"shell", "status", other, "--json"}).json()["status"] == "killed");
    CHECK(h.run({"session", "show", "app"}).exit_code == 3);
    CHECK(h.run({"session", "list", "--json"}).json().empty());
}

TEST_CASE("values with spaces, newlines, quotes, unicode and $ come back byte for byte",
          "[sessions]") {
    Home h;
    const std::vector<std::string> values = {"two words",
                                             "line one\nline two\n",
                                             "it's \"quoted\" `x` \\ back",
                                             "$HOME $(id) ${x} ;|&<>",
                                             "héllo 中文 🎉",
                                             "\t tab and \x01 control",
                                             "",
                                             std::string(100000, 'v'),
                                             "trailing backslash \\",
                                             "-n",
                                             "*",
                                             "a=b=c"};
    int i = 0;
    for (const auto& v : values) {
        DYNAMIC_SECTION("value " << i++) {
            std::string q = bash_quote(v);
            h.out("s", "export EXPORTED=" + q + "; plain=" + q + "; arr=(" + q + " x " + q +
                           "); declare -A map=([" + (v.empty() ? std::string("e") : q) + "]=" + q +
                           "); alias al=" + bash_quote("echo " + q) + "; fn() { printf '%s' " + q +
                           "; }");
            CHECK(h.out("s", R"(printf '%s' "$EXPORTED")") == v);
            CHECK(h.out("s", R"(printf '%s' "$plain")") == v);
            CHECK(h.out("s", R"(printf '%s|' "${arr[@]}")") == v + "|x|" + v + "|");
            CHECK(h.out("s", R"(printf '%s|' "${map[@]}")") == v + "|");
            CHECK(h.out("s", "fn") == v);
            CHECK(h.out("s", "bash -c 'printf %s \"$EXPORTED\"'") == v);  // exported for real
            auto shown = h.show("s");
            if (v.size() < 1000) {
                CHECK(shown["env"]["EXPORTED"] == v);
                CHECK(shown["variables"]["plain"] == v);
            }
        }
    }
}

TEST_CASE("a failing command keeps its cd and what it set", "[sessions]") {
    Home h;
    auto a = make_dir(h.env.dir() / "a");
    auto b = make_dir(h.env.dir() / "b");
    auto c = make_dir(h.env.dir() / "c");
    auto r = h.exec("s", "cd " + bash_quote(a.string()) + "; export K=1; false");
    CHECK(r["exitCode"] == 1);
    CHECK(r["cwd"] == a.string());
    CHECK(r["stateKept"] == true);
    // exit N from the middle, and set -e stopping at a failure.
    r = h.exec("s", "cd " + bash_quote(b.string()) + "; K=2; exit 7; K=3");
    CHECK(r["exitCode"] == 7);
    CHECK(r["cwd"] == b.string());
    r = h.exec("s", "set -e; cd " + bash_quote(c.string()) + "; K=4; false; K=5");
    CHECK(r["exitCode"] == 1);
    CHECK(h.out("s", "pwd; echo $K") == c.string() + "\n4\n");
    // A syntax error is a failure like another: what ran before it stays. (A line is parsed
    // whole before it runs, so K=6 goes on a line of its own, as in any shell.)
    r = h.exec("s", "K=6\nif then fi\nK=7");
    CHECK(r["exitCode"] == 2);
    CHECK(h.out("s", "echo $K") == "6\n");
    // set -e and set -u themselves are kept (they matter), and are undone the same way.
    CHECK(h.exec("s", "echo $UNDEFINED_VAR; echo after")["exitCode"] == 0);
    h.out("s", "set +e; set -u");
    auto unbound = h.exec("s", "echo $UNDEFINED_VAR; echo after");
    CHECK(unbound["exitCode"] != 0);
    CHECK_THAT(unbound["stderr"].get<std::string>(), Catch::Contains("unbound variable"));
    h.out("s", "set +u");
    CHECK(h.out("s", "echo ${UNDEFINED_VAR-none}") == "none\n");
}

TEST_CASE("a killed or timed-out command leaves the state as it was", "[sessions]") {
    Home h;
    auto a = make_dir(h.env.dir() / "a");
    h.out("s", "cd " + bash_quote(a.string()) + "; export K=before");
    auto before = h.show("s");

    SECTION("timed out") {
        auto r = h.run({"session", "exec", "s", "--timeout", "300ms", "--json", "--",
                        "cd /; export K=after; sleep 1000"});
        CHECK(r.exit_code == 124);
        auto doc = r.json();
        CHECK(doc["timedOut"] == true);
        CHECK(doc["stateKept"] == false);
        CHECK(doc["cwd"] == a.string());
    }
    SECTION("killed by a signal from inside") {
        auto r =
            h.run({"session", "exec", "s", "--json", "--", "cd /; export K=after; kill -9 $$"});
        CHECK(r.exit_code == 128 + 9);
        auto doc = r.json();
        CHECK(doc["signal"] == "SIGKILL");
        CHECK(doc["exitCode"].is_null());
        CHECK(doc["stateKept"] == false);
    }
    SECTION("the exec interrupted (SIGTERM to team session exec)") {
        Child exec({team::test::team_binary(), "session", "exec", "s", "--json", "--",
                    "cd /; export K=after; echo started; sleep 1000"},
                   team::test::clean_env(h.extra({{"TEAM_HOME", h.env.home().string()}})));
        REQUIRE(eventually([&] { return h.running("s") == 1; }));
        // The command has got as far as its `sleep`: interrupted while it runs.
        REQUIRE(eventually([&] { return team::test::runs_program(exec.pid(), "sleep"); }));
        ::kill(exec.pid(), SIGTERM);
        auto r = exec.wait();
        CHECK(r.exit_code == 128 + SIGTERM);
        CHECK(r.json()["stateKept"] == false);
    }
    SECTION("a background start never writes back") {
        auto id = h.start("s", "cd /; export K=after");
        CHECK(h.run({"shell", "wait", id, "--json"}).json()["exitCode"] == 0);
    }
    auto after = h.show("s");
    CHECK(after["cwd"] == before["cwd"]);
    CHECK(after["env"] == before["env"]);
    CHECK(h.out("s", "echo $K; pwd") == "before\n" + a.string() + "\n");
}

TEST_CASE(
    "two commands of one session at once: each keeps what it changed, the last to end "
    "wins what both changed",
    "[sessions][sanitize]") {
    Home h;
    auto first = make_dir(h.env.dir() / "first");
    auto second = make_dir(h.env.dir() / "second");
    h.out("s", "export SHARED=start");
    auto env = team::test::clean_env(h.extra({{"TEAM_HOME", h.env.home().string()}}));
    auto go = h.env.dir() / "go";
    // slow starts first and ends last; fast ends while slow still runs.
    Child slow(
        {team::test::team_binary(), "session", "exec", "s", "--json", "--",
         "export SLOW=1 SHARED=slow; slowfn() { :; }; while [ ! -e " + bash_quote(go.string()) +
             " ]; do sleep 0.02; done; cd " + bash_quote(first.string())},
        env);
    REQUIRE(eventually([&] { return h.running("s") == 1; }));
    auto fast = h.exec("s", "export FAST=1 SHARED=fast; fastfn() { :; }; alias fa=true; cd " +
                                bash_quote(second.string()));
    CHECK(fast["cwd"] == second.string());
    std::ofstream(go.string()) << "go";
    auto slow_result = slow.wait();
    INFO(slow_result.out << slow_result.err);
    REQUIRE(slow_result.exit_code == 0);
    CHECK(slow_result.json()["cwd"] == first.string());

    auto shown = h.show("s");
    CHECK(shown["env"]["SLOW"] == "1");
    CHECK(shown["env"]["FAST"] == "1");
    CHECK(shown["env"]["SHARED"] == "slow");  // both changed it: the last to end wins
    CHECK(shown["cwd"] == first.string());    // the same rule
    CHECK(shown["functions"].contains("slowfn"));
    CHECK(shown["functions"].contains("fastfn"));
    CHECK(shown["aliases"]["fa"] == "true");
    CHECK(shown["running"].empty());
}

TEST_CASE("many commands of one session at once lose nothing", "[sessions]") {
    Home h;
    h.out("s", "true");
    auto env = team::test::clean_env(h.extra({{"TEAM_HOME", h.env.home().string()}}));
    std::vector<Child> children;
    constexpr int kCount = 8;
    for (int i = 0; i < kCount; ++i) {
        children.emplace_back(
            std::vector<std::string>{team::test::team_binary(), "session", "exec", "s", "--",
                                     "export V" + std::to_string(i) + "=" + std::to_string(i)},
            env);
    }
    for (auto& c : children) {
        auto r = c.wait();
        INFO(r.err);
        CHECK(r.exit_code == 0);
        CHECK_THAT(r.err, !Catch::Contains("locked"));
    }
    auto shown = h.show("s");
    for (int i = 0; i < kCount; ++i)
        CHECK(shown["env"]["V" + std::to_string(i)] == std::to_string(i));
    CHECK(shown["commands"] == kCount + 1);
}

TEST_CASE("the caller's environment is each command's base, and unset and changes stay",
          "[sessions][pg]") {
    Home h;
    h.out("s", "export MINE=set-in-session; unset FROM_CALLER", {{"FROM_CALLER", "one"}});
    // Another process, another environment: the session's changes apply over it.
    CHECK(h.out("s", "echo ${FROM_CALLER-unset} $MINE $OTHER",
                {{"FROM_CALLER", "two"}, {"OTHER", "other"}}) == "unset set-in-session other\n");
    // What the caller passes and the session never touched is not frozen into it.
    CHECK(h.out("s", "echo ${OTHER-absent}") == "absent\n");
    // Setting it again ends the unset.
    h.out("s", "export FROM_CALLER=back");
    CHECK(h.out("s", "echo $FROM_CALLER", {{"FROM_CALLER", "two"}}) == "back\n");
    // team's identity is the caller's, never the session's.
    h.out("s", "export TEAM_AGENT_ID=forged TEAM_NAME=forged");
    CHECK(h.out("s", "echo ${TEAM_AGENT_ID-none} ${TEAM_NAME-none} $TEAM_SESSION") ==
          "none none s\n");
}

TEST_CASE("options, shopt, aliases and the umask last, and xtrace traces the command only",
          "[sessions]") {
    Home h;
    h.out("s", "set -o pipefail; shopt -s extglob nullglob; alias say='echo said'; umask 027");
    CHECK(h.out("s", "umask") == "0027\n");
    CHECK(h.show("s")["umask"] == "0027");
    CHECK(h.exec("s", "false | true")["exitCode"] == 1);
    CHECK(h.out("s", "x=abc; echo ${x/+(b)/B}; echo none*") == "aBc\n\n");
    CHECK(h.out("s", "say it") == "said it\n");
    h.out("s", "unalias say; set +o pipefail; shopt -u nullglob; set -x");
    auto traced = h.exec("s", "echo hi");
    CHECK(traced["stdout"] == "hi\n");
    CHECK(traced["stderr"] == "+ echo hi\n");
    h.out("s", "set +x");
    CHECK(h.exec("s", "false | true")["exitCode"] == 0);
    CHECK(h.exec("s", "say it")["exitCode"] == 127);
    auto shown = h.show("s");
    CHECK(shown["aliases"].empty());
    CHECK(shown["shopt"] == nlohmann::json::array({"extglob"}));
}

TEST_CASE("session exec: JSON shape, exit codes, separate streams, stdin", "[sessions][sanitize]") {
    Home h;
    auto r = h.run({"session", "exec", "s", "--json", "--", "echo out; echo err >&2; exit 3"});
    CHECK(r.exit_code == 3);
    auto doc = r.json();
    for (const char* key : {"exitCode", "signal", "stdout", "stderr", "cwd"})
        CHECK(doc.contains(key));
    CHECK(doc["exitCode"] == 3);
    CHECK(doc["signal"].is_null());
    CHECK(doc["stdout"] == "out\n");
    CHECK(doc["stderr"] == "err\n");
    CHECK(doc["session"] == "s");

    // Human mode passes the streams through as they are.
    auto human = h.run({"session", "exec", "s", "--", "echo out; echo err >&2"});
    CHECK(human.exit_code == 0);
    CHECK(human.out == "out\n");
    CHECK(human.err == "err\n");

    // Words after -- are joined; a lone - reads the command from stdin.
    CHECK(h.run({"session", "exec", "s", "--", "echo", "a", "b"}).out == "a b\n");
    Child piped({team::test::team_binary(), "session", "exec", "s", "--", "-"},
                team::test::clean_env(h.extra({{"TEAM_HOME", h.env.home().string()}})),
                "X=from-stdin\necho $X\n");
    auto p = piped.wait();
    CHECK(p.exit_code == 0);
    CHECK(p.out == "from-stdin\n");
    CHECK(h.out("s", "echo $X") == "from-stdin\n");

    // A command of 1 MiB runs (through stdin: one argument cannot be that long).
    std::string big = ": '" + std::string((1 << 20) - 20, 'x') + "'\necho big";
    Child bigc({team::test::team_binary(), "session", "exec", "s", "--", "-"},
               team::test::clean_env(h.extra({{"TEAM_HOME", h.env.home().string()}})), big);
    auto b = bigc.wait();
    CHECK(b.exit_code == 0);
    CHECK(b.out == "big\n");
    Child over({team::test::team_binary(), "session", "exec", "s", "--", "-"},
               team::test::clean_env(h.extra({{"TEAM_HOME", h.env.home().string()}})),
               std::string((1 << 20) + 10, 'x'));
    CHECK(over.wait().exit_code == 2);

    // --output-limit keeps the end of each stream.
    auto limited = h.run({"session", "exec", "s", "--json", "--output-limit", "4", "--",
                          "echo 123456789; echo abcdefgh >&2"});
    CHECK(limited.json()["stdout"] == "789\n");
    CHECK(limited.json()["stderr"] == "fgh\n");
    CHECK(limited.json()["truncated"] == true);
}

TEST_CASE(
    "each command has its own process group, and what it leaves in the background ends "
    "with it",
    "[sessions]") {
    Home h;
    // Field 5 of /proc/PID/stat is the process group.
    auto out = h.out("s", "cut -d' ' -f5 /proc/$$/stat; echo $$; cut -d' ' -f5 /proc/$PPID/stat");
    std::istringstream lines(out);
    long pgid = 0, pid = 0, parent_pgid = 0;
    lines >> pgid >> pid >> parent_pgid;
    CHECK(pgid == pid);
    CHECK(parent_pgid != pgid);
    auto pidfile = h.env.dir() / "bg.pid";
    h.out("s", "sleep 1000 & echo $! > " + bash_quote(pidfile.string()));
    std::ifstream in(pidfile);
    pid_t bg = 0;
    in >> bg;
    REQUIRE(bg > 0);
    CHECK_FALSE(team::test::alive(bg));
}

TEST_CASE("an exec whose team process dies leaves nothing behind", "[sessions][sanitize]") {
    Home h;
    auto env = team::test::clean_env(h.extra({{"TEAM_HOME", h.env.home().string()}}));
    auto pidfile = h.env.dir() / "daemon.pid";
    Child exec({team::test::team_binary(), "session", "exec", "s", "--",
                "setsid sleep 1000 & echo $! > " + bash_quote(pidfile.string()) + "; sleep 1000"},
               env);
    REQUIRE(eventually([&] { return fs::exists(pidfile) && fs::file_size(pidfile) > 0; }));
    ::kill(exec.pid(), SIGKILL);
    exec.wait();
    // The next look at the session finds the exec gone and ends what it left.
    REQUIRE(eventually([&] { return h.running("s") == 0; }));
    CHECK(h.mark.none_alive_within(3000));
}

TEST_CASE("session close kills a running exec, which keeps nothing", "[sessions][sanitize]") {
    Home h;
    auto env = team::test::clean_env(h.extra({{"TEAM_HOME", h.env.home().string()}}));
    // Under ASan, LeakSanitizer's check at exit runs a tracer task below the exiting process:
    // below this `team session exec`, exactly what the close sweeps, and a tracer killed leaves
    // the exec spinning in LSan for ever (seen once in CI). No real process has that task.
    if (const char* asan = std::getenv("ASAN_OPTIONS"); asan && *asan) {
        env["ASAN_OPTIONS"] = std::string(asan) + ":detect_leaks=0";
    }
    Child exec({team::test::team_binary(), "session", "exec", "s", "--json", "--",
                "export GONE=1; trap '' TERM; sleep 1000"},
               env);
    REQUIRE(eventually([&] { return h.running("s") == 1; }));
    auto closed = h.run({"session", "close", "s", "--timeout", "300ms", "--json"});
    INFO(closed.out << closed.err);
    REQUIRE(closed.exit_code == 0);
    CHECK(closed.json()["execsKilled"] == 1);
    auto r = exec.wait();
    CHECK(r.json()["signal"].is_string());
    CHECK(r.json()["stateKept"] == false);
    // A command after the close makes a new, empty session.
    CHECK(h.out("s", "echo ${GONE-none}") == "none\n");
}

TEST_CASE("a session whose directory was removed runs in HOME with a warning", "[sessions]") {
    Home h;
    auto gone = make_dir(h.env.dir() / "gone");
    auto home = make_dir(h.env.dir() / "home");
    h.out("s", "cd " + bash_quote(gone.string()));
    fs::remove(gone);
    auto r = h.run({"session", "exec", "s", "--", "pwd"}, {{"HOME", home.string()}});
    CHECK(r.exit_code == 0);
    CHECK(r.out == home.string() + "\n");
    CHECK_THAT(r.err, Catch::Contains("no longer exists"));
    CHECK(h.show("s")["cwd"] == home.string());
}

TEST_CASE("unknown sessions are not found, and bad names and bad input change nothing",
          "[sessions]") {
    Home h;
    h.out("app", "export K=1");
    auto snapshot = [&] {
        return h.run({"session", "show", "app", "--json"}).out +
               h.run({"session", "list", "--json"}).out +
               h.run({"shell", "list", "--all", "--json"}).out;
    };
    auto before = snapshot();

    for (const char* verb : {"show", "close"}) {
        auto r = h.run({"session", verb, "ap"});
        CHECK(r.exit_code == 3);
        CHECK_THAT(r.err, Catch::Contains("did you mean 'app'"));
        auto j = h.run({"session", verb, "nope", "--json"});
        CHECK(j.exit_code == 3);
        CHECK(j.json()["code"] == "not_found");
    }
    const std::vector<std::string> hostile = {"",
                                              "-x",
                                              "a b",
                                              "a;rm -rf /",
                                              "$(id)",
                                              "`id`",
                                              "a\nb",
                                              "名前",
                                              "../x",
                                              "a/b",
                                              "'q'",
                                              "\"q\"",
                                              std::string(65, 'a'),
                                              std::string(100000, 'n'),
                                              "a\xff"};
    for (const auto& name : hostile) {
        INFO("name: " << name.substr(0, 40));
        for (const char* verb : {"exec", "start"}) {
            auto r = h.run({"session", verb, name, "--json", "--", "touch x"});
            CHECK(r.exit_code == 2);
            CHECK(r.json()["success"] == false);
        }
        for (const char* verb : {"show", "close"})
            CHECK(h.run({"session", verb, name}).exit_code == 2);
    }
    for (const std::string dur : {"0", "-1s", "abc", ""}) {
        CHECK(h.run({"session", "exec", "app", "--timeout=" + dur, "--", "touch x"}).exit_code ==
              2);
        CHECK(h.run({"session", "start", "app", "--timeout=" + dur, "--", "touch x"}).exit_code ==
              2);
        CHECK(h.run({"session", "close", "app", "--timeout=" + dur}).exit_code == 2);
    }
    CHECK(h.run({"session", "exec", "app", "--output-limit", "0", "--", "touch x"}).exit_code == 2);
    CHECK(h.run({"session", "exec", "app", "--"}).exit_code == 2);
    CHECK(h.run({"session", "exec", "app"}).exit_code == 2);
    CHECK(h.run({"session", "start", "app"}).exit_code == 2);
    CHECK(h.run({"session", "bogus"}).exit_code == 2);
    CHECK(snapshot() == before);
    CHECK_FALSE(fs::exists(fs::current_path() / "x"));
}

TEST_CASE("the command string is bash's to read: here-documents, trailing operators, exec",
          "[sessions][sanitize]") {
    Home h;
    // An unterminated here-document ends at the end of the command, as with bash -c.
    auto doc = h.exec("s", "K=1\ncat <<EOF\nline");
    CHECK(doc["stdout"] == "line\n");
    CHECK_THAT(doc["stderr"].get<std::string>(), !Catch::Contains("__team"));
    // A trailing && is a syntax error, as with bash -c.
    auto trailing = h.exec("s", "K=2; true &&");
    CHECK(trailing["exitCode"] == 2);
    CHECK_THAT(trailing["stderr"].get<std::string>(), !Catch::Contains("__team"));
    CHECK(h.out("s", "echo $K") == "1\n");
    // A command that replaces the shell keeps nothing, and says so.
    auto replaced = h.exec("s", "K=3; exec true");
    CHECK(replaced["exitCode"] == 0);
    CHECK(replaced["stateKept"] == false);
    CHECK_THAT(replaced["warnings"].dump(), Catch::Contains("replaced the shell"));
    CHECK(h.out("s", "echo $K") == "1\n");
}

TEST_CASE("commands get the caller's umask, not team's own 077", "[sessions]") {
    Home h;
    mode_t mine = ::umask(022);
    char expected[8];
    std::snprintf(expected, sizeof expected, "%04o\n", 022);
    CHECK(h.out("s", "umask") == expected);
    CHECK(h.run({"run", "--", "sh", "-c", "umask"}).out == expected);
    auto id = h.start("s", "umask");
    h.run({"shell", "wait", id});
    CHECK(h.shell_output(id) == expected);
    ::umask(mine);
}

TEST_CASE("a session's bash reads no startup file and takes no options from the caller",
          "[sessions]") {
    Home h;
    auto rc = h.env.dir() / "rc.sh";
    std::ofstream(rc.string()) << "echo sourced\n";
    Env hostile{{"BASH_ENV", rc.string()}, {"ENV", rc.string()}, {"SHELLOPTS", "noglob:xtrace"}};
    auto doc = h.exec("s", "echo /*", hostile);
    CHECK(doc["stdout"] != "/*\n");
    CHECK_THAT(doc["stdout"].get<std::string>(), !Catch::Contains("sourced"));
    CHECK(doc["stderr"] == "");
    auto id =
        h.run({"session", "start", "s", "--json", "--", "echo /*"}, hostile).json()["shell_id"];
    h.run({"shell", "wait", id});
    auto out = h.shell_output(id);
    CHECK(out != "/*\n");
    CHECK_THAT(out, !Catch::Contains("sourced"));
}
