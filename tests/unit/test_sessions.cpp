// Sessions (sessions/sessions.hpp, SPEC 9) in-process over a real store in a temporary home: what
// one exec changes is there for the next, a failing command keeps what it changed, a timed-out
// one keeps nothing, the output kept is the end of it, and close forgets the session. Each exec
// is a real bash (the restore script is the thing under test), so these take milliseconds, not
// microseconds; the e2e tests run the same through the command line.
#include <catch2/catch.hpp>
#include <string>

#include "base/error.hpp"
#include "base/text.hpp"
#include "sessions/sessions.hpp"
#include "tests/support/unit_home.hpp"

using namespace team;
using namespace team::sessions;
using namespace std::chrono_literals;

namespace {

struct Fixture {
    team::test::TempDir tmp;
    Store store{tmp.path()};
    team::test::FixedClock clock;
    Sessions sessions{store, clock};

    SessionExecResult exec(const std::string& name, const std::string& command,
                           std::optional<Millis> timeout = std::nullopt,
                           std::size_t output_limit = 16 << 20) {
        SessionExecRequest r;
        r.name = name;
        r.command = command;
        r.timeout = timeout;
        r.output_limit = output_limit;
        r.actor = "user";
        return sessions.exec(r);
    }
};

}  // namespace

TEST_CASE("a session keeps cwd, variables and functions from one exec to the next", "[sessions]") {
    Fixture fx;
    auto dir = fx.tmp.path() / "work dir";
    std::filesystem::create_directories(dir);
    auto first =
        fx.exec("app", "cd " + shell_quote(dir.string()) +
                           " && export GREETING='hi there'; greet() { echo \"$GREETING $1\"; }");
    CHECK(first.exit_code() == 0);
    CHECK(first.state_kept);
    CHECK(first.cwd == dir.string());

    auto second = fx.exec("app", "greet you; pwd");
    CHECK(second.exit_code() == 0);
    CHECK(second.stdout_text == "hi there you\n" + dir.string() + "\n");
    CHECK(fx.sessions.get("app").commands == 2);
    // Another session starts fresh.
    auto other = fx.exec("other", "echo \"[${GREETING:-}]\"");
    CHECK(other.stdout_text == "[]\n");
}

TEST_CASE("a failing command keeps what it changed, and a timed-out one keeps nothing",
          "[sessions]") {
    Fixture fx;
    auto failed = fx.exec("s", "export A=1; false");
    CHECK(failed.exit_code() == 1);
    CHECK(failed.state_kept);
    CHECK(fx.exec("s", "echo $A").stdout_text == "1\n");

    auto timed_out = fx.exec("s", "export A=2; sleep 30", 100ms);
    CHECK(timed_out.timed_out);
    CHECK(timed_out.exit_code() == 124);
    CHECK_FALSE(timed_out.state_kept);
    CHECK(fx.exec("s", "echo $A").stdout_text == "1\n");
}

TEST_CASE("a session exec keeps the end of its output", "[sessions]") {
    Fixture fx;
    auto r = fx.exec("s", "printf 'abcdefghij'; printf 'err' >&2", std::nullopt, 4);
    CHECK(r.stdout_text == "ghij");
    CHECK(r.stderr_text == "err");
    CHECK(r.truncated);
}

TEST_CASE("a bad session name is refused and close forgets a session", "[sessions]") {
    Fixture fx;
    try {
        fx.exec("bad name", "true");
        FAIL("no error");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::usage);
    }
    fx.exec("s", "export A=1");
    auto closed = fx.sessions.close("s", 1s, "user");
    CHECK(closed.name == "s");
    CHECK(closed.execs_killed == 0);
    try {
        fx.sessions.get("s");
        FAIL("no error");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::not_found);
    }
    // The name is free again and starts fresh.
    CHECK(fx.exec("s", "echo \"[${A:-}]\"").stdout_text == "[]\n");
}
