// How an agent's end is recorded (finish_agent) and when its pane supervisor stops it
// (agent_stop_plan), SPEC 7 and 6, in-process over a real Store in a temporary directory with a
// fixed clock. Requests are made through the real protocol (kill-agent graceful, approve,
// reject) where it can run without tmux or processes, and inserted as rows where a test needs a
// state the protocol reaches only with a live agent (force began, a deadline past due).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include "state/db.hpp"

#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "proc/process_table.hpp"
#include "state/store.hpp"
#include "tasks/tasks.hpp"
#include "team/agent_end.hpp"
#include "team/agents.hpp"
#include "team/messages.hpp"
#include "team/shutdown.hpp"
#include "team/teams.hpp"
#include "tests/support/fake_tmux.hpp"
#include "tests/support/unit_home.hpp"

using namespace team;
using team::tasks::NewTask;
using team::tasks::TaskList;
using team::test::kStart;
using team::test::TempDir;
using Json = nlohmann::json;
using Steady = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

// The boot clock when a test starts: a machine up for a minute and a half.
constexpr std::int64_t kBootAtStart = 90'000;

// A shutdown request row, as a test needs it.
struct Req {
    std::string method = "graceful";
    std::string phase = "requested";
    std::string reason = "time to go";
    std::string requested_by = "lead@web";
    std::optional<EpochMs> confirmed_at, force_at, forced_at, closed_at;
    std::int64_t grace_ms = 5000;
    std::optional<std::string> reassign_to;
};

// What a request row holds after the fact.
struct Row {
    std::string method, phase;
    std::optional<EpochMs> responded_at, confirmed_at, force_at, forced_at, closed_at;
    std::optional<Json> reassigned;
};

std::optional<EpochMs> optional_ms(const team::Column& c) {
    if (c.isNull()) return std::nullopt;
    return c.getInt64();
}

void bind_optional(team::Statement& s, int index, const std::optional<EpochMs>& v) {
    if (v)
        s.bind(index, *v);
    else
        s.bind(index);
}

// One home with team `web` (leader `lead`), helpers to add members, tasks and requests, and the
// protocol itself over a tmux that must never be called.
struct Fixture : team::test::TeamStore {
    TaskList list{store, clock};
    team::test::FakeTmux tmux;
    Shutdowns shutdowns{store, clock, tmux};

    Fixture() { clock.boot_at_start = kBootAtStart; }
    ~Fixture() { CHECK(tmux.calls().empty()); }

    // The agent's stop plan asks for a stop `due_in` from now (the steady clock, read around the
    // call) with `grace` between SIGTERM and SIGKILL.
    void check_plan(const std::string& name, milliseconds due_in, milliseconds grace) {
        auto before = Steady::now();
        auto plan = agent_stop_plan(store, record(name), clock);
        auto after = Steady::now();
        REQUIRE(plan.at);
        CHECK(*plan.at >= before + due_in);
        CHECK(*plan.at <= after + due_in);
        CHECK(plan.grace == grace);
    }

    // A task owned by `owner`: pending, in_progress (claimed by it) or completed.
    std::string task(const std::string& owner, const std::string& status) {
        auto t = list.add(team, lead, NewTask{"a task of " + owner, "", owner, {}});
        std::string id = std::to_string(t.id);
        if (status != "pending") {
            auto as = teams.resolve_caller(team, owner);
            list.claim(team, as, id);
            if (status == "completed") list.done(team, as, id);
        }
        REQUIRE(str(list.show(team, id).status) == status);
        return id;
    }

    std::int64_t request(const std::string& agent, const Req& r) {
        auto a = record(agent);
        return store.write([&] {
            team::Statement insert(store.db(), R"sql(
                INSERT INTO shutdown_requests (team_id, agent_id, method, phase, reason,
                                               requested_by, requested_at, confirmed_at, force_at,
                                               forced_at, grace_ms, reassign_to, closed_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id
            )sql");
            insert.bind(1, team.id);
            insert.bind(2, a.id);
            insert.bind(3, r.method);
            insert.bind(4, r.phase);
            insert.bind(5, r.reason);
            insert.bind(6, r.requested_by);
            insert.bind(7, clock.now());
            bind_optional(insert, 8, r.confirmed_at);
            bind_optional(insert, 9, r.force_at);
            bind_optional(insert, 10, r.forced_at);
            insert.bind(11, r.grace_ms);
            if (r.reassign_to)
                insert.bind(12, *r.reassign_to);
            else
                insert.bind(12);
            bind_optional(insert, 13, r.closed_at);
            insert.executeStep();
            return insert.getColumn(0).getInt64();
        });
    }

    Row row(std::int64_t id) {
        team::Statement select(store.db(), R"sql(
            SELECT method, phase, responded_at, confirmed_at, force_at, forced_at, closed_at,
                   reassigned
            FROM shutdown_requests WHERE id = ?
        )sql");
        select.bind(1, id);
        REQUIRE(select.executeStep());
        Row r;
        r.method = select.getColumn(0).getString();
        r.phase = select.getColumn(1).getString();
        r.responded_at = optional_ms(select.getColumn(2));
        r.confirmed_at = optional_ms(select.getColumn(3));
        r.force_at = optional_ms(select.getColumn(4));
        r.forced_at = optional_ms(select.getColumn(5));
        r.closed_at = optional_ms(select.getColumn(6));
        if (!select.getColumn(7).isNull())
            r.reassigned = Json::parse(select.getColumn(7).getString());
        return r;
    }

    // A graceful kill-agent, as the leader runs it.
    ShutdownRequest ask(const std::string& agent, const std::string& reason,
                        std::optional<milliseconds> force_after = std::nullopt,
                        std::optional<std::string> reassign_to = std::nullopt) {
        KillOptions o;
        o.name = agent;
        o.reason = reason;
        o.force_after = force_after;
        o.grace = milliseconds(1500);
        o.reassign_to = reassign_to;
        auto result = shutdowns.kill(team, lead, o);
        REQUIRE(result.success);
        REQUIRE(str(result.phase) == "requested");
        auto open = open_requests(store, team.id);
        for (const auto& r : open) {
            if (std::to_string(r.id) == result.request_id) return r;
        }
        FAIL("the request of kill-agent is not open");
        return {};
    }

    // What the supervisor does when its agent's process ended: finish_agent in one transaction.
    bool finish(const AgentRecord& agent, const Termination& natural) {
        return store.write([&] { return finish_agent(store, agent, clock.now(), natural); });
    }

    static Termination exited(const std::string& actor, int code = 0) {
        Termination t;
        t.reason = "exited";
        t.exit_code = code;
        t.actor = actor;
        return t;
    }

    static Termination lost(const std::string& actor) {
        Termination t;
        t.reason = "lost";
        t.actor = actor;
        return t;
    }

    // The activity entries of that type, oldest first: {"actor", "details"}.
    std::vector<Json> activity(const std::string& type) {
        team::Statement select(store.db(),
                               "SELECT actor, details FROM activity WHERE team_id = ? AND type = "
                               "? ORDER BY id");
        select.bind(1, team.id);
        select.bind(2, type);
        std::vector<Json> out;
        while (select.executeStep()) {
            out.push_back({{"actor", select.getColumn(0).getString()},
                           {"details", Json::parse(select.getColumn(1).getString())}});
        }
        return out;
    }

    // The messages of that type in the leader's inbox.
    std::vector<Message> leader_inbox(const std::string& type) {
        InboxQuery q;
        q.type = type;
        return Messages(store, clock).inbox(team, lead, q).messages;
    }

    std::string snapshot() {
        return team::test::rows_as_text(
            store.db(),
            {"SELECT * FROM agents ORDER BY id", "SELECT * FROM tasks ORDER BY id",
             "SELECT * FROM shutdown_requests ORDER BY id", "SELECT * FROM messages ORDER BY id",
             "SELECT id, actor, type, details FROM activity ORDER BY id"});
    }
};

std::string warning_for(const std::string& name) {
    return "Reassigned: previous owner " + name + " terminated";
}

}  // namespace

TEST_CASE("shutdown: finish_agent without a shutdown request records the natural end, once",
          "[shutdown]") {
    Fixture fx;
    fx.member("w");
    auto pending = fx.task("w", "pending");
    auto working = fx.task("w", "in_progress");
    auto done = fx.task("w", "completed");
    auto done_before = tasks::to_json(fx.list.show(fx.team, done));
    auto w = fx.record("w");
    fx.clock.t += 1000;

    CHECK(fx.finish(w, Fixture::exited("w@web", 3)));
    auto after = fx.record("w");
    CHECK(str(after.status) == "terminated");
    CHECK(after.exit_reason == std::optional<std::string>("exited"));
    CHECK(after.exit_code == std::optional<int>(3));
    CHECK(after.terminated_at == std::optional<EpochMs>(kStart + 1000));
    for (const auto& id : {pending, working}) {
        auto t = fx.list.show(fx.team, id);
        CHECK(str(t.status) == "pending");
        CHECK_FALSE(t.owner);
        CHECK_FALSE(t.claimed_at);
        CHECK(t.warning == std::optional<std::string>(warning_for("w")));
    }
    CHECK(tasks::to_json(fx.list.show(fx.team, done)) == done_before);
    auto exits = fx.activity("agent_exited");
    REQUIRE(exits.size() == 1);
    CHECK(exits[0]["actor"] == "w@web");
    CHECK(exits[0]["details"]["exitReason"] == "exited");
    CHECK(exits[0]["details"]["exitCode"] == 3);
    CHECK(exits[0]["details"]["reassignedTasks"] == Json{pending, working});
    CHECK_FALSE(exits[0]["details"].contains("requestId"));
    auto moved = fx.activity("tasks_reassigned");
    REQUIRE(moved.size() == 1);
    CHECK(moved[0]["details"]["tasks"] == Json{pending, working});
    CHECK(fx.leader_inbox("shutdown_confirmed").empty());

    // The second time (a stale record, or another path that noticed the end): nothing more.
    auto before = fx.snapshot();
    fx.clock.t += 1000;
    CHECK_FALSE(fx.finish(w, Fixture::exited("w@web", 0)));
    CHECK_FALSE(fx.finish(after, Fixture::lost("team")));
    CHECK(fx.snapshot() == before);

    // "lost" is kept as it is given.
    fx.member("v");
    CHECK(fx.finish(fx.record("v"), Fixture::lost("team")));
    CHECK(fx.record("v").exit_reason == std::optional<std::string>("lost"));
    CHECK(fx.activity("agent_exited").back()["actor"] == "team");
}

TEST_CASE(
    "shutdown: finish_agent records an end given as the pane supervisor and reconciliation give it",
    "[shutdown]") {
    // Both write the Termination as a braced list whose last member (details) is `{}`: a JSON
    // null, not an empty object. Without a shutdown request nothing adds to the details, and
    // the end must still be recorded.
    Fixture fx;
    fx.member("w");
    fx.member("v");
    auto task = fx.task("w", "in_progress");
    auto w = fx.record("w");
    bool recorded = false;
    CHECK_NOTHROW(recorded = fx.finish(w, {"exited", 0, std::nullopt, w.id_string(), {}, {}}));
    CHECK(recorded);
    CHECK(fx.record("w").exit_reason == std::optional<std::string>("exited"));
    CHECK(str(fx.list.show(fx.team, task).status) == "pending");
    recorded = false;
    CHECK_NOTHROW(
        recorded = fx.finish(fx.record("v"), {"lost", std::nullopt, std::nullopt, "team", {}, {}}));
    CHECK(recorded);
    CHECK(fx.record("v").exit_reason == std::optional<std::string>("lost"));
}

TEST_CASE("shutdown: finish_agent after an approval records a confirmed end and tells the leader",
          "[shutdown]") {
    Fixture fx;
    auto w_caller = fx.member("w");
    auto working = fx.task("w", "in_progress");
    auto done = fx.task("w", "completed");
    auto request = fx.ask("w", "done for today");
    CHECK(str(fx.record("w").status) == "shutting_down");
    fx.clock.t += 500;
    auto approved = fx.shutdowns.approve(fx.team, w_caller, std::nullopt);
    CHECK(str(approved.phase) == "approved");
    CHECK(fx.leader_inbox("shutdown_approved").size() == 1);

    fx.clock.t += 500;
    // The agent simply exits (SPEC 7.1: that is the confirmation too).
    CHECK(fx.finish(fx.record("w"), Fixture::exited("w@web", 0)));
    auto w = fx.record("w");
    CHECK(str(w.status) == "terminated");
    CHECK(w.exit_reason == std::optional<std::string>("confirmed"));
    auto row = fx.row(request.id);
    CHECK(row.phase == "confirmed");
    CHECK(row.confirmed_at == std::optional<EpochMs>(kStart + 1000));
    CHECK(row.closed_at == std::optional<EpochMs>(kStart + 1000));
    CHECK(row.responded_at == std::optional<EpochMs>(kStart + 500));
    CHECK_FALSE(row.forced_at);
    CHECK(row.reassigned == std::optional<Json>(Json{working}));
    CHECK(str(fx.list.show(fx.team, working).status) == "pending");
    CHECK(str(fx.list.show(fx.team, done).status) == "completed");

    auto confirmed = fx.leader_inbox("shutdown_confirmed");
    REQUIRE(confirmed.size() == 1);
    CHECK(confirmed[0].from == "w");
    CHECK(confirmed[0].to == "lead");
    CHECK(confirmed[0].data["requestId"] == std::to_string(request.id));
    CHECK(confirmed[0].data["reason"] == "done for today");
    CHECK(confirmed[0].data["reassignedTasks"] == Json{working});
    auto entries = fx.activity("shutdown_confirmed");
    REQUIRE(entries.size() == 1);
    CHECK(entries[0]["actor"] == "w@web");
    CHECK(entries[0]["details"]["requestId"] == std::to_string(request.id));
    CHECK(entries[0]["details"]["exitReason"] == "confirmed");
    CHECK(fx.activity("agent_exited").empty());
    CHECK(fx.activity("agent_force_killed").empty());
    CHECK(open_requests(fx.store, fx.team.id).empty());

    auto before = fx.snapshot();
    CHECK_FALSE(fx.finish(fx.record("w"), Fixture::exited("w@web")));
    CHECK(fx.snapshot() == before);
}

TEST_CASE("shutdown: finish_agent after `shutdown confirm` keeps the time of the confirmation",
          "[shutdown]") {
    Fixture fx;
    fx.member("w");
    Req request;
    request.phase = "confirmed";
    request.reason = "bye";
    request.confirmed_at = kStart + 10;
    auto id = fx.request("w", request);
    fx.clock.t += 2000;
    CHECK(fx.finish(fx.record("w"), Fixture::exited("w@web")));
    CHECK(fx.record("w").exit_reason == std::optional<std::string>("confirmed"));
    auto row = fx.row(id);
    CHECK(row.phase == "confirmed");
    CHECK(row.confirmed_at == std::optional<EpochMs>(kStart + 10));
    CHECK(row.closed_at == std::optional<EpochMs>(kStart + 2000));
    CHECK(row.reassigned == std::optional<Json>(Json::array()));
    auto confirmed = fx.leader_inbox("shutdown_confirmed");
    REQUIRE(confirmed.size() == 1);
    CHECK(confirmed[0].data["reason"] == "bye");
    CHECK(confirmed[0].data["reassignedTasks"] == Json::array());
}

TEST_CASE("shutdown: finish_agent once force began records force_killed, whatever else was asked",
          "[shutdown]") {
    Fixture fx;
    auto w_caller = fx.member("w");
    auto working = fx.task("w", "in_progress");
    // First a graceful request, approved; then force by the leader.
    auto graceful = fx.ask("w", "please");
    fx.shutdowns.approve(fx.team, w_caller, std::nullopt);
    fx.clock.t += 100;
    Req force;
    force.method = "force";
    force.forced_at = fx.clock.now();
    force.grace_ms = 1000;
    auto forced = fx.request("w", force);
    fx.clock.t += 900;

    // The supervisor saw its command end by SIGKILL.
    auto by_signal = Fixture::exited("w@web");
    by_signal.exit_code.reset();
    by_signal.signal = "SIGKILL";
    CHECK(fx.finish(fx.record("w"), by_signal));
    auto w = fx.record("w");
    CHECK(w.exit_reason == std::optional<std::string>("force_killed"));
    CHECK(w.signal == std::optional<std::string>("SIGKILL"));
    // Every open request is closed, as force_killed, with the tasks handed back.
    for (auto id : {graceful.id, forced}) {
        INFO("request " << id);
        auto row = fx.row(id);
        CHECK(row.phase == "force_killed");
        CHECK(row.closed_at == std::optional<EpochMs>(kStart + 1000));
        CHECK_FALSE(row.confirmed_at);
        CHECK(row.reassigned == std::optional<Json>(Json{working}));
    }
    auto killed = fx.activity("agent_force_killed");
    REQUIRE(killed.size() == 1);
    CHECK(killed[0]["actor"] == "lead@web");  // who asked for it, not the agent
    CHECK(killed[0]["details"]["requestId"] == std::to_string(forced));
    CHECK_FALSE(killed[0]["details"].contains("deadline"));
    CHECK(killed[0]["details"]["reassignedTasks"] == Json{working});
    CHECK(fx.activity("shutdown_confirmed").empty());
    CHECK(fx.activity("agent_exited").empty());
    CHECK(fx.leader_inbox("shutdown_confirmed").empty());
    CHECK(fx.list.show(fx.team, working).owner == std::nullopt);

    auto before = fx.snapshot();
    CHECK_FALSE(fx.finish(w, Fixture::exited("w@web")));
    CHECK(fx.snapshot() == before);
}

TEST_CASE("shutdown: finish_agent of an unanswered request keeps the natural reason and closes it",
          "[shutdown]") {
    Fixture fx;
    auto w_caller = fx.member("w");
    auto pending = fx.task("w", "pending");
    // An older request that was rejected (closed), then a newer one left unanswered.
    auto old = fx.ask("w", "first");
    fx.clock.t += 10;
    fx.shutdowns.reject(fx.team, w_caller, "busy", std::nullopt);
    auto old_before = fx.row(old.id);
    REQUIRE(old_before.phase == "rejected");
    REQUIRE(old_before.closed_at == std::optional<EpochMs>(kStart + 10));
    fx.clock.t += 10;
    auto open = fx.ask("w", "second");
    fx.clock.t += 10;

    CHECK(fx.finish(fx.record("w"), Fixture::exited("w@web", 1)));
    CHECK(fx.record("w").exit_reason == std::optional<std::string>("exited"));
    auto row = fx.row(open.id);
    CHECK(row.phase == "requested");
    CHECK(row.closed_at == std::optional<EpochMs>(kStart + 30));
    CHECK(row.reassigned == std::optional<Json>(Json{pending}));
    // The rejected one is history: untouched.
    auto old_after = fx.row(old.id);
    CHECK(old_after.phase == "rejected");
    CHECK(old_after.closed_at == old_before.closed_at);
    CHECK_FALSE(old_after.reassigned);
    auto exits = fx.activity("agent_exited");
    REQUIRE(exits.size() == 1);
    CHECK(exits[0]["details"]["requestId"] == std::to_string(open.id));
    CHECK(fx.leader_inbox("shutdown_confirmed").empty());
    CHECK(open_requests(fx.store, fx.team.id).empty());
}

TEST_CASE("shutdown: finish_agent hands the tasks to reassign_to only when that member is live",
          "[shutdown]") {
    Fixture fx;
    fx.member("heir");
    fx.member("ghost", "terminated");
    struct Case {
        std::string agent;
        std::optional<std::string> to;
        std::optional<std::string> expected;
    };
    std::vector<Case> cases{{"a1", std::string("heir"), std::string("heir")},
                            {"a2", std::string("ghost"), std::nullopt},
                            {"a3", std::string("nobody"), std::nullopt},
                            {"a4", std::string("a4"), std::nullopt},
                            {"a5", std::string("lead"), std::string("lead")}};
    for (const auto& c : cases) {
        INFO("agent " << c.agent);
        fx.member(c.agent);
        auto working = fx.task(c.agent, "in_progress");
        auto pending = fx.task(c.agent, "pending");
        Req force;
        force.method = "force";
        force.forced_at = fx.clock.now();
        force.reassign_to = c.to;
        fx.request(c.agent, force);
        CHECK(fx.finish(fx.record(c.agent), Fixture::exited(c.agent + "@web")));
        for (const auto& id : {working, pending}) {
            auto t = fx.list.show(fx.team, id);
            CHECK(str(t.status) == "pending");
            CHECK(t.owner == c.expected);
            CHECK_FALSE(t.claimed_at);
            CHECK(t.warning == std::optional<std::string>(warning_for(c.agent)));
        }
        auto moved = fx.activity("tasks_reassigned").back()["details"];
        CHECK(moved["from"] == c.agent + "@web");
        CHECK(moved["tasks"] == Json{working, pending});
        if (c.expected)
            CHECK(moved["to"] == *c.expected);
        else
            CHECK_FALSE(moved.contains("to"));
    }

    // Of two open requests, the decisive one names the heir: force over an approval.
    fx.member("other-heir");
    auto b_caller = fx.member("b");
    auto task = fx.task("b", "in_progress");
    fx.ask("b", "please", std::nullopt, std::string("heir"));
    fx.shutdowns.approve(fx.team, b_caller, std::nullopt);
    Req force;
    force.method = "force";
    force.forced_at = fx.clock.now();
    force.reassign_to = "other-heir";
    fx.request("b", force);
    CHECK(fx.finish(fx.record("b"), Fixture::exited("b@web")));
    CHECK(fx.list.show(fx.team, task).owner == std::optional<std::string>("other-heir"));

    // And an approval's heir counts when nothing was forced.
    auto c_caller = fx.member("c");
    auto c_task = fx.task("c", "in_progress");
    fx.ask("c", "please", std::nullopt, std::string("heir"));
    fx.shutdowns.approve(fx.team, c_caller, std::nullopt);
    CHECK(fx.finish(fx.record("c"), Fixture::exited("c@web")));
    CHECK(fx.record("c").exit_reason == std::optional<std::string>("confirmed"));
    CHECK(fx.list.show(fx.team, c_task).owner == std::optional<std::string>("heir"));
}

TEST_CASE("shutdown: agent_stop_plan: nothing to do without a confirmed, forced or timed request",
          "[shutdown]") {
    Fixture fx;
    fx.member("w");
    CHECK_FALSE(agent_stop_plan(fx.store, fx.record("w"), fx.clock).at);
    // A request without a deadline, one rejected, and history that is closed: still nothing.
    Req rejected;
    rejected.phase = "rejected";
    rejected.closed_at = kStart;
    fx.request("w", rejected);
    Req confirmed;
    confirmed.phase = "confirmed";
    confirmed.confirmed_at = kStart;
    confirmed.closed_at = kStart;
    fx.request("w", confirmed);
    Req forced;
    forced.method = "force";
    forced.phase = "force_killed";
    forced.force_at = kStart - 5;
    forced.forced_at = kStart - 5;
    forced.closed_at = kStart;
    fx.request("w", forced);
    fx.request("w", {});
    auto before = fx.snapshot();
    CHECK_FALSE(agent_stop_plan(fx.store, fx.record("w"), fx.clock).at);
    CHECK(fx.snapshot() == before);  // asking writes nothing
}

TEST_CASE("shutdown: agent_stop_plan: stop now for a confirmed or forced request, with its grace",
          "[shutdown]") {
    Fixture fx;
    fx.member("confirmed");
    fx.member("forced");
    Req confirmed;
    confirmed.phase = "confirmed";
    confirmed.confirmed_at = kStart;
    confirmed.grace_ms = 1234;
    fx.request("confirmed", confirmed);
    Req forced;
    forced.method = "force";
    forced.forced_at = kStart;
    forced.grace_ms = 777;
    fx.request("forced", forced);
    auto before_rows = fx.snapshot();
    for (const auto& [name, grace] :
         std::vector<std::pair<std::string, int>>{{"confirmed", 1234}, {"forced", 777}}) {
        INFO("agent " << name);
        fx.check_plan(name, milliseconds(0), milliseconds(grace));
    }
    CHECK(fx.snapshot() == before_rows);
}

TEST_CASE(
    "shutdown: agent_stop_plan: a confirmation waits for the confirmer's second wake, "
    "kReplyWindow at most",
    "[shutdown]") {
    Fixture fx;
    fx.member("w");
    fx.member("f");
    Req confirmed;
    confirmed.phase = "confirmed";
    confirmed.confirmed_at = kStart;
    confirmed.grace_ms = 1234;
    fx.request("w", confirmed);
    StopMemory memory;
    // The confirm's own wake (inside its write): the supervisor knows, and waits for the answer.
    auto before = Steady::now();
    auto first = agent_stop_plan(fx.store, fx.record("w"), fx.clock, milliseconds(1000), &memory);
    REQUIRE(first.at);
    CHECK(*first.at >= before + kReplyWindow);
    CHECK(*first.at <= Steady::now() + kReplyWindow);
    CHECK(first.grace == milliseconds(1234));
    // Asked again without a wake (its plan come due early, say): the same moment.
    auto again = agent_stop_plan(fx.store, fx.record("w"), fx.clock, {}, &memory);
    REQUIRE(again.at);
    CHECK(*again.at == *first.at);
    // The confirmer's second wake, its answer written: now.
    auto second = agent_stop_plan(fx.store, fx.record("w"), fx.clock, milliseconds(1000), &memory);
    REQUIRE(second.at);
    CHECK(*second.at <= Steady::now());
    CHECK(second.grace == milliseconds(1234));
    // Force began: now, whatever the supervisor saw before.
    Req forced;
    forced.method = "force";
    forced.forced_at = kStart;
    fx.request("f", forced);
    StopMemory fresh;
    auto force = agent_stop_plan(fx.store, fx.record("f"), fx.clock, milliseconds(1000), &fresh);
    REQUIRE(force.at);
    CHECK(*force.at <= Steady::now());
}

TEST_CASE("shutdown: agent_stop_plan: the nearest future deadline, written nowhere until it is due",
          "[shutdown]") {
    Fixture fx;
    fx.member("w");
    Req later;
    later.force_at = kStart + 20'000;
    later.grace_ms = 100;
    Req sooner;
    sooner.force_at = kStart + 5'000;
    sooner.grace_ms = 200;
    fx.request("w", later);
    auto sooner_id = fx.request("w", sooner);
    auto rows = fx.snapshot();

    fx.check_plan("w", milliseconds(5'000), milliseconds(200));
    CHECK(fx.snapshot() == rows);

    // Time passes, not yet to the deadline: it comes nearer.
    fx.clock.t += 4'000;
    fx.check_plan("w", milliseconds(1'000), milliseconds(200));
    CHECK(fx.snapshot() == rows);

    // Due: force begins, recorded first, and the plan is to stop now with that grace.
    fx.clock.t += 1'000;
    fx.check_plan("w", milliseconds(0), milliseconds(200));
    auto row = fx.row(sooner_id);
    CHECK(row.forced_at == std::optional<EpochMs>(kStart + 5'000));
    CHECK_FALSE(row.closed_at);

    // Asked again (the supervisor woken once more): still now, nothing written twice.
    fx.clock.t += 50;
    rows = fx.snapshot();
    auto plan = agent_stop_plan(fx.store, fx.record("w"), fx.clock);
    REQUIRE(plan.at);
    CHECK(*plan.at <= Steady::now());
    CHECK(fx.snapshot() == rows);

    // The end that follows is a force-kill by the one who set the deadline.
    fx.clock.t += 150;
    auto by_signal = Fixture::exited("w@web");
    by_signal.exit_code.reset();
    by_signal.signal = "SIGTERM";
    CHECK(fx.finish(fx.record("w"), by_signal));
    CHECK(fx.record("w").exit_reason == std::optional<std::string>("force_killed"));
    auto killed = fx.activity("agent_force_killed");
    REQUIRE(killed.size() == 1);
    CHECK(killed[0]["actor"] == "lead@web");
    CHECK(killed[0]["details"]["requestId"] == std::to_string(sooner_id));
    CHECK(killed[0]["details"]["deadline"] == iso8601(kStart + 5'000));
    CHECK(fx.row(sooner_id).phase == "force_killed");
}

TEST_CASE("shutdown: agent_stop_plan: a --force-after deadline holds after a rejection",
          "[shutdown]") {
    Fixture fx;
    auto w_caller = fx.member("w");
    auto task = fx.task("w", "in_progress");
    auto request = fx.ask("w", "wrap up", milliseconds(10'000));
    CHECK(request.force_at == std::optional<EpochMs>(kStart + 10'000));
    CHECK(request.grace_ms == 1500);
    fx.clock.t += 1'000;
    auto rejected = fx.shutdowns.reject(fx.team, w_caller, "busy with a task", std::nullopt);
    CHECK(str(rejected.phase) == "rejected");
    CHECK(rejected.closed_at);
    CHECK(str(fx.record("w").status) == "active");

    // Before the deadline: the deadline still stands.
    auto rows = fx.snapshot();
    fx.check_plan("w", milliseconds(9'000), milliseconds(1500));
    CHECK(fx.snapshot() == rows);

    // At the deadline: force begins on the rejected request, which is open again until the end.
    fx.clock.t = kStart + 10'000;
    fx.check_plan("w", milliseconds(0), milliseconds(1500));
    auto row = fx.row(request.id);
    CHECK(row.forced_at == std::optional<EpochMs>(kStart + 10'000));
    CHECK_FALSE(row.closed_at);
    REQUIRE(open_requests(fx.store, fx.team.id).size() == 1);

    fx.clock.t += 200;
    CHECK(fx.finish(fx.record("w"), Fixture::exited("w@web", 0)));
    CHECK(fx.record("w").exit_reason == std::optional<std::string>("force_killed"));
    row = fx.row(request.id);
    CHECK(row.phase == "force_killed");
    CHECK(row.closed_at == std::optional<EpochMs>(kStart + 10'200));
    CHECK(row.reassigned == std::optional<Json>(Json{task}));
    CHECK(fx.leader_inbox("shutdown_confirmed").empty());
}

TEST_CASE(
    "shutdown: agent_stop_plan: a --force-after deadline is kept on the boot clock, whatever "
    "the wall clock does",
    "[shutdown]") {
    Fixture fx;
    fx.member("w");
    auto request = fx.ask("w", "wrap up", milliseconds(10'000));
    CHECK(request.force_at == std::optional<EpochMs>(kStart + 10'000));
    CHECK(request.force_at_boot == std::optional<std::int64_t>(kBootAtStart + 10'000));
    auto rows = fx.snapshot();

    // The wall clock steps an hour forward, then an hour back: the deadline does not move.
    for (EpochMs step : {3'600'000LL, -3'600'000LL}) {
        INFO("the wall clock stepped " << step << " ms");
        fx.clock.step = step;
        fx.check_plan("w", milliseconds(10'000), milliseconds(1500));
        CHECK(fx.snapshot() == rows);
    }

    // Time passes (both clocks), to the deadline: force begins, at the wall clock's time.
    fx.clock.t += 10'000;
    fx.check_plan("w", milliseconds(0), milliseconds(1500));
    CHECK(fx.row(request.id).forced_at == std::optional<EpochMs>(kStart + 10'000 - 3'600'000));
}

// A request made before schema 7 has only the wall-clock deadline, and is armed from it.
TEST_CASE(
    "shutdown: agent_stop_plan: a deadline without its boot-clock time is armed from the "
    "wall clock",
    "[shutdown]") {
    Fixture fx;
    fx.member("w");
    Req old;
    old.force_at = kStart + 3'000;
    old.grace_ms = 300;
    fx.request("w", old);
    fx.check_plan("w", milliseconds(3'000), milliseconds(300));
    fx.clock.step = 1'000;
    fx.check_plan("w", milliseconds(2'000), milliseconds(300));
}

TEST_CASE("shutdown: agent_stop_plan: a deadline past due of an agent already ended writes nothing",
          "[shutdown]") {
    Fixture fx;
    fx.member("w");
    Req timed;
    timed.force_at = kStart + 1'000;
    auto id = fx.request("w", timed);
    auto w = fx.record("w");
    // It ended (its request closed with it) before the deadline.
    CHECK(fx.finish(w, Fixture::exited("w@web")));
    REQUIRE(fx.row(id).closed_at);
    fx.clock.t += 5'000;
    auto rows = fx.snapshot();
    agent_stop_plan(fx.store, w, fx.clock);
    CHECK(fx.snapshot() == rows);
    CHECK_FALSE(fx.row(id).forced_at);
    CHECK(fx.record("w").exit_reason == std::optional<std::string>("exited"));
}

// SPEC 4: a `spawning` record is left alone while the `team spawn` that makes it lives, however
// old it is and whatever the clocks say; once that spawn is gone (a crash) the next look calls
// it lost at once, handing its colour and name back.
TEST_CASE("reconcile: a spawning record lives exactly as long as the spawn that makes it",
          "[shutdown][reconcile]") {
    Fixture fx;
    pid_t gone = ::fork();
    if (gone == 0) {
        ::pause();
        ::_exit(0);
    }
    auto gone_start = proc::start_time_of(gone);
    ::kill(gone, SIGKILL);
    ::waitpid(gone, nullptr, 0);
    REQUIRE(gone_start);
    auto made_by = [&](const std::string& name, pid_t pid, std::uint64_t start) {
        fx.member(name, "spawning");
        fx.store.write([&] {
            team::Statement up(fx.store.db(), R"sql(
                UPDATE agents SET spawner_pid = ?, spawner_start = ?, created_at = ?
                WHERE name = ?
            )sql");
            up.bind(1, static_cast<std::int64_t>(pid));
            up.bind(2, static_cast<std::int64_t>(start));
            up.bind(3, kStart - 3'600'000);  // an hour old
            up.bind(4, name);
            up.exec();
        });
    };
    made_by("underway", ::getpid(), proc::start_time_of(::getpid()).value_or(0));
    made_by("orphan", gone, *gone_start);
    fx.clock.step = 86'400'000;  // the look's wall clock a day ahead

    Agents agents(fx.store, fx.clock, fx.tmux);
    agents.reconcile(fx.team);
    CHECK(str(fx.record("underway").status) == "spawning");
    auto orphan = fx.record("orphan");
    CHECK(str(orphan.status) == "terminated");
    CHECK(orphan.exit_reason == std::optional<std::string>("lost"));
}
