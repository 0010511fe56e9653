// Several homes sharing one PostgreSQL store (SPEC 16), each with its own tmux server, as
// separate machines would be: what one does, the others see and are woken by; claims from all of
// them never double; a store that goes away and comes back loses nothing. Tagged [pg-only]: they
// run in the `pg` label alone (tests/CMakeLists.txt), on the rig's cluster or a cluster of their
// own.
#include <signal.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "state/activity.hpp"
#include "state/pg_db.hpp"
#include "state/store.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/marker.hpp"
#include "tests/support/pg.hpp"
#include "tests/support/process.hpp"

namespace {

using team::test::Child;
using team::test::PgCluster;
using team::test::PgDatabase;
using team::test::RunResult;
using team::test::TeamEnv;
using Json = nlohmann::json;

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::string line;
    for (char c : text) {
        if (c == '\n') {
            lines.push_back(line);
            line.clear();
        } else {
            line += c;
        }
    }
    if (!line.empty()) lines.push_back(line);
    return lines;
}

// The number of connections of `db` that LISTEN on `channel` (team_changes: waiting readers;
// team_messages: readers of inboxes; team_supervisors: supervisors' bells).
int listeners(const PgDatabase& db, const std::string& channel) {
    auto r = db.sql("SELECT count(*) FROM pg_stat_activity WHERE datname = '" + db.name() +
                    "' AND query = 'LISTEN " + channel + "'");
    return r.exit_code == 0 ? std::stoi(r.out) : -1;
}

RunResult ok(const TeamEnv& env, const std::vector<std::string>& args) {
    auto r = env.run(args);
    INFO("team " << Json(args).dump() << " -> " << r.exit_code << "\nstdout: " << r.out
                 << "\nstderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    return r;
}

}  // namespace

TEST_CASE("two homes share a team through the store: a send from one wakes a reader on the other",
          "[pg-only][shared]") {
    PgDatabase store;
    TeamEnv a(store.url()), b(store.url());
    ok(a, {"create", "web"});
    ok(a, {"spawn", "w1", "--", "sleep", "600"});

    // B waits in w1's inbox; A sends. The reader is woken by the store's NOTIFY.
    auto reader =
        b.start({"inbox", "--team", "web", "--as", "w1", "--unread", "--wait", "120s", "--json"});
    // The reader is listening once it has read the (empty) inbox: wait for its connection (not
    // w1's supervisor's bell, which listens on another channel).
    REQUIRE(team::test::eventually([&] { return listeners(store, "team_messages") >= 1; }, 30'000));
    ok(a, {"send", "w1", "hello from a", "--team", "web"});
    // Woken by the send, not at the end of its wait (which would return the message too).
    CHECK(team::test::eventually([&] { return !team::test::alive(reader.pid()); }, 30'000));
    auto got = reader.wait();
    INFO(got.out << got.err);
    REQUIRE(got.exit_code == 0);
    auto messages = Json::parse(got.out);
    REQUIRE(messages.size() == 1);
    CHECK(messages[0]["text"] == "hello from a");

    // A held `team mcp` session of w1 in B pushes w1's new messages as channel notifications.
    // After its first read it wakes only for commits that stored a message (the NOTIFY's
    // payload), so A's task adds wake nobody there, and A's send still reaches it.
    auto dir = b.dir();
    std::string session =
        "mkfifo in && (\"$TEAM_BIN\" mcp --team web --as w1 < in > out 2> err &) && exec 3> in && "
        "printf '%s\\n' '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
        "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\","
        "\"version\":\"1\"}}}' '{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}' "
        ">&3 && while [ ! -e stop ]; do sleep 0.05; done";
    Child mcp({"/bin/sh", "-c", "cd '" + dir.string() + "' && " + session},
              b.environment({{"TEAM_BIN", team::test::team_binary()}}));
    // Once it has read the inbox, it listens for messages alone.
    REQUIRE(team::test::eventually(
        [&] { return team::test::slurp(dir / "out").find("\"id\":1") != std::string::npos; },
        30'000));
    REQUIRE(team::test::eventually([&] { return listeners(store, "team_messages") == 1; }, 30'000));
    for (int i = 0; i < 3; ++i) ok(a, {"task", "add", "t" + std::to_string(i), "--team", "web"});
    ok(a, {"send", "w1", "pushed from a", "--team", "web"});
    CHECK(team::test::eventually(
        [&] {
            auto out = team::test::slurp(dir / "out");
            return out.find("notifications/claude/channel") != std::string::npos &&
                   out.find("pushed from a") != std::string::npos;
        },
        30'000));
    INFO("mcp stdout: " << team::test::slurp(dir / "out")
                        << "\nstderr: " << team::test::slurp(dir / "err"));
    { std::ofstream(dir / "stop").put('\n'); }
    CHECK(mcp.wait().exit_code == 0);

    // B sees A's team and agent as they are: its look does not take A's agent for lost (its
    // processes are A's, which B cannot see).
    auto agents = Json::parse(ok(b, {"agents", "--team", "web", "--json"}).out);
    REQUIRE(agents.size() == 1);
    CHECK(agents[0]["status"] == "active");
    auto teams = Json::parse(ok(b, {"list", "--json"}).out);
    REQUIRE(teams.size() == 1);
    CHECK(teams[0]["name"] == "web");
    // A prompt from B is refused: A's pane id names no pane of B's tmux server.
    auto prompt = b.run({"prompt", "w1", "hello", "--team", "web"});
    CHECK(prompt.exit_code == 4);
    CHECK(Json::parse(ok(a, {"agents", "--team", "web", "--json"}).out)[0]["status"] == "active");
    // A's background shells are A's: B neither lists nor finds them.
    auto shell = Json::parse(ok(a, {"shell", "start", "--json", "--", "sleep", "600"}).out);
    CHECK(Json::parse(ok(b, {"shell", "list", "--all", "--json"}).out).empty());
    CHECK(b.run({"shell", "status", shell["shell_id"].get<std::string>()}).exit_code == 3);
    ok(a, {"shell", "kill", shell["shell_id"].get<std::string>()});
    ok(a, {"teardown", "web", "--grace", "1s"});
}

TEST_CASE("a kill-agent --force and a teardown from one home end the agents of another",
          "[pg-only][shared]") {
    PgDatabase store;
    TeamEnv a(store.url()), b(store.url());
    ok(a, {"create", "web"});
    // A's agents, each with a marker of its own, and a child that would outlive a careless kill.
    team::test::Marker m1, m2;
    const std::vector<std::string> tree = {"sh", "-c", "sleep 600 & sleep 600; wait"};
    auto spawn = [&](const TeamEnv& home, const std::string& name, const team::test::Marker& m) {
        std::vector<std::string> args{"spawn", name, "--team", "web", "--env", m.entry(), "--"};
        args.insert(args.end(), tree.begin(), tree.end());
        ok(home, args);
        REQUIRE(team::test::eventually([&] { return m.alive().size() >= 3; }, 30'000));
    };
    spawn(a, "w1", m1);
    ok(a, {"task", "add", "parser", "--team", "web"});
    ok(a, {"task", "claim", "1", "--team", "web", "--as", "w1"});

    // B's force kill of A's agent: A's supervisor hears it through the store and ends the tree;
    // B returns once the end is recorded, and nothing of the agent is left.
    auto kill = b.run({"kill-agent", "w1", "--force", "--team", "web", "--json"});
    INFO(kill.out << kill.err);
    REQUIRE(kill.exit_code == 0);
    auto killed = Json::parse(kill.out);
    CHECK(killed["phase"] == "force_killed");
    CHECK(killed["exitReason"] == "force_killed");
    CHECK(killed["reassignedTasks"] == Json::array({"1"}));
    CHECK(m1.alive().empty());
    auto agents = Json::parse(ok(a, {"agents", "--all", "--team", "web", "--json"}).out);
    CHECK(agents[0]["status"] == "terminated");

    // A teardown from B, with agents on both homes that do not answer: the graceful phase's
    // deadline holds on A (its supervisor enforces it), and force follows on both.
    team::test::Marker m3;
    spawn(a, "w2", m2);
    spawn(b, "w3", m3);
    auto teardown = b.run({"teardown", "--grace", "2s", "--team", "web", "--json"});
    INFO(teardown.out << teardown.err);
    REQUIRE(teardown.exit_code == 0);
    auto rows = Json::parse(teardown.out);
    CHECK(rows["dissolved"] == true);
    REQUIRE(rows["agents"].size() == 2);
    for (const auto& row : rows["agents"]) CHECK(row["exitReason"] == "force_killed");
    CHECK(m2.alive().empty());
    CHECK(m3.alive().empty());
    CHECK(Json::parse(ok(a, {"list", "--all", "--json"}).out)[0]["status"] == "dissolved");
}

TEST_CASE("shared writes run side by side, apart from whole writes, and append in id order",
          "[pg-only][shared][concurrency]") {
    PgDatabase store;
    TeamEnv a(store.url());
    ok(a, {"create", "side"});
    auto team_id = std::stoll(store.sql("SELECT id FROM teams WHERE name = 'side'").out);
    team::Store one(a.home(), store.url()), two(a.home(), store.url()),
        whole(a.home(), store.url());
    auto waiting = [&] {
        auto r =
            store.sql("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted");
        return r.exit_code == 0 ? std::stoi(r.out) : -1;
    };

    // Two shared writes at once: the second begins while the first is open (a whole write
    // would wait for the first's commit, up to the lock timeout, and fail).
    one.db().begin_write(team::Db::Turn::shared);
    two.db().begin_write(team::Db::Turn::shared);
    std::thread whole_writer, second;
    std::atomic<bool> whole_done{false}, appended{false};
    // However the test ends (a REQUIRE that fails throws): the open writes end, the first's
    // before all (the others wait on its locks), and both threads are joined.
    struct Ending {
        std::function<void()> run;
        ~Ending() { run(); }
    } ending{[&] {
        one.db().rollback_write();
        if (!second.joinable()) two.db().rollback_write();
        if (second.joinable()) second.join();
        if (whole_writer.joinable()) whole_writer.join();
    }};
    // A whole write waits for both.
    whole_writer = std::thread([&] {
        try {
            whole.write([&] {});
            whole_done = true;
        } catch (const std::exception&) {
            // timed out: whole_done stays false, which the CHECK below reports
        }
    });
    REQUIRE(team::test::eventually([&] { return waiting() == 1; }, 30'000));
    CHECK(!whole_done);

    // The first to append holds the appenders' lock to its commit: the second's append waits,
    // so ids commit in their order (a reader by cursor never passes over one still to come).
    team::append_activity(one.db(), team_id, 1, "x@side", "probe", {{"n", "1"}});
    second = std::thread([&] {
        try {
            team::append_activity(two.db(), team_id, 2, "x@side", "probe", {{"n", "2"}});
            appended = true;
            two.db().commit_write();
        } catch (const std::exception&) {
            two.db().rollback_write();  // `appended` false or the order below tells
        }
    });
    REQUIRE(team::test::eventually([&] { return waiting() == 2; }, 30'000));
    CHECK(!appended);
    one.db().commit_write();
    second.join();
    whole_writer.join();
    CHECK(whole_done);
    CHECK(store
              .sql("SELECT string_agg(details::json->>'n', ',' ORDER BY id) FROM activity "
                   "WHERE type = 'probe'")
              .out == "1,2\n");
}

TEST_CASE("12 claimers across 3 homes on 1,000 tasks: each task claimed exactly once",
          "[pg-only][shared][concurrency]") {
    PgDatabase store;
    TeamEnv a(store.url()), b(store.url()), c(store.url());
    ok(a, {"create", "race"});
    const int kClaimers = 12, kTasks = 1000;
    // The claimers are members whose processes live in yet another home (a home_id none of these
    // has), so no home looks at them; the tasks are made in one statement.
    std::string members;
    for (int i = 1; i <= kClaimers; ++i) {
        members += std::string(i > 1 ? "," : "") +
                   "((SELECT id FROM teams WHERE name = 'race'), 'c" + std::to_string(i) +
                   "', 0, 'active', 0, 'elsewhere:1')";
    }
    REQUIRE(store
                .sql("INSERT INTO agents (team_id, name, is_leader, status, created_at, home_id) "
                     "VALUES " +
                     members)
                .exit_code == 0);
    REQUIRE(store
                .sql("INSERT INTO tasks (team_id, id, subject, created_at, updated_at) SELECT "
                     "(SELECT id FROM teams WHERE name = 'race'), n, 'task ' || n, 0, 0 FROM "
                     "generate_series(1, " +
                     std::to_string(kTasks) + ") n")
                .exit_code == 0);

    // A follower of the activity log in B reads it by cursor (ids after the last it saw) while
    // the claims commit side by side: it must see every claim's entry, so their ids commit in
    // order (Db::Turn::shared). One that skipped an id would never reach its limit.
    Child follower(
        std::vector<std::string>{"/usr/bin/timeout", "300", team::test::team_binary(), "activity",
                                 "--follow", "--type", "task_claimed", "--limit",
                                 std::to_string(kTasks), "--json", "--team", "race"},
        b.environment({}));

    std::string script =
        "while :; do \"$TEAM_BIN\" task claim --json --team race --as \"$AS\"; rc=$?; "
        "[ \"$rc\" -eq 0 ] || [ \"$rc\" -eq 4 ] || break; done; echo \"END $rc\"";
    const TeamEnv* homes[] = {&a, &b, &c};
    std::vector<Child> claimers;
    claimers.reserve(kClaimers);
    for (int i = 0; i < kClaimers; ++i) {
        auto env = homes[i % 3]->environment(
            {{"TEAM_BIN", team::test::team_binary()}, {"AS", "c" + std::to_string(i + 1)}});
        claimers.emplace_back(std::vector<std::string>{"/bin/sh", "-c", script}, env);
    }
    std::map<std::string, std::string> owner_of;
    int claims = 0;
    for (int i = 0; i < kClaimers; ++i) {
        auto r = claimers[i].wait();
        std::string as = "c" + std::to_string(i + 1);
        INFO("claimer " << as << " stderr: " << r.err);
        CHECK(r.exit_code == 0);
        auto lines = lines_of(r.out);
        REQUIRE(!lines.empty());
        CHECK(lines.back() == "END 3");
        for (const auto& line : lines) {
            auto t = Json::parse(line, nullptr, false);
            if (!t.is_object() || !t.contains("status")) continue;
            CHECK(t["owner"] == as);
            std::string id = t["id"];
            CHECK(owner_of.count(id) == 0);  // nobody else got it
            owner_of[id] = as;
            ++claims;
        }
    }
    CHECK(claims == kTasks);
    CHECK(owner_of.size() == static_cast<size_t>(kTasks));
    auto counts = store.sql("SELECT status, n FROM task_counts WHERE n > 0 ORDER BY status");
    CHECK(counts.out == "in_progress|1000\n");

    auto followed = follower.wait();
    INFO("follower stderr: " << followed.err);
    CHECK(followed.exit_code == 0);
    std::set<std::string> seen;
    for (const auto& line : lines_of(followed.out)) {
        auto entry = Json::parse(line, nullptr, false);
        if (entry.is_object() && entry.contains("details")) {
            seen.insert(entry["details"].value("taskId", ""));
        }
    }
    CHECK(seen.size() == static_cast<size_t>(kTasks));
}

TEST_CASE(
    "the store restarted under waiting readers: 100 messages sent around it all arrive, "
    "one inbox --wait across it reads what comes, and a command it stops under fails at once",
    "[pg-only][faults][pg-serial]") {
    PgCluster cluster;
    std::string url;
    {
        PgDatabase db(cluster.socket_dir());
        url = db.url();
        TeamEnv a(url), b(url);
        ok(a, {"create", "web"});
        // No write of the agents' screen watchers (a still screen is idle after idle-after) or
        // of their usage samplers (after their first sample) while the test counts who waits for
        // the writers' lock below.
        ok(a, {"config", "set", "idle-after", "1h", "--team", "web"});
        ok(a, {"config", "set", "sample-every", "1h", "--team", "web"});
        ok(a, {"spawn", "w1", "--", "sleep", "600"});
        // B reads w1's inbox as the messages come, with --wait, marking each read: across the
        // restart its listener reconnects and re-reads, so nothing is missed.
        std::string script =
            "n=0; while [ $n -lt 100 ]; do out=$(\"$TEAM_BIN\" inbox --team web --as w1 --unread "
            "--mark-read --wait 60s --json) || { echo \"FAIL $?\"; sleep 0.2; continue; }; "
            "k=$(printf '%s' \"$out\" | grep -o '\"id\":' | wc -l); "
            "n=$((n + k)); printf '%s\\n' \"$out\"; done; echo END";
        // And one `inbox --wait` of w2's, the same process through the whole restart: waiting (its
        // listener seen) before the other reader starts.
        ok(a, {"spawn", "w2", "--", "sleep", "600"});
        auto single = b.start(
            {"inbox", "--team", "web", "--as", "w2", "--unread", "--wait", "120s", "--json"});
        REQUIRE(
            team::test::eventually([&] { return listeners(db, "team_messages") >= 1; }, 30'000));
        auto reader = Child({"/bin/sh", "-c", script},
                            b.environment({{"TEAM_BIN", team::test::team_binary()}}));
        int sent = 0;
        auto send = [&](int upto) {
            while (sent < upto) {
                auto r = a.run({"send", "w1", "m" + std::to_string(sent), "--team", "web"});
                if (r.exit_code == 0) {
                    ++sent;
                } else {
                    // The store is down: a clear error, never a hang; send again once it is back.
                    CHECK_THAT(r.err, Catch::Contains("store"));
                    std::this_thread::sleep_for(std::chrono::milliseconds(100));
                }
            }
        };
        send(50);

        // The server stopped mid-command: a send waits for the writers' lock (a session holds
        // it), then the server goes down under it. It fails at once, with a clear error, and
        // stores nothing.
        auto holder = team::test::psql_start(cluster.socket_dir(), db.name(),
                                             "SELECT pg_advisory_lock(" +
                                                 std::to_string(team::kPgWriteLockKey) +
                                                 "); SELECT pg_sleep(600)");
        auto advisory = [&](const std::string& granted) {
            auto r = db.sql(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND "
                "granted = " +
                granted);
            return r.exit_code == 0 ? std::stoi(r.out) : -1;
        };
        REQUIRE(team::test::eventually([&] { return advisory("true") == 1; }, 30'000));
        // And a reader whose wait ends while the server is down: it ends too, at its timeout.
        // Listening before the send starts: the send waits for the lock at most its timeout
        // (10 s), and a loaded machine must not spend that on this reader's start.
        auto short_wait =
            b.start({"inbox", "--team", "web", "--as", "w2", "--unread", "--wait", "5s", "--json"});
        REQUIRE(
            team::test::eventually([&] { return listeners(db, "team_messages") >= 2; }, 30'000));
        auto mid = a.start({"send", "w1", "mid-command", "--team", "web"});
        REQUIRE(team::test::eventually([&] { return advisory("false") == 1; }, 30'000));
        cluster.down("fast");
        CHECK(team::test::eventually([&] { return !team::test::alive(mid.pid()); }, 5'000));
        auto failed = mid.wait();
        CHECK(failed.exit_code == 1);
        CHECK_THAT(failed.err, Catch::Contains("lost the connection to the store"));
        CHECK_THAT(failed.err, Catch::Contains("nothing was changed"));
        CHECK(holder.wait().exit_code != 0);  // its session went with the server
        CHECK(team::test::eventually([&] { return !team::test::alive(short_wait.pid()); }, 15'000));
        auto ended = short_wait.wait();
        INFO("short wait: " << ended.exit_code << " " << ended.out << ended.err);
        // Its wait ran out with the store still down: the look that follows says so.
        CHECK(ended.exit_code == 1);
        CHECK_THAT(ended.out + ended.err, Catch::Contains("lost the connection to the store"));

        auto down = a.run({"send", "w1", "lost?", "--team", "web"});
        CHECK(down.exit_code == 1);
        CHECK_THAT(down.err, Catch::Contains("store"));
        cluster.up();
        send(100);
        // Sent once the store is back: the single reader got its connections back (or gets
        // them now: a reconnect counts as a wake-up) and reads it.
        ok(a, {"send", "w2", "after the restart", "--team", "web"});
        // Woken (by the send or by getting its listener back), not at the end of its wait.
        CHECK(team::test::eventually([&] { return !team::test::alive(single.pid()); }, 30'000));
        auto got = single.wait();
        INFO(got.out << got.err);
        REQUIRE(got.exit_code == 0);
        auto messages = Json::parse(got.out);
        REQUIRE(messages.size() == 1);
        CHECK(messages[0]["text"] == "after the restart");
        auto r = reader.wait();
        INFO(r.out << r.err);
        CHECK(r.exit_code == 0);
        std::set<std::string> texts;
        for (const auto& line : lines_of(r.out)) {
            auto j = Json::parse(line, nullptr, false);
            if (!j.is_array()) continue;
            for (const auto& m : j) texts.insert(m["text"].get<std::string>());
        }
        CHECK(texts.size() == 100);
        CHECK(texts.count("mid-command") == 0);  // the send the server's stop cut stored nothing
        // Still a live agent: its supervisor kept it through the outage.
        CHECK(Json::parse(ok(a, {"agents", "--team", "web", "--json"}).out)[0]["status"] ==
              "active");
        ok(a, {"teardown", "web", "--grace", "1s"});
    }
}

TEST_CASE(
    "crashes on PostgreSQL: send, claim and kill-agent --force SIGKILLed at random moments "
    "leave no lock held and nothing half done",
    "[pg-only][crash]") {
    PgDatabase store;
    TeamEnv a(store.url());
    ok(a, {"create", "web"});
    ok(a, {"spawn", "w1", "--team", "web", "--", "sleep", "600"});
    REQUIRE(store
                .sql("INSERT INTO tasks (team_id, id, subject, created_at, updated_at) SELECT "
                     "(SELECT id FROM teams WHERE name = 'web'), n, 'task ' || n, 0, 0 FROM "
                     "generate_series(1, 100) n")
                .exit_code == 0);
    // The moment of each SIGKILL: uniform over a little more than what a command takes here
    // (60-150 ms: the start and connection take most of it, then the transaction).
    std::mt19937 random(2811);
    std::uniform_int_distribution<int> moment_us(0, 150'000);
    int interrupted = 0, claims = 0;
    std::vector<std::unique_ptr<team::test::Marker>> marks;
    for (int seed = 0; seed < 24; ++seed) {
        std::vector<std::string> crashed, again;
        std::string n = std::to_string(seed);
        switch (seed % 3) {
            case 0:
                crashed = {"send", "w1", "crashed " + n, "--team", "web"};
                again = {"send", "w1", "sent " + n, "--team", "web"};
                break;
            case 1:
                crashed = {"task", "claim", "--team", "web", "--as", "w1"};
                again = crashed;
                break;
            default: {
                marks.push_back(std::make_unique<team::test::Marker>());
                ok(a, {"spawn", "k" + n, "--team", "web", "--env", marks.back()->entry(), "--",
                       "sleep", "600"});
                crashed = {"kill-agent", "k" + n, "--force", "--team", "web"};
                again = crashed;
            }
        }
        auto child = a.start(crashed);
        std::this_thread::sleep_for(std::chrono::microseconds(moment_us(random)));
        ::kill(child.pid(), SIGKILL);
        auto r = child.wait();
        if (r.exit_code != 0) ++interrupted;
        INFO("seed " << seed << ": team " << Json(crashed).dump() << " -> " << r.exit_code);
        // Once more at once: nothing the crashed process held (its transaction, the writers'
        // lock, a team lock) is left to block it. A kill-agent the crash let finish is refused
        // (already terminated, exit 4); every other runs.
        auto second = a.run(again);
        INFO("again -> " << second.exit_code << ": " << second.err);
        if (seed % 3 == 2) {
            CHECK((second.exit_code == 0 || second.exit_code == 4));
            CHECK(marks.back()->none_alive_within(10'000));
        } else {
            CHECK(second.exit_code == 0);
        }
        if (seed % 3 == 1) ++claims;
    }
    auto landed = store.sql("SELECT count(*) FROM messages WHERE text LIKE 'crashed %'").out;
    WARN(interrupted << " of 24 runs interrupted; crashed sends that landed: " << landed);
    // Every message sent again is there once; a crashed send is there once or not at all.
    auto texts = store.sql("SELECT text, count(*) FROM messages GROUP BY text HAVING count(*) > 1");
    CHECK(texts.out.empty());
    CHECK(store.sql("SELECT count(*) FROM messages WHERE text LIKE 'sent %'").out == "8\n");
    // Each claim is whole: a task in progress has its owner and its activity entry.
    auto taken = std::stoi(store
                               .sql("SELECT count(*) FROM tasks WHERE status = 'in_progress' "
                                    "AND owner = 'w1'")
                               .out);
    auto logged =
        std::stoi(store.sql("SELECT count(*) FROM activity WHERE type = 'task_claimed'").out);
    CHECK(taken == logged);
    CHECK(taken >= claims);
    CHECK(taken <= 2 * claims);
    // The force-killed agents are all ended, none of them half.
    auto live = store.sql(
        "SELECT count(*) FROM agents WHERE name LIKE 'k%' AND status <> "
        "'terminated'");
    CHECK(live.out == "0\n");
    ok(a, {"teardown", "web", "--grace", "1s"});
}

TEST_CASE(
    "listeners' connections killed with pg_terminate_backend: readers and supervisors "
    "reconnect and miss nothing",
    "[pg-only][faults]") {
    PgDatabase store;
    TeamEnv a(store.url()), b(store.url());
    ok(a, {"create", "web"});
    team::test::Marker m;
    ok(a, {"spawn", "w1", "--team", "web", "--env", m.entry(), "--", "sleep", "600"});
    // A's supervisor listens for its bell; B waits in w1's inbox.
    REQUIRE(
        team::test::eventually([&] { return listeners(store, "team_supervisors") >= 1; }, 30'000));
    auto reader =
        b.start({"inbox", "--team", "web", "--as", "w1", "--unread", "--wait", "60s", "--json"});
    REQUIRE(team::test::eventually([&] { return listeners(store, "team_messages") >= 1; }, 30'000));
    // Every connection of the database ends: the reader's, its listener's, the supervisor's bell.
    CHECK(store.terminate_sessions() >= 3);
    // Sent after the kill: the reader got its connections back and reads it (a reconnect counts
    // as a wake-up, so a message sent while it was away would be read too).
    ok(a, {"send", "w1", "after the kill", "--team", "web"});
    CHECK(team::test::eventually([&] { return !team::test::alive(reader.pid()); }, 30'000));
    auto got = reader.wait();
    INFO(got.out << got.err);
    REQUIRE(got.exit_code == 0);
    auto messages = Json::parse(got.out);
    REQUIRE(messages.size() == 1);
    CHECK(messages[0]["text"] == "after the kill");
    // The supervisor's bell is back too: B's force kill reaches it.
    REQUIRE(
        team::test::eventually([&] { return listeners(store, "team_supervisors") >= 1; }, 30'000));
    auto kill = b.run({"kill-agent", "w1", "--force", "--team", "web", "--json"});
    INFO(kill.out << kill.err);
    CHECK(kill.exit_code == 0);
    CHECK(m.alive().empty());
}

TEST_CASE("a wrong store, a store without the schema, and one newer than team: clear errors",
          "[pg-only][faults]") {
    PgDatabase db;
    TeamEnv home(db.url());
    // A database that is not there: exit 1, the reason, no password shown.
    auto dir = db.socket_dir().string();
    TeamEnv wrong("postgresql://team:s3cret@/no_such_db?host=" + dir);
    auto r = wrong.run({"list"});
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, Catch::Contains("no_such_db"));
    CHECK(r.err.find("s3cret") == std::string::npos);
    // doctor says the same in its store line, the password hidden; and of a good store, ok.
    auto doctor_store = [](const TeamEnv& env) {
        auto doc = Json::parse(env.run({"doctor", "--json"}).out);
        for (const auto& c : doc["checks"]) {
            if (c["check"] == "store") return c;
        }
        return Json();
    };
    auto bad = doctor_store(wrong);
    CHECK(bad["status"] == "fail");
    CHECK(bad.dump().find("s3cret") == std::string::npos);
    auto good = doctor_store(home);
    CHECK(good["status"] == "ok");
    CHECK_THAT(good["message"].get<std::string>(), Catch::Contains("PostgreSQL"));
    // Not a PostgreSQL URL.
    TeamEnv odd("mysql://x/y");
    CHECK(odd.run({"list"}).exit_code == 2);
    // A newer schema: refused, nothing touched; `store check` says which is newer.
    REQUIRE(db.sql("UPDATE team_schema SET version = version + 1").exit_code == 0);
    r = home.run({"create", "web"});
    CHECK(r.exit_code == 4);
    CHECK_THAT(r.err, Catch::Contains("newer than this team's"));
    auto check = home.run({"store", "check", "--json"});
    CHECK(check.exit_code == 1);
    CHECK(Json::parse(check.out)["schema"]["state"] == "newer");
    CHECK(db.sql("SELECT count(*) FROM teams").out == "0\n");
    // An empty database: refused until `team store migrate`.
    PgDatabase empty;
    REQUIRE(empty.sql("DROP TABLE team_schema").exit_code == 0);
    TeamEnv fresh(empty.url());
    r = fresh.run({"list"});
    CHECK(r.exit_code == 4);
    CHECK_THAT(r.err, Catch::Contains("team store migrate"));
}

TEST_CASE("the PostgreSQL schema has the tables and columns of SQLite's, no more and no fewer",
          "[pg-only][schema]") {
    // state/pg_schema.cpp spells the schema again in PostgreSQL's dialect beside
    // state/schema.cpp's SQLite migrations: the two must not drift apart.
    PgDatabase store;
    TeamEnv pg(store.url()), lite("sqlite");
    ok(pg, {"create", "s"});
    ok(lite, {"create", "s"});
    std::set<std::string> on_pg, on_sqlite;
    auto pg_columns = store.sql(
        "SELECT c.table_name || '.' || c.column_name FROM information_schema.columns c JOIN "
        "information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = "
        "c.table_name WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'");
    REQUIRE(pg_columns.exit_code == 0);
    for (const auto& line : lines_of(pg_columns.out)) on_pg.insert(line);
    {
        team::Store sqlite(lite.home(), "");
        team::Statement columns(sqlite.db(), R"sql(
            SELECT m.name || '.' || p.name FROM sqlite_master m, pragma_table_info(m.name) p
            WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'
        )sql");
        while (columns.executeStep()) on_sqlite.insert(columns.getColumn(0).getString());
    }
    // Each engine's own bookkeeping: the schema's version (SQLite keeps it in user_version).
    on_pg.erase("team_schema.version");
    std::vector<std::string> only_pg, only_sqlite;
    std::set_difference(on_pg.begin(), on_pg.end(), on_sqlite.begin(), on_sqlite.end(),
                        std::back_inserter(only_pg));
    std::set_difference(on_sqlite.begin(), on_sqlite.end(), on_pg.begin(), on_pg.end(),
                        std::back_inserter(only_sqlite));
    CAPTURE(Json(only_pg).dump(), Json(only_sqlite).dump());
    CHECK(on_pg.size() > 50);
    CHECK(only_pg.empty());
    CHECK(only_sqlite.empty());
}
