// The shells and sessions repositories (state/shell_records, state/session_records) and the
// parts of shells/ and sessions/ that need no process: in-process over a real Store in a
// temporary directory, with a fixed clock.

#include <catch2/catch.hpp>
#include <fstream>

#include "base/error.hpp"
#include "sessions/session_state.hpp"
#include "sessions/sessions.hpp"
#include "shells/output_file.hpp"
#include "shells/shells.hpp"
#include "state/activity.hpp"
#include "state/session_records.hpp"
#include "state/shell_records.hpp"
#include "state/store.hpp"
#include "tests/support/process.hpp"
#include "tests/support/unit_home.hpp"

using namespace team;
using team::test::kStart;
using team::test::TempDir;

namespace {

struct Fixture {
    TempDir tmp;
    Store store{tmp.path()};
    team::test::FixedClock clock;
    ShellRecords shells{store};
    SessionRecords sessions{store};

    // A shell recorded as starting, with ids handed out in order.
    ShellRecord add_shell(const std::string& id, std::optional<std::string> session = {},
                          std::optional<std::string> script = {}) {
        ShellRecord s;
        s.command = {"sleep", "1"};
        s.cwd = "/";
        s.started_at = clock.now();
        s.output_limit = 100;
        s.session = std::move(session);
        shells.insert(s, script, [&] { return id; }, tmp.path() / "shells", "lead@web",
                      {{"command", s.command}});
        return s;
    }

    std::vector<ActivityEntry> activity(const std::string& type) {
        ActivityQuery q;
        q.type = type;
        return list_activity(store.db(), std::nullopt, q);
    }

    std::function<NewSession()> fresh(const std::string& cwd) {
        return [cwd] {
            sessions::SessionState state;
            state.cwd = cwd;
            return NewSession{sessions::to_json(state), cwd};
        };
    }
};

}  // namespace

TEST_CASE("a shell record goes in as starting, with its output file and shell_started",
          "[shells]") {
    Fixture fx;
    auto s = fx.add_shell("bg-000001", std::nullopt, "echo restored");
    CHECK(s.id == "bg-000001");
    CHECK(s.output_file == (fx.tmp.path() / "shells" / "bg-000001.out").string());
    auto found = fx.shells.find("bg-000001");
    REQUIRE(found);
    CHECK(found->status == ShellStatus::starting);
    CHECK(found->running());
    CHECK(found->command == std::vector<std::string>{"sleep", "1"});
    CHECK(found->output_limit == 100);
    CHECK(fx.shells.script("bg-000001") == "echo restored");
    auto started = fx.activity("shell_started");
    REQUIRE(started.size() == 1);
    CHECK(started[0].details["shellId"] == "bg-000001");
    CHECK(started[0].actor == "lead@web");
    CHECK_FALSE(fx.shells.find("bg-ffffff"));
}

TEST_CASE("a taken shell id is drawn again", "[shells]") {
    Fixture fx;
    fx.add_shell("bg-000001");
    int draws = 0;
    ShellRecord s;
    s.command = {"true"};
    s.started_at = fx.clock.now();
    fx.shells.insert(
        s, std::nullopt, [&] { return ++draws == 1 ? "bg-000001" : "bg-000002"; }, fx.tmp.path(),
        "user", nlohmann::json::object());
    CHECK(s.id == "bg-000002");
    CHECK(draws == 2);
}

TEST_CASE("running, truncated, then finished once: the first end recorded wins", "[shells]") {
    Fixture fx;
    fx.add_shell("bg-000001", std::nullopt, "script");
    fx.shells.mark_running("bg-000001", 100, 7, 99, 6);
    auto s = *fx.shells.find("bg-000001");
    CHECK(s.status == ShellStatus::running);
    CHECK(s.pid == 100);
    CHECK(s.supervisor_pid == 99);
    CHECK_FALSE(fx.shells.script("bg-000001"));  // cleared once the command runs
    fx.shells.mark_truncated("bg-000001");
    CHECK(fx.shells.find("bg-000001")->output_truncated);

    auto details = [](const ShellRecord& r) { return nlohmann::json{{"status", str(r.status)}}; };
    ShellEnd end;
    end.status = ShellStatus::killed;
    end.at = kStart + 5;
    end.signal = "SIGKILL";
    auto ended = fx.shells.mark_finished("bg-000001", end, "lead@web", details);
    CHECK(ended.status == ShellStatus::killed);
    CHECK(ended.signal == "SIGKILL");
    CHECK_FALSE(ended.exit_code);
    ShellEnd later;
    later.status = ShellStatus::completed;
    later.at = kStart + 9;
    later.exit_code = 0;
    auto again = fx.shells.mark_finished("bg-000001", later, "supervisor", details);
    CHECK(again.status == ShellStatus::killed);
    CHECK(again.ended_at == kStart + 5);
    CHECK(fx.activity("shell_exited").size() == 1);
    CHECK_THROWS_AS(fx.shells.mark_finished("bg-ffffff", later, "x", details), Error);
}

TEST_CASE("shells list running ones or all, of an agent or a session, oldest first", "[shells]") {
    Fixture fx;
    fx.add_shell("bg-00000b", std::string("app"));
    fx.clock.t += 1;
    fx.add_shell("bg-00000a");
    ShellEnd end;
    end.at = fx.clock.now();
    end.exit_code = 0;
    fx.shells.mark_finished("bg-00000a", end, "x",
                            [](const ShellRecord&) { return nlohmann::json::object(); });
    auto all = fx.shells.list(false, std::nullopt, std::nullopt);
    REQUIRE(all.size() == 2);
    CHECK(all[0].id == "bg-00000b");
    CHECK(fx.shells.list(true, std::nullopt, std::nullopt).size() == 1);
    CHECK(fx.shells.list(false, std::nullopt, std::string("app")).size() == 1);
    CHECK(fx.shells.list(false, std::string("w@web"), std::nullopt).empty());
}

TEST_CASE("a kill request keeps the first asker, and a removed shell is gone", "[shells]") {
    Fixture fx;
    auto s = fx.add_shell("bg-000001");
    fx.shells.request_kill(s, kStart, "lead@web", {{"shellId", s.id}});
    fx.shells.request_kill(s, kStart, "w1@web", {{"shellId", s.id}});
    CHECK(fx.shells.find(s.id)->kill_requested_by == "lead@web");
    CHECK(fx.activity("execution_cancelled").size() == 2);
    CHECK(fx.shells.remove(s, kStart, "lead@web"));
    CHECK_FALSE(fx.shells.remove(s, kStart, "lead@web"));
    CHECK_FALSE(fx.shells.find(s.id));
    CHECK(fx.activity("shell_released").size() == 1);
}

TEST_CASE("Shells: an unknown id is not found, and a finished shell is not killed again",
          "[shells]") {
    Fixture fx;
    shells::Shells shells(fx.store, fx.clock);
    CHECK_THROWS_WITH(shells.get("bg-ffffff"), "Shell not found: bg-ffffff");
    fx.add_shell("bg-000001");
    ShellEnd end;
    end.status = ShellStatus::timed_out;
    end.at = kStart;
    fx.shells.mark_finished("bg-000001", end, "x",
                            [](const ShellRecord&) { return nlohmann::json::object(); });
    auto k = shells.kill("bg-000001", 15, std::chrono::milliseconds(10), true, "lead@web");
    CHECK(k.success);
    CHECK(k.signal_sent == "none");
    CHECK(k.error == "Shell already timed out");
    auto doc = shells::to_json(k.shell);
    CHECK(doc["status"] == "timed_out");
    CHECK(shells::exit_status_json(k.shell) ==
          nlohmann::json{{"exitCode", nullptr}, {"signal", nullptr}});
    // gc releases finished shells older than the age given, and only those.
    fx.clock.t += 10'000;
    CHECK(shells.gc(std::chrono::milliseconds(60'000), "lead@web").empty());
    CHECK(shells.gc(std::chrono::milliseconds(5'000), "lead@web") ==
          std::vector<std::string>{"bg-000001"});
    CHECK_FALSE(fx.shells.find("bg-000001"));
}

TEST_CASE("a shell starting with no supervisor is given its time, then recorded failed",
          "[shells]") {
    Fixture fx;
    shells::Shells shells(fx.store, fx.clock);
    fx.add_shell("bg-000001");
    CHECK(shells.get("bg-000001").status == ShellStatus::starting);
    fx.clock.t += 60'000;
    auto s = shells.get("bg-000001");
    CHECK(s.status == ShellStatus::failed);
    CHECK(s.error.has_value());
}

TEST_CASE("the output file keeps the end past its limit and reads back on UTF-8 boundaries",
          "[shells]") {
    TempDir tmp;
    auto path = tmp.path() / "x.out";
    {
        shells::OutputFile file(path, 4);
        CHECK_FALSE(file.append("abcd"));
        CHECK_FALSE(file.append("efgh"));
        CHECK(file.append("ij"));  // past twice the limit: compacted, the first time
        CHECK_FALSE(file.append("klmnopqrstu"));
    }
    // Compacted to the last 4 bytes at each pass over 8: what the reader sees is whole (the
    // record says it was truncated, not the file).
    auto all = shells::read_output(path.string(), std::nullopt, std::nullopt);
    CHECK(all.output == "rstu");
    CHECK_FALSE(all.truncated);
    {
        shells::OutputFile file(path, 4);
        CHECK_FALSE(file.append("vw"));  // 6 bytes: more than the limit, not yet compacted
    }
    auto kept = shells::read_output(path.string(), 4, std::nullopt);
    CHECK(kept.output == "tuvw");  // never more than the limit, whatever the file holds
    CHECK(kept.truncated);
    std::ofstream(path.string(), std::ios::trunc) << "a\xc3\xa9\xc3\xa9";  // aéé
    auto tail = shells::read_output(path.string(), std::nullopt, 3);
    CHECK(tail.output == "\xc3\xa9");
    CHECK(tail.truncated);
    auto [from, size] = shells::read_output_from(path.string(), 3);
    CHECK(from == "\xc3\xa9");
    CHECK(size == 5);
    auto [restart, end] = shells::read_output_from(path.string(), 50);  // the file shrank
    CHECK(restart.size() == 5);
    CHECK(end == 5);
    auto missing = shells::read_output((tmp.path() / "none").string(), std::nullopt, 10);
    CHECK(missing.output.empty());
}

TEST_CASE("sessions are made by their first command, counted, listed by name", "[sessions]") {
    Fixture fx;
    auto a = fx.sessions.open("b", std::nullopt, "user", kStart, fx.fresh("/srv"));
    CHECK(a.commands == 1);
    CHECK(a.state["cwd"] == "/srv");
    auto again = fx.sessions.open("b", std::nullopt, "user", kStart + 5, fx.fresh("/other"));
    CHECK(again.id == a.id);
    CHECK(again.commands == 2);
    CHECK(again.updated_at == kStart + 5);
    CHECK(again.state["cwd"] == "/srv");  // made once
    fx.sessions.open("a", std::nullopt, "user", kStart, fx.fresh("/"));
    auto list = fx.sessions.list();
    REQUIRE(list.size() == 2);
    CHECK(list[0].name == "a");
    CHECK(fx.activity("session_created").size() == 2);
    CHECK_FALSE(fx.sessions.find("c"));
}

TEST_CASE("an exec row lives while it runs, and its end merges into the state as it is then",
          "[sessions]") {
    Fixture fx;
    auto [session, exec_id] = fx.sessions.open_exec("app", std::nullopt, "user", kStart,
                                                    fx.fresh("/srv"), "cd /tmp", 4242, 17);
    auto execs = fx.sessions.execs(session.id);
    REQUIRE(execs.size() == 1);
    CHECK(execs[0].id == exec_id);
    CHECK(execs[0].command == "cd /tmp");
    CHECK(execs[0].supervisor_pid == 4242);
    fx.sessions.finish_exec(exec_id, session.id, [](nlohmann::json now) {
        now["cwd"] = "/tmp";
        return std::optional(now);
    });
    CHECK(fx.sessions.execs(session.id).empty());
    CHECK(fx.sessions.find("app")->state["cwd"] == "/tmp");
    // Without changes, or with nothing to write, the state stays.
    auto [s2, second] =
        fx.sessions.open_exec("app", std::nullopt, "user", kStart, fx.fresh("/"), "true", 1, 1);
    fx.sessions.finish_exec(second, s2.id, {});
    fx.sessions.remove_exec(second);  // already gone: nothing
    CHECK(fx.sessions.find("app")->state["cwd"] == "/tmp");
}

TEST_CASE("a close takes the session's execs and running shells with it, in one go", "[sessions]") {
    Fixture fx;
    auto [session, exec_id] =
        fx.sessions.open_exec("app", std::nullopt, "user", kStart, fx.fresh("/"), "sleep 9", 1, 1);
    fx.add_shell("bg-000001", std::string("app"));
    fx.add_shell("bg-000002", std::string("other"));
    auto closed = fx.sessions.close("app", kStart, "user");
    REQUIRE(closed);
    REQUIRE(closed->execs.size() == 1);
    CHECK(closed->execs[0].id == exec_id);
    CHECK(closed->shell_ids == std::vector<std::string>{"bg-000001"});
    CHECK_FALSE(fx.sessions.find("app"));
    CHECK(fx.sessions.execs(session.id).empty());
    CHECK_FALSE(fx.sessions.close("app", kStart, "user"));
    auto logged = fx.activity("session_closed");
    REQUIRE(logged.size() == 1);
    CHECK(logged[0].details["execs"] == 1);
}

TEST_CASE("Sessions: names are checked, unknown ones suggest a near one", "[sessions]") {
    Fixture fx;
    sessions::Sessions sessions(fx.store, fx.clock);
    fx.sessions.open("app", std::nullopt, "user", kStart, fx.fresh("/"));
    CHECK_THROWS_WITH(sessions.get("apq"),
                      Catch::Contains("did you mean") && Catch::Contains("app"));
    CHECK_THROWS_AS(sessions.get("bad name"), Error);
    auto s = sessions.get("app");
    CHECK(s.state.cwd == "/");
    CHECK(sessions.running_execs(s).empty());
    auto closed = sessions.close("app", std::chrono::milliseconds(10), "user");
    CHECK(closed.execs_killed == 0);
    CHECK(closed.survivors == 0);
    CHECK_THROWS_WITH(sessions.close("app", std::chrono::milliseconds(10), "user"),
                      Catch::Contains("not found"));
}

TEST_CASE("a cancelled shell stays cancelled: no later end overwrites it", "[shells][executions]") {
    Fixture fx;
    fx.add_shell("bg-000001");
    fx.shells.mark_running("bg-000001", 100, 7, 99, 6);
    auto s = *fx.shells.find("bg-000001");
    // A terminate records who asked and logs nothing yet (it logs its outcome itself).
    fx.shells.request_kill(s, kStart + 1, "lead@web", nullptr);
    CHECK(fx.shells.find("bg-000001")->kill_requested_by == "lead@web");
    CHECK(fx.activity("execution_cancelled").empty());
    fx.shells.request_kill(s, kStart + 2, "other@web", nullptr);  // the first one is kept
    CHECK(fx.shells.find("bg-000001")->kill_requested_by == "lead@web");

    auto details = [](const ShellRecord& r) { return nlohmann::json{{"status", str(r.status)}}; };
    ShellEnd cancelled;
    cancelled.status = ShellStatus::killed;
    cancelled.at = kStart + 3;
    cancelled.exit_code = 0;  // the command exited 0 on SIGINT
    CHECK(fx.shells.mark_finished("bg-000001", cancelled, "lead@web", details).status ==
          ShellStatus::killed);
    for (auto status : {ShellStatus::completed, ShellStatus::failed, ShellStatus::timed_out}) {
        ShellEnd later;
        later.status = status;
        later.at = kStart + 9;
        later.exit_code = 1;
        auto after = fx.shells.mark_finished("bg-000001", later, "supervisor", details);
        CHECK(after.status == ShellStatus::killed);
        CHECK(after.exit_code == 0);
        CHECK(after.ended_at == kStart + 3);
    }
    CHECK(fx.activity("shell_exited").size() == 1);

    fx.shells.log_cancelled(s, kStart + 4, "lead@web",
                            {{"execution_id", "bg-000001"}, {"status", "terminated"}});
    auto logged = fx.activity("execution_cancelled");
    REQUIRE(logged.size() == 1);
    CHECK(logged[0].details["status"] == "terminated");
    CHECK(logged[0].actor == "lead@web");
}

TEST_CASE("a terminate's returncode: the exit code, or minus the signal", "[shells][executions]") {
    ShellRecord s;
    CHECK_FALSE(shells::returncode_of(s));
    s.exit_code = 3;
    CHECK(shells::returncode_of(s) == 3);
    s.exit_code.reset();
    s.signal = "SIGINT";
    CHECK(shells::returncode_of(s) == -2);
    s.signal = "SIGKILL";
    CHECK(shells::returncode_of(s) == -9);
}
