// team run (SPEC 8): a command in the foreground, killed with its whole tree at --timeout. Every
// process a test starts carries the test's marker; every test proves at its end that none of
// them is alive.
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>

#include "tests/support/helpers.hpp"
#include "tests/support/marker.hpp"
#include "tests/support/process.hpp"

using team::test::Marker;
using team::test::RunResult;
using team::test::TeamEnv;
using Steady = std::chrono::steady_clock;

namespace {

RunResult team_run(const TeamEnv& env, const Marker& mark, const std::vector<std::string>& args) {
    return env.run(args, {{mark.key(), mark.value()}});
}

double seconds_since(Steady::time_point t0) {
    return std::chrono::duration<double>(Steady::now() - t0).count();
}

nlohmann::json exit_status(const nlohmann::json& code, const nlohmann::json& signal) {
    return {{"exitCode", code}, {"signal", signal}};
}

}  // namespace

TEST_CASE("run: a command that completes", "[run][sanitize]") {
    TeamEnv env;
    Marker mark;
    auto r = team_run(env, mark, {"run", "--json", "--", "sh", "-c", "echo hello; echo oops >&2"});
    INFO("stdout: " << r.out << " stderr: " << r.err);
    CHECK(r.exit_code == 0);
    auto doc = r.json();
    CHECK(doc["output"] == "hello\noops\n");
    CHECK(doc["exitStatus"] == exit_status(0, nullptr));
    CHECK(doc["timedOut"] == false);
    CHECK(doc["truncated"] == false);
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("run: mirrors the exit code, 128+n for a signal", "[run][sanitize]") {
    TeamEnv env;
    Marker mark;
    auto five = team_run(env, mark, {"run", "--json", "--", "sh", "-c", "exit 5"});
    CHECK(five.exit_code == 5);
    CHECK(five.json()["exitStatus"] == exit_status(5, nullptr));
    CHECK(team_run(env, mark, {"run", "--", "sh", "-c", "exit 5"}).exit_code == 5);

    auto killed = team_run(env, mark, {"run", "--json", "--", "sh", "-c", "kill -9 $$"});
    CHECK(killed.exit_code == 137);
    auto doc = killed.json();
    CHECK(doc["exitStatus"] == exit_status(nullptr, "SIGKILL"));
    CHECK(doc["timedOut"] == false);
    auto termed = team_run(env, mark, {"run", "--", "sh", "-c", "kill -TERM $$"});
    CHECK(termed.exit_code == 143);
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("run: --timeout kills the command and keeps what it printed", "[run][sanitize]") {
    TeamEnv env;
    Marker mark;
    auto t0 = Steady::now();
    auto r = team_run(
        env, mark,
        {"run", "--json", "--timeout", "300ms", "--", "sh", "-c", "echo partial; sleep 1000"});
    double took = seconds_since(t0);
    INFO("stdout: " << r.out << " stderr: " << r.err);
    CHECK(took >= 0.29);
    CHECK(took < team::test::slack(3.0));
    CHECK(r.exit_code == 124);
    auto doc = r.json();
    CHECK(doc["timedOut"] == true);
    CHECK_THAT(doc["output"].get<std::string>(), Catch::Contains("partial"));
    CHECK(doc["exitStatus"]["exitCode"].is_null());
    CHECK(doc["exitStatus"]["signal"] == "SIGTERM");

    // Human mode: the output passes through, the timeout is said on stderr.
    auto human = team_run(
        env, mark, {"run", "--timeout", "200ms", "--", "sh", "-c", "echo partial; sleep 1000"});
    CHECK(human.exit_code == 124);
    CHECK_THAT(human.out, Catch::Contains("partial"));
    CHECK_THAT(human.err, Catch::Contains("timed out"));
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("run: a TERM-ignoring command still ends after --grace", "[run][sanitize]") {
    TeamEnv env;
    Marker mark;
    auto t0 = Steady::now();
    auto r = team_run(env, mark,
                      {"run", "--json", "--timeout", "300ms", "--grace", "200ms", "--", "sh", "-c",
                       "trap '' TERM INT; echo ready; while :; do sleep 0.1; done"});
    double took = seconds_since(t0);
    INFO("stdout: " << r.out << " stderr: " << r.err);
    CHECK(took >= 0.45);
    CHECK(took < team::test::slack(2.5));
    CHECK(r.exit_code == 124);
    auto doc = r.json();
    CHECK(doc["timedOut"] == true);
    CHECK(doc["exitStatus"] == exit_status(nullptr, "SIGKILL"));
    CHECK_THAT(doc["output"].get<std::string>(), Catch::Contains("ready"));
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("run: --signal chooses the signal sent at the timeout", "[run]") {
    TeamEnv env;
    Marker mark;
    auto r = team_run(
        env, mark,
        {"run", "--json", "--timeout", "200ms", "--signal", "SIGINT", "--", "sleep", "1000"});
    CHECK(r.exit_code == 124);
    CHECK(r.json()["exitStatus"] == exit_status(nullptr, "SIGINT"));
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("run: escaped descendants are gone afterwards", "[run][sanitize]") {
    TeamEnv env;
    Marker mark;
    // Killed at the timeout.
    auto timed = team_run(env, mark,
                          {"run", "--json", "--timeout", "300ms", "--", "sh", "-c",
                           "setsid sleep 1000 & (sleep 1001 &); sleep 1002"});
    CHECK(timed.exit_code == 124);
    CHECK(mark.none_alive_within(2000));
    // Left behind by a command that ended by itself.
    auto t0 = Steady::now();
    auto ended = team_run(
        env, mark,
        {"run", "--json", "--", "sh", "-c", "setsid sleep 1000 & (sleep 1001 &); echo done"});
    CHECK(seconds_since(t0) < team::test::slack(3.0));
    CHECK(ended.exit_code == 0);
    CHECK_THAT(ended.json()["output"].get<std::string>(), Catch::Contains("done"));
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("run: human mode passes the output through", "[run]") {
    TeamEnv env;
    Marker mark;
    auto r = team_run(env, mark, {"run", "--", "sh", "-c", "echo visible; printf 'no newline'"});
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("visible\n"));
    CHECK_THAT(r.out, Catch::Contains("no newline"));
    // Arguments arrive as given, nothing is run by a shell of ours.
    auto file = env.dir() / "pwned";
    auto args = team_run(env, mark,
                         {"run", "--", "printf", "<%s>", "$(touch " + file.string() + ")", "a b",
                          "--help", "--home", "/nowhere", "-t", "x"});
    CHECK(args.exit_code == 0);
    CHECK(args.out == "<$(touch " + file.string() + ")><a b><--help><--home></nowhere><-t><x>");
    CHECK_FALSE(std::filesystem::exists(file));
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("run: arguments in brackets arrive unchanged", "[run]") {
    TeamEnv env;
    Marker mark;
    // e.g. `team run -- jq '[.[] | .x]'` or a JSON argument: passed as given, one argument each.
    std::vector<std::string> args{"[a,b]", "[x]", "[]", "[1, 2]", "[\"a\",\"b\"]", "[.[] | .x]"};
    std::vector<std::string> argv{"run", "--", "printf", "<%s>\\n"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = team_run(env, mark, argv);
    std::string expected;
    for (const auto& a : args) expected += "<" + a + ">\n";
    CHECK(r.exit_code == 0);
    CHECK(r.out == expected);
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("run: --output-limit keeps the end", "[run][sanitize]") {
    TeamEnv env;
    Marker mark;
    auto r =
        team_run(env, mark,
                 {"run", "--json", "--output-limit", "10", "--", "printf", "0123456789abcdefghij"});
    CHECK(r.exit_code == 0);
    auto doc = r.json();
    CHECK(doc["output"] == "abcdefghij");
    CHECK(doc["truncated"] == true);
    // Large output, well past twice the limit.
    auto big = team_run(env, mark,
                        {"run", "--json", "--output-limit", "10", "--", "sh", "-c",
                         "head -c 100000 /dev/zero | tr '\\0' x; printf END"});
    CHECK(big.exit_code == 0);
    auto doc2 = big.json();
    CHECK(doc2["output"] == "xxxxxxxEND");
    CHECK(doc2["truncated"] == true);
    // It fits: nothing truncated.
    auto fits = team_run(env, mark,
                         {"run", "--json", "--output-limit", "10", "--", "printf", "0123456789"});
    CHECK(fits.json()["output"] == "0123456789");
    CHECK(fits.json()["truncated"] == false);
    // Never inside a UTF-8 character: 5 x "é" (10 bytes) with a limit of 5 keeps 2 characters.
    auto utf8 =
        team_run(env, mark, {"run", "--json", "--output-limit", "5", "--", "printf", "ééééé"});
    CHECK(utf8.json()["output"] == "éé");
    CHECK(utf8.json()["truncated"] == true);
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("run: bad input", "[run]") {
    TeamEnv env;
    Marker mark;
    for (std::string dur : {"0", "-1s", "abc", "0ms"}) {
        INFO("--timeout " << dur);
        CHECK(team_run(env, mark, {"run", "--timeout=" + dur, "--", "true"}).exit_code == 2);
    }
    CHECK(team_run(env, mark, {"run", "--grace", "abc", "--", "true"}).exit_code == 2);
    auto sig = team_run(env, mark, {"run", "--json", "--signal", "NOPE", "--", "true"});
    CHECK(sig.exit_code == 2);
    CHECK(sig.json()["code"] == "usage");
    CHECK(team_run(env, mark, {"run", "--signal", "SIGSTOP", "--", "true"}).exit_code == 2);
    CHECK(team_run(env, mark, {"run", "--output-limit", "0", "--", "true"}).exit_code == 2);
    CHECK(team_run(env, mark, {"run", "--"}).exit_code == 2);
    CHECK(team_run(env, mark, {"run"}).exit_code == 2);
    auto missing = team_run(env, mark, {"run", "--json", "--", "no-such-command-4711"});
    CHECK(missing.exit_code == 1);
    CHECK_THAT(missing.json()["error"].get<std::string>(), Catch::Contains("not found"));
    auto human = team_run(env, mark, {"run", "--", "no-such-command-4711"});
    CHECK(human.exit_code == 1);
    CHECK_THAT(human.err, Catch::Contains("team: error:"));
    CHECK(mark.none_alive_within(2000));
}

TEST_CASE("run: an empty --timeout is a usage error, not 'no timeout'", "[run]") {
    TeamEnv env;
    Marker mark;
    auto r = team_run(env, mark, {"run", "--timeout", "", "--", "true"});
    INFO("stdout: " << r.out << " stderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(mark.none_alive_within(2000));
}
