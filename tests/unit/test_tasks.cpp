// The rules of the task list (SPEC 6), in-process over a real Store in a temporary directory, with
// a fixed clock: ids per team, what may be claimed, blocking, what is available, who may change or
// finish a task, and the hand-back of a terminated agent's tasks. Every refusal is also checked to
// change nothing.
#include "state/db.hpp"

#include <catch2/catch.hpp>
#include <functional>
#include <set>

#include "base/error.hpp"
#include "state/store.hpp"
#include "state/task_rows.hpp"
#include "tasks/tasks.hpp"
#include "team/agent_end.hpp"
#include "team/agents.hpp"
#include "team/teams.hpp"
#include "tests/support/fork.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/unit_home.hpp"

using namespace team;
using team::tasks::NewTask;
using team::tasks::Task;
using team::tasks::TaskChange;
using team::tasks::TaskFilter;
using team::tasks::TaskList;
using team::test::kStart;
using team::test::TempDir;

namespace {

// The error code a call throws (fails the test when it throws none, or something else).
ErrorCode code_of(const std::function<void()>& fn) {
    try {
        fn();
    } catch (const Error& e) {
        INFO("error: " << e.what());
        return e.code();
    }
    FAIL("no error thrown");
    return ErrorCode::failed;
}

// The message of the team::Error a call throws.
std::string message_of(const std::function<void()>& fn) {
    try {
        fn();
    } catch (const Error& e) {
        return e.what();
    }
    FAIL("no error thrown");
    return {};
}

// One home with team `web` (leader `lead`) and helpers to add members.
struct Fixture : team::test::TeamStore {
    TaskList list{store, clock};

    Task add(const std::string& subject, std::vector<std::string> blocked_by = {},
             std::optional<std::string> owner = std::nullopt) {
        return list.add(team, lead, NewTask{subject, "", std::move(owner), std::move(blocked_by)});
    }

    Task show(std::int64_t id) { return list.show(team, std::to_string(id)); }

    std::vector<std::int64_t> ids(const TaskFilter& filter) {
        std::vector<std::int64_t> out;
        for (const auto& t : list.list(team, filter)) out.push_back(t.id);
        return out;
    }

    std::vector<std::int64_t> available() { return ids(TaskFilter{{}, {}, true}); }

    // Everything a task command could change, as text: the tasks, their blockers, the activity.
    std::string snapshot() {
        return team::test::rows_as_text(
            store.db(), {"SELECT * FROM tasks ORDER BY team_id, id",
                         "SELECT * FROM task_blockers ORDER BY team_id, task_id, blocker",
                         "SELECT id, type, details FROM activity ORDER BY id",
                         "SELECT id, status FROM agents ORDER BY id"});
    }

    // The details of the activity entries of that type, oldest first.
    std::vector<nlohmann::json> activity(const std::string& type) {
        team::Statement select(
            store.db(), "SELECT details FROM activity WHERE team_id = ? AND type = ? ORDER BY id");
        select.bind(1, team.id);
        select.bind(2, type);
        std::vector<nlohmann::json> out;
        while (select.executeStep()) {
            out.push_back(nlohmann::json::parse(select.getColumn(0).getString()));
        }
        return out;
    }
};

// Checks that fn throws `code` and leaves the store exactly as it was.
#define CHECK_REFUSAL_UNCHANGED(fx, code, ...)          \
    do {                                                \
        auto before_ = (fx).snapshot();                 \
        CHECK(code_of([&] { __VA_ARGS__; }) == (code)); \
        CHECK((fx).snapshot() == before_);              \
    } while (false)

}  // namespace

TEST_CASE("task ids are per team: 1, 2, 3, and a second team starts again at 1", "[tasks]") {
    Fixture fx;
    CHECK(fx.add("one").id == 1);
    CHECK(fx.add("two").id == 2);
    CHECK(fx.add("three").id == 3);
    auto api = fx.make_team("api");
    auto api_lead = fx.teams.resolve_caller(api, std::nullopt);
    auto first = fx.list.add(api, api_lead, NewTask{"api one", "", {}, {}});
    CHECK(first.id == 1);
    CHECK(fx.list.show(api, "1").subject == "api one");
    CHECK(fx.list.show(fx.team, "1").subject == "one");
    CHECK(code_of([&] { fx.list.show(api, "2"); }) == ErrorCode::not_found);
    CHECK(fx.list.add(fx.team, fx.lead, NewTask{"four", "", {}, {}}).id == 4);
    CHECK(fx.list.add(api, api_lead, NewTask{"api two", "", {}, {}}).id == 2);
    // A deleted task keeps its id: the next one does not reuse it.
    fx.list.update(fx.team, fx.lead, "4",
                   TaskChange{std::string("deleted"), {}, false, {}, {}, {}});
    CHECK(fx.add("five").id == 5);
    // Blockers are per team too: api's task 2 is not web's task 2.
    auto blocked = fx.list.add(api, api_lead, NewTask{"api three", "", {}, {"2"}});
    CHECK(blocked.blocked_by == std::vector<std::int64_t>{2});
    CHECK(code_of([&] {
              fx.list.add(api, api_lead, NewTask{"x", "", {}, {"5"}});
          }) == ErrorCode::not_found);
}

TEST_CASE("a new task is pending, and its JSON has every field of SPEC 6 (and SPEC 16's epoch)",
          "[tasks]") {
    Fixture fx;
    fx.member("alice");
    fx.add("first");
    fx.clock.t += 1500;
    auto t = fx.list.add(fx.team, fx.lead,
                         NewTask{"second", "the details", std::string("alice"), {"1", "1"}});
    CHECK(str(t.status) == "pending");
    CHECK(t.owner == std::optional<std::string>("alice"));
    CHECK(t.blocked_by == std::vector<std::int64_t>{1});  // a repeated blocker counts once
    CHECK_FALSE(t.claimed_at);
    CHECK_FALSE(t.warning);
    auto doc = tasks::to_json(t);
    CHECK(doc == nlohmann::json{{"id", "2"},
                                {"subject", "second"},
                                {"description", "the details"},
                                {"status", "pending"},
                                {"owner", "alice"},
                                {"blockedBy", {"1"}},
                                {"claimedAt", nullptr},
                                {"warning", nullptr},
                                {"createdAt", iso8601(kStart + 1500)},
                                {"updatedAt", iso8601(kStart + 1500)},
                                {"epoch", 0}});
    auto plain = tasks::to_json(fx.show(1));
    CHECK(plain["owner"].is_null());
    CHECK(plain["blockedBy"] == nlohmann::json::array());
    CHECK(plain["description"] == "");
    // An owner given as name@team is stored as the name.
    CHECK(fx.add("third", {}, std::string("alice@web")).owner ==
          std::optional<std::string>("alice"));
    CHECK(fx.activity("task_created").size() == 3);
}

TEST_CASE("add refuses bad input with the right code and stores nothing", "[tasks][input]") {
    Fixture fx;
    fx.member("alice");
    fx.member("gone", "terminated");
    fx.add("existing");
    auto add = [&](NewTask request) { fx.list.add(fx.team, fx.lead, request); };
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::usage, add({"", "", {}, {}}));
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::usage, add({std::string(4097, 's'), "", {}, {}}));
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::usage,
                            add({"s", std::string((1 << 20) + 1, 'd'), {}, {}}));
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::usage, add({"bad \xff utf-8", "", {}, {}}));
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::usage, add({"s", "cut \xe6\x97", {}, {}}));
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::not_found, add({"s", "", {}, {"2"}}));
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::not_found, add({"s", "", {}, {"1", "9"}}));
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::not_found, add({"s", "", std::string("nobody"), {}}));
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::refused, add({"s", "", std::string("gone"), {}}));
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::usage, add({"s", "", std::string("bad name"), {}}));
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::usage, add({"s", "", std::string("alice@api"), {}}));
    for (const char* bad : {"x", "0", "-1", "1.5", "", " 1", "+1", "1e2"}) {
        INFO("blocker " << bad);
        CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::usage, add({"s", "", {}, {"1", bad}}));
    }
    CHECK_THAT(message_of([&] { add({"s", "", {}, {"9"}}); }), Catch::Contains("task 9 not found"));
    CHECK_THAT(message_of([&] {
                   add({"s", "", std::string("gone"), {}});
               }),
               Catch::Contains("terminated"));

    // The limits themselves are allowed.
    CHECK(fx.add(std::string(4096, 's')).subject.size() == 4096);
    CHECK(fx.list.add(fx.team, fx.lead, {"s", std::string(1 << 20, 'd'), {}, {}})
              .description.size() == 1 << 20);
    CHECK(fx.ids({}) == std::vector<std::int64_t>{1, 2, 3});
}

TEST_CASE("task ids and statuses are checked", "[tasks][input]") {
    CHECK(tasks::parse_task_id("1") == 1);
    CHECK(tasks::parse_task_id("42") == 42);
    for (const char* bad : {"", "x", "0", "00", "-1", "1.5", " 1", "1 ", "+1", "1e3", "0x10",
                            "9999999999999999999", "1;2", "٣"}) {
        INFO("id " << bad);
        CHECK(code_of([&] { tasks::parse_task_id(bad); }) == ErrorCode::usage);
    }
    for (const char* good : {"pending", "in_progress", "completed", "deleted"}) {
        CHECK_NOTHROW(tasks::check_status(good));
    }
    for (const char* bad : {"", "done", "PENDING", "in-progress", "pending "}) {
        INFO("status " << bad);
        CHECK(code_of([&] { tasks::check_status(bad); }) == ErrorCode::usage);
    }
}

TEST_CASE("claim makes a pending task in_progress and the caller's, once", "[tasks]") {
    Fixture fx;
    auto alice = fx.member("alice");
    auto bob = fx.member("bob");
    fx.add("one");
    fx.clock.t += 250;
    auto t = fx.list.claim(fx.team, alice, std::string("1"));
    CHECK(str(t.status) == "in_progress");
    CHECK(t.owner == std::optional<std::string>("alice"));
    CHECK(t.claimed_at == std::optional<EpochMs>(kStart + 250));
    CHECK(t.updated_at == kStart + 250);
    CHECK(t.created_at == kStart);
    CHECK(tasks::to_json(t)["claimedAt"] == iso8601(kStart + 250));
    CHECK(fx.activity("task_claimed") == std::vector<nlohmann::json>{{{"taskId", "1"}}});

    fx.clock.t += 250;
    // Already in progress: refused with who has it, even for its own owner, and nothing changes.
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::refused, fx.list.claim(fx.team, bob, std::string("1")));
    CHECK_THAT(message_of([&] { fx.list.claim(fx.team, bob, std::string("1")); }),
               Catch::Contains("already claimed by 'alice'"));
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::refused,
                            fx.list.claim(fx.team, alice, std::string("1")));
    CHECK_THAT(message_of([&] { fx.list.claim(fx.team, alice, std::string("1")); }),
               Catch::Contains("already claimed by you"));
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::refused,
                            fx.list.claim(fx.team, fx.lead, std::string("1")));
    CHECK(fx.show(1).claimed_at == std::optional<EpochMs>(kStart + 250));

    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::not_found,
                            fx.list.claim(fx.team, bob, std::string("9")));
    for (const char* bad : {"x", "0", "-1", "1.5"}) {
        INFO("id " << bad);
        CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::usage,
                                fx.list.claim(fx.team, bob, std::string(bad)));
    }
}

TEST_CASE("a completed, deleted or someone else's task cannot be claimed", "[tasks]") {
    Fixture fx;
    auto alice = fx.member("alice");
    auto bob = fx.member("bob");
    fx.add("completed");
    fx.add("deleted");
    fx.add("assigned to bob", {}, std::string("bob"));
    fx.list.done(fx.team, fx.lead, "1");
    fx.list.update(fx.team, fx.lead, "2",
                   TaskChange{std::string("deleted"), {}, false, {}, {}, {}});

    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::refused,
                            fx.list.claim(fx.team, alice, std::string("1")));
    CHECK_THAT(message_of([&] { fx.list.claim(fx.team, alice, std::string("1")); }),
               Catch::Contains("completed"));
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::refused,
                            fx.list.claim(fx.team, alice, std::string("2")));
    CHECK_THAT(message_of([&] { fx.list.claim(fx.team, alice, std::string("2")); }),
               Catch::Contains("deleted"));
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::refused,
                            fx.list.claim(fx.team, alice, std::string("3")));
    CHECK_THAT(message_of([&] { fx.list.claim(fx.team, alice, std::string("3")); }),
               Catch::Contains("assigned to 'bob'"));
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::refused,
                            fx.list.claim(fx.team, fx.lead, std::string("3")));
    // Its assigned owner may claim it.
    auto t = fx.list.claim(fx.team, bob, std::string("3"));
    CHECK(str(t.status) == "in_progress");
    CHECK(t.owner == std::optional<std::string>("bob"));
    CHECK(t.claimed_at == std::optional<EpochMs>(kStart));
}

TEST_CASE("a shutting-down agent cannot claim more work", "[tasks]") {
    Fixture fx;
    auto leaving = fx.member("leaving", "shutting_down");
    fx.add("one");
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::refused,
                            fx.list.claim(fx.team, leaving, std::string("1")));
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::refused, fx.list.claim(fx.team, leaving, std::nullopt));
}

TEST_CASE("a task blocked by an unfinished task cannot be claimed until it is completed",
          "[tasks]") {
    Fixture fx;
    auto alice = fx.member("alice");
    auto bob = fx.member("bob");
    fx.add("blocker");
    fx.add("blocked", {"1"});
    CHECK(fx.show(2).blocked_by == std::vector<std::int64_t>{1});

    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::refused, fx.list.claim(fx.team, bob, std::string("2")));
    CHECK_THAT(message_of([&] { fx.list.claim(fx.team, bob, std::string("2")); }),
               Catch::Contains("blocked by 1 (pending)"));
    fx.list.claim(fx.team, alice, std::string("1"));
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::refused, fx.list.claim(fx.team, bob, std::string("2")));
    CHECK_THAT(message_of([&] { fx.list.claim(fx.team, bob, std::string("2")); }),
               Catch::Contains("blocked by 1 (in_progress)"));
    // The leader cannot claim it either, nor move it to in_progress by update.
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::refused,
                            fx.list.claim(fx.team, fx.lead, std::string("2")));
    CHECK_REFUSAL_UNCHANGED(
        fx, ErrorCode::refused,
        fx.list.update(fx.team, bob, "2",
                       TaskChange{std::string("in_progress"), {}, false, {}, {}, {}}));
    CHECK(fx.available().empty());

    fx.list.done(fx.team, alice, "1");
    CHECK(fx.available() == std::vector<std::int64_t>{2});
    auto t = fx.list.claim(fx.team, bob, std::string("2"));
    CHECK(str(t.status) == "in_progress");
    CHECK(t.owner == std::optional<std::string>("bob"));
    CHECK(t.blocked_by == std::vector<std::int64_t>{1});  // the record of it stays
}

TEST_CASE("a deleted blocker no longer blocks, and every unfinished blocker is named", "[tasks]") {
    Fixture fx;
    auto alice = fx.member("alice");
    fx.add("a");
    fx.add("b");
    fx.add("c");
    fx.add("blocked by three", {"3", "1", "2"});
    CHECK(fx.show(4).blocked_by == std::vector<std::int64_t>{1, 2, 3});
    fx.list.claim(fx.team, alice, std::string("2"));
    CHECK_THAT(message_of([&] { fx.list.claim(fx.team, alice, std::string("4")); }),
               Catch::Contains("blocked by 1 (pending), 2 (in_progress), 3 (pending)"));
    fx.list.update(fx.team, fx.lead, "1",
                   TaskChange{std::string("deleted"), {}, false, {}, {}, {}});
    fx.list.done(fx.team, alice, "2");
    CHECK_THAT(message_of([&] { fx.list.claim(fx.team, alice, std::string("4")); }),
               Catch::Contains("blocked by 3 (pending)") && !Catch::Contains("1 ("));
    fx.list.update(fx.team, fx.lead, "3",
                   TaskChange{std::string("deleted"), {}, false, {}, {}, {}});
    CHECK(str(fx.list.claim(fx.team, alice, std::string("4")).status) == "in_progress");
    // A task may name a deleted or completed task as its blocker from the start.
    auto e = fx.add("after the deleted one", {"1", "2"});
    CHECK(fx.available() == std::vector<std::int64_t>{e.id});
}

TEST_CASE("claim without an id takes the lowest available task, and none available is not found",
          "[tasks]") {
    Fixture fx;
    auto alice = fx.member("alice");
    auto bob = fx.member("bob");
    fx.add("assigned to bob", {}, std::string("bob"));  // 1: not available
    fx.add("free");                                     // 2
    fx.add("blocked by 2", {"2"});                      // 3
    fx.add("free too");                                 // 4
    fx.add("deleted");                                  // 5
    fx.list.update(fx.team, fx.lead, "5",
                   TaskChange{std::string("deleted"), {}, false, {}, {}, {}});
    CHECK(fx.available() == std::vector<std::int64_t>{2, 4});

    CHECK(fx.list.claim(fx.team, alice, std::nullopt).id == 2);
    CHECK(fx.list.claim(fx.team, alice, std::nullopt).id == 4);
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::not_found, fx.list.claim(fx.team, alice, std::nullopt));
    CHECK_THAT(message_of([&] { fx.list.claim(fx.team, alice, std::nullopt); }),
               Catch::Contains("no available task"));
    fx.list.done(fx.team, alice, "2");
    auto t = fx.list.claim(fx.team, bob, std::nullopt);
    CHECK(t.id == 3);
    CHECK(t.owner == std::optional<std::string>("bob"));
    // Task 1 stays bob's to claim by id; claim without id never takes an assigned task.
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::not_found, fx.list.claim(fx.team, bob, std::nullopt));
    CHECK(str(fx.list.claim(fx.team, bob, std::string("1")).status) == "in_progress");
}

TEST_CASE("list is ordered by id, hides deleted tasks, and filters by owner, status, available",
          "[tasks]") {
    Fixture fx;
    auto alice = fx.member("alice");
    fx.member("bob");
    fx.member("gone", "terminated");
    fx.add("1 pending");
    fx.add("2 alice's", {}, std::string("alice"));
    fx.add("3 in progress");
    fx.add("4 blocked by 1", {"1"});
    fx.add("5 completed");
    fx.add("6 deleted");
    fx.add("7 blocked by 5", {"5"});
    fx.list.claim(fx.team, alice, std::string("3"));
    fx.list.done(fx.team, fx.lead, "5");
    fx.list.update(fx.team, fx.lead, "6",
                   TaskChange{std::string("deleted"), {}, false, {}, {}, {}});

    CHECK(fx.ids({}) == std::vector<std::int64_t>{1, 2, 3, 4, 5, 7});
    CHECK(fx.ids({{}, std::string("deleted"), false}) == std::vector<std::int64_t>{6});
    CHECK(fx.ids({{}, std::string("pending"), false}) == std::vector<std::int64_t>{1, 2, 4, 7});
    CHECK(fx.ids({{}, std::string("in_progress"), false}) == std::vector<std::int64_t>{3});
    CHECK(fx.ids({{}, std::string("completed"), false}) == std::vector<std::int64_t>{5});
    CHECK(fx.ids({std::string("alice"), {}, false}) == std::vector<std::int64_t>{2, 3});
    CHECK(fx.ids({std::string("alice"), std::string("pending"), false}) ==
          std::vector<std::int64_t>{2});
    CHECK(fx.ids({std::string("bob"), {}, false}).empty());
    CHECK(fx.ids({std::string("gone"), {}, false}).empty());  // a former member: no tasks
    CHECK(fx.ids({std::string("lead"), {}, false}).empty());
    CHECK(fx.available() == std::vector<std::int64_t>{1, 7});
    CHECK(fx.ids({{}, std::string("completed"), true}).empty());

    // Every listed task carries its blockers.
    auto all = fx.list.list(fx.team, {});
    REQUIRE(all.size() == 6);
    CHECK(all[3].blocked_by == std::vector<std::int64_t>{1});
    CHECK(all[5].blocked_by == std::vector<std::int64_t>{5});
    CHECK(all[0].blocked_by.empty());

    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::usage,
                            fx.list.list(fx.team, {{}, std::string("done"), false}));
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::not_found,
                            fx.list.list(fx.team, {std::string("nobody"), {}, false}));
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::usage,
                            fx.list.list(fx.team, {std::string("bad name"), {}, false}));
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::not_found, fx.list.show(fx.team, "8"));
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::usage, fx.list.show(fx.team, "x"));
    CHECK(str(fx.show(6).status) == "deleted");  // show shows a deleted task
}

TEST_CASE("update: nothing to change, both --owner and --unassign, bad values are usage errors",
          "[tasks][input]") {
    Fixture fx;
    fx.member("alice");
    fx.member("gone", "terminated");
    fx.add("one");
    auto update = [&](const std::string& id, TaskChange change) {
        fx.list.update(fx.team, fx.lead, id, change);
    };
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::usage, update("1", TaskChange{}));
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::usage,
                            update("1", TaskChange{{}, std::string("alice"), true, {}, {}, {}}));
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::usage,
                            update("1", TaskChange{std::string("done"), {}, false, {}, {}, {}}));
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::usage,
                            update("1", TaskChange{{}, {}, false, std::string(""), {}, {}}));
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::usage,
                            update("1", TaskChange{{}, {}, false, std::string(4097, 's'), {}, {}}));
    CHECK_REFUSAL_UNCHANGED(
        fx, ErrorCode::usage,
        update("1", TaskChange{{}, {}, false, {}, std::string((1 << 20) + 1, 'd'), {}}));
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::usage,
                            update("1", TaskChange{{}, {}, false, std::string("\xc3("), {}, {}}));
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::not_found,
                            update("1", TaskChange{{}, std::string("nobody"), false, {}, {}, {}}));
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::refused,
                            update("1", TaskChange{{}, std::string("gone"), false, {}, {}, {}}));
    CHECK_REFUSAL_UNCHANGED(
        fx, ErrorCode::not_found,
        update("2", TaskChange{std::string("completed"), {}, false, {}, {}, {}}));
    for (const char* bad : {"x", "0", "-1", "1.5"}) {
        INFO("id " << bad);
        CHECK_REFUSAL_UNCHANGED(
            fx, ErrorCode::usage,
            update(bad, TaskChange{std::string("completed"), {}, false, {}, {}, {}}));
    }
}

TEST_CASE("update: an owned task only by its owner or the leader, an unowned one by anyone",
          "[tasks]") {
    Fixture fx;
    auto alice = fx.member("alice");
    auto bob = fx.member("bob");
    fx.add("alice's", {}, std::string("alice"));
    fx.add("nobody's");

    auto subject = [](const std::string& s) { return TaskChange{{}, {}, false, s, {}, {}}; };
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::refused,
                            fx.list.update(fx.team, bob, "1", subject("b")));
    CHECK_THAT(message_of([&] { fx.list.update(fx.team, bob, "1", subject("b")); }),
               Catch::Contains("owned by 'alice'"));
    CHECK_REFUSAL_UNCHANGED(
        fx, ErrorCode::refused,
        fx.list.update(fx.team, bob, "1", TaskChange{{}, {}, true, {}, {}, {}}));
    CHECK_REFUSAL_UNCHANGED(
        fx, ErrorCode::refused,
        fx.list.update(fx.team, bob, "1", TaskChange{{}, std::string("bob"), false, {}, {}, {}}));

    fx.clock.t += 10;
    CHECK(fx.list.update(fx.team, alice, "1", subject("by alice")).subject == "by alice");
    auto by_lead = fx.list.update(
        fx.team, fx.lead, "1", TaskChange{{}, {}, false, {}, std::string("details by lead"), {}});
    CHECK(by_lead.description == "details by lead");
    CHECK(by_lead.subject == "by alice");
    CHECK(by_lead.updated_at == kStart + 10);
    CHECK(by_lead.owner == std::optional<std::string>("alice"));

    // Anyone may change an unowned task, and may give it to someone.
    CHECK(fx.list.update(fx.team, bob, "2", subject("by bob")).subject == "by bob");
    auto given =
        fx.list.update(fx.team, bob, "2", TaskChange{{}, std::string("alice"), false, {}, {}, {}});
    CHECK(given.owner == std::optional<std::string>("alice"));
    CHECK(str(given.status) == "pending");
    CHECK_FALSE(given.claimed_at);
    // ... after which it is alice's.
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::refused,
                            fx.list.update(fx.team, bob, "2", subject("x")));
    CHECK(fx.activity("task_updated").size() == 4);
}

TEST_CASE(
    "update: in_progress on an unowned task makes the caller its owner, unassign and pending "
    "clear the claim",
    "[tasks]") {
    Fixture fx;
    auto alice = fx.member("alice");
    auto bob = fx.member("bob");
    fx.add("one");
    fx.add("two");
    fx.add("three", {"2"});

    fx.clock.t += 100;
    auto t = fx.list.update(fx.team, alice, "1",
                            TaskChange{std::string("in_progress"), {}, false, {}, {}, {}});
    CHECK(str(t.status) == "in_progress");
    CHECK(t.owner == std::optional<std::string>("alice"));
    CHECK(t.claimed_at == std::optional<EpochMs>(kStart + 100));
    // Refused while blocked, for the leader too.
    CHECK_REFUSAL_UNCHANGED(
        fx, ErrorCode::refused,
        fx.list.update(fx.team, fx.lead, "3",
                       TaskChange{std::string("in_progress"), {}, false, {}, {}, {}}));

    // --unassign of an in_progress task: pending, unowned, no claim time.
    fx.clock.t += 100;
    t = fx.list.update(fx.team, alice, "1", TaskChange{{}, {}, true, {}, {}, {}});
    CHECK(str(t.status) == "pending");
    CHECK_FALSE(t.owner);
    CHECK_FALSE(t.claimed_at);
    CHECK(t.updated_at == kStart + 200);

    // Back to pending keeps the owner but clears the claim time.
    fx.list.claim(fx.team, bob, std::string("1"));
    CHECK(fx.show(1).claimed_at);
    t = fx.list.update(fx.team, bob, "1",
                       TaskChange{std::string("pending"), {}, false, {}, {}, {}});
    CHECK(str(t.status) == "pending");
    CHECK(t.owner == std::optional<std::string>("bob"));
    CHECK_FALSE(t.claimed_at);
    CHECK(fx.available() == std::vector<std::int64_t>{2});  // 1 is bob's, 3 blocked by 2

    // The leader hands an in-progress task over: it stays in progress, claimed now by the new one.
    fx.list.claim(fx.team, bob, std::string("1"));
    fx.clock.t += 100;
    t = fx.list.update(fx.team, fx.lead, "1",
                       TaskChange{{}, std::string("alice"), false, {}, {}, {}});
    CHECK(t.owner == std::optional<std::string>("alice"));
    CHECK(str(t.status) == "in_progress");
    CHECK(t.claimed_at == std::optional<EpochMs>(kStart + 300));
    // Its owner changing only its subject keeps the claim time.
    fx.clock.t += 100;
    t = fx.list.update(fx.team, alice, "1",
                       TaskChange{{}, {}, false, std::string("renamed"), {}, {}});
    CHECK(t.claimed_at == std::optional<EpochMs>(kStart + 300));
    CHECK(str(t.status) == "in_progress");
}

TEST_CASE("done: by its owner or the leader, once", "[tasks]") {
    Fixture fx;
    auto alice = fx.member("alice");
    auto bob = fx.member("bob");
    fx.add("alice's");
    fx.add("bob's");
    fx.add("nobody's");
    fx.add("deleted");
    fx.list.claim(fx.team, alice, std::string("1"));
    fx.list.claim(fx.team, bob, std::string("2"));
    fx.list.update(fx.team, fx.lead, "4",
                   TaskChange{std::string("deleted"), {}, false, {}, {}, {}});

    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::refused, fx.list.done(fx.team, bob, "1"));
    CHECK_THAT(message_of([&] { fx.list.done(fx.team, bob, "1"); }),
               Catch::Contains("owned by 'alice'"));
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::refused, fx.list.done(fx.team, bob, "3"));
    fx.clock.t += 5;
    auto t = fx.list.done(fx.team, alice, "1");
    CHECK(str(t.status) == "completed");
    CHECK(t.owner == std::optional<std::string>("alice"));
    CHECK(t.updated_at == kStart + 5);
    CHECK(str(fx.list.done(fx.team, fx.lead, "2").status) == "completed");
    CHECK(str(fx.list.done(fx.team, fx.lead, "3").status) == "completed");
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::refused, fx.list.done(fx.team, alice, "1"));
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::refused, fx.list.done(fx.team, fx.lead, "1"));
    CHECK_THAT(message_of([&] { fx.list.done(fx.team, fx.lead, "1"); }),
               Catch::Contains("already completed"));
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::refused, fx.list.done(fx.team, fx.lead, "4"));
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::not_found, fx.list.done(fx.team, fx.lead, "5"));
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::usage, fx.list.done(fx.team, fx.lead, "x"));
    CHECK(fx.activity("task_completed").size() == 3);
}

TEST_CASE("reassign hands a terminated agent's unfinished tasks back to the pool", "[tasks]") {
    Fixture fx;
    auto alice = fx.member("alice");
    auto bob = fx.member("bob");
    fx.add("1 in progress");
    fx.add("2 assigned", {}, std::string("alice"));
    fx.add("3 completed");
    fx.add("4 deleted");
    fx.add("5 bob's");
    fx.add("6 blocked by 5", {"5"}, std::string("alice"));
    fx.list.claim(fx.team, alice, std::string("1"));
    fx.list.claim(fx.team, alice, std::string("3"));
    fx.list.done(fx.team, alice, "3");
    fx.list.claim(fx.team, alice, std::string("4"));
    fx.list.update(fx.team, alice, "4", TaskChange{std::string("deleted"), {}, false, {}, {}, {}});
    fx.list.claim(fx.team, bob, std::string("5"));
    auto completed_before = fx.show(3);
    auto deleted_before = fx.show(4);
    auto bobs_before = fx.show(5);

    fx.clock.t += 1000;
    auto ids = fx.store.write(
        [&] { return hand_back_tasks(fx.store.db(), fx.team.id, "alice", fx.clock.now()); });
    CHECK(ids == std::vector<std::string>{"1", "2", "6"});
    for (std::int64_t id : {1, 2, 6}) {
        auto t = fx.show(id);
        INFO("task " << id);
        CHECK(str(t.status) == "pending");
        CHECK_FALSE(t.owner);
        CHECK_FALSE(t.claimed_at);
        CHECK(t.warning ==
              std::optional<std::string>("Reassigned: previous owner alice terminated"));
        CHECK(t.updated_at == kStart + 1000);
        CHECK(tasks::to_json(t)["warning"] == "Reassigned: previous owner alice terminated");
    }
    auto same = [](const Task& a, const Task& b) { return tasks::to_json(a) == tasks::to_json(b); };
    CHECK(same(fx.show(3), completed_before));
    CHECK(same(fx.show(4), deleted_before));
    CHECK(same(fx.show(5), bobs_before));
    CHECK(fx.show(6).blocked_by == std::vector<std::int64_t>{5});
    CHECK(fx.available() == std::vector<std::int64_t>{1, 2});

    // Nothing left to hand back: a second call changes nothing.
    auto before = fx.snapshot();
    auto again = fx.store.write(
        [&] { return hand_back_tasks(fx.store.db(), fx.team.id, "alice", fx.clock.now()); });
    CHECK(again.empty());
    CHECK(fx.snapshot() == before);
    // A reassigned task can be claimed again, and keeps its warning.
    auto t = fx.list.claim(fx.team, bob, std::string("1"));
    CHECK(t.owner == std::optional<std::string>("bob"));
    CHECK(t.warning);
}

TEST_CASE("reassign with a target gives the tasks to that member, still pending", "[tasks]") {
    Fixture fx;
    auto alice = fx.member("alice");
    fx.member("bob");
    fx.add("in progress");
    fx.add("assigned", {}, std::string("alice"));
    fx.add("completed");
    fx.list.claim(fx.team, alice, std::string("1"));
    fx.list.claim(fx.team, alice, std::string("3"));
    fx.list.done(fx.team, alice, "3");

    auto ids = fx.store.write([&] {
        return hand_back_tasks(fx.store.db(), fx.team.id, "alice", fx.clock.now(),
                               std::string("bob"));
    });
    CHECK(ids == std::vector<std::string>{"1", "2"});
    for (std::int64_t id : {1, 2}) {
        auto t = fx.show(id);
        INFO("task " << id);
        CHECK(str(t.status) == "pending");
        CHECK(t.owner == std::optional<std::string>("bob"));
        CHECK_FALSE(t.claimed_at);
        CHECK(t.warning ==
              std::optional<std::string>("Reassigned: previous owner alice terminated"));
    }
    CHECK(fx.show(3).owner == std::optional<std::string>("alice"));
    CHECK(str(fx.show(3).status) == "completed");
    CHECK(fx.available().empty());
    CHECK(fx.ids({std::string("bob"), {}, false}) == std::vector<std::int64_t>{1, 2});
}

TEST_CASE("reassign touches only the named agent's tasks of that team", "[tasks]") {
    Fixture fx;
    auto alice = fx.member("alice");
    auto api = fx.make_team("api");
    auto api_alice = fx.member("alice", "active", &api);
    fx.add("web one");
    fx.list.claim(fx.team, alice, std::string("1"));
    fx.list.add(api, api_alice, NewTask{"api one", "", {}, {}});
    fx.list.claim(api, api_alice, std::string("1"));

    auto ids = fx.store.write(
        [&] { return hand_back_tasks(fx.store.db(), fx.team.id, "alice", fx.clock.now()); });
    CHECK(ids == std::vector<std::string>{"1"});
    auto other = fx.list.show(api, "1");
    CHECK(str(other.status) == "in_progress");
    CHECK(other.owner == std::optional<std::string>("alice"));
    CHECK_FALSE(other.warning);
}

TEST_CASE("an agent marked terminated has its tasks handed back, in the activity too", "[tasks]") {
    Fixture fx;
    auto alice = fx.member("alice");
    fx.member("bob");
    fx.add("one");
    fx.add("two");
    fx.add("three");
    fx.list.claim(fx.team, alice, std::string("1"));
    fx.list.claim(fx.team, alice, std::string("2"));
    fx.list.claim(fx.team, alice, std::string("3"));
    fx.list.done(fx.team, alice, "2");
    auto record = fx.record("alice");

    fx.clock.t += 10;
    bool marked = fx.store.write([&] {
        return mark_terminated(fx.store, record, fx.clock.now(),
                               {"exited", 0, std::nullopt, "alice@web", {}, {}})
            .has_value();
    });
    CHECK(marked);
    CHECK(str(fx.show(1).status) == "pending");
    CHECK_FALSE(fx.show(1).owner);
    CHECK(fx.show(3).warning ==
          std::optional<std::string>("Reassigned: previous owner alice terminated"));
    CHECK(str(fx.show(2).status) == "completed");
    CHECK(fx.show(2).owner == std::optional<std::string>("alice"));
    // No open task is owned by the terminated agent.
    CHECK(fx.ids({std::string("alice"), std::string("pending"), false}).empty());
    CHECK(fx.ids({std::string("alice"), std::string("in_progress"), false}).empty());

    auto exited = fx.activity("agent_exited");
    REQUIRE(exited.size() == 1);
    CHECK(exited[0]["agentId"] == "alice@web");
    CHECK(exited[0]["reassignedTasks"] == nlohmann::json{"1", "3"});
    auto reassigned = fx.activity("tasks_reassigned");
    REQUIRE(reassigned.size() == 1);
    CHECK(reassigned[0] == nlohmann::json{{"from", "alice@web"}, {"tasks", {"1", "3"}}});

    // A second termination of the same record does nothing.
    auto before = fx.snapshot();
    CHECK_FALSE(fx.store.write([&] {
        return mark_terminated(fx.store, record, fx.clock.now(),
                               {"lost", std::nullopt, std::nullopt, "team", {}, {}})
            .has_value();
    }));
    CHECK(fx.snapshot() == before);

    // An agent without open tasks: reassignedTasks is empty and no tasks_reassigned entry.
    auto bob_record = fx.record("bob");
    fx.store.write([&] {
        mark_terminated(fx.store, bob_record, fx.clock.now(),
                        {"force_killed", std::nullopt, std::string("SIGKILL"), "lead@web", {}, {}});
    });
    CHECK(fx.activity("agent_exited").size() == 1);
    auto forced = fx.activity("agent_force_killed");
    REQUIRE(forced.size() == 1);
    CHECK(forced[0]["reassignedTasks"] == nlohmann::json::array());
    CHECK(fx.activity("tasks_reassigned").size() == 1);

    // A terminated agent can no longer be given a task, and a new agent of the name starts clean.
    CHECK(code_of([&] { fx.add("four", {}, std::string("alice")); }) == ErrorCode::refused);
    auto alice2 = fx.member("alice");
    CHECK(fx.ids({std::string("alice"), std::string("in_progress"), false}).empty());
    CHECK(fx.list.claim(fx.team, alice2, std::nullopt).id == 1);
}

TEST_CASE("task counts by status, open tasks and open tasks per owner", "[tasks]") {
    Fixture fx;
    auto alice = fx.member("alice");
    fx.member("bob");
    fx.add("a");
    fx.add("b", {}, std::string("bob"));
    fx.add("c");
    fx.add("d");
    fx.add("e");
    fx.list.claim(fx.team, alice, std::string("1"));
    fx.list.claim(fx.team, alice, std::string("3"));
    fx.list.done(fx.team, alice, "3");
    fx.list.update(fx.team, fx.lead, "4",
                   TaskChange{std::string("deleted"), {}, false, {}, {}, {}});
    CHECK(count_tasks_by_status(fx.store, fx.team.id) ==
          std::map<std::string, int>{
              {"pending", 2}, {"in_progress", 1}, {"completed", 1}, {"deleted", 1}});
    CHECK(open_tasks_by_owner(fx.store, fx.team.id) ==
          std::map<std::string, int>{{"alice", 1}, {"bob", 1}});
    auto status = fx.teams.status(fx.team);
    CHECK(status.tasks["pending"] == 2);
    CHECK(status.team.open_tasks == 3);
    auto listed = fx.teams.list(false);
    REQUIRE(listed.size() == 1);
    CHECK(listed[0].open_tasks == 3);
    CHECK(to_json(listed[0])["openTasks"] == 3);

    auto api = fx.make_team("api");
    CHECK(count_tasks_by_status(fx.store, api.id) ==
          std::map<std::string, int>{
              {"pending", 0}, {"in_progress", 0}, {"completed", 0}, {"deleted", 0}});
    CHECK(fx.teams.status(api).team.open_tasks == 0);
    CHECK(open_tasks_by_owner(fx.store, api.id).empty());
}

TEST_CASE("8 processes claiming from 40 tasks: each task claimed exactly once",
          "[tasks][concurrency]") {
    Fixture fx;
    constexpr int kProcesses = 8, kTasks = 40;
    for (int i = 0; i < kProcesses; ++i) fx.member("w" + std::to_string(i));
    for (int i = 0; i < kTasks; ++i) fx.add("task " + std::to_string(i + 1));
    auto codes = team::test::run_in_children(kProcesses, [&](int i) {
        Store store(fx.tmp.path());
        SystemClock clock;
        Teams teams(store, clock);
        TaskList list(store, clock);
        auto team = teams.find("web");
        auto caller = teams.resolve_caller(team, "w" + std::to_string(i));
        for (;;) {
            try {
                list.claim(team, caller, std::nullopt);
            } catch (const Error& e) {
                return e.code() == ErrorCode::not_found ? 0 : 10 + static_cast<int>(e.code());
            }
        }
    });
    for (int code : codes) CHECK(code == 0);
    auto all = fx.list.list(fx.team, {});
    REQUIRE(all.size() == kTasks);
    for (const auto& t : all) {
        INFO("task " << t.id);
        CHECK(str(t.status) == "in_progress");
        CHECK(t.owner);
        CHECK(t.claimed_at);
    }
    auto claims = fx.activity("task_claimed");
    CHECK(claims.size() == kTasks);
    std::set<std::string> claimed;
    for (const auto& c : claims) claimed.insert(c["taskId"].get<std::string>());
    CHECK(claimed.size() == kTasks);
}

TEST_CASE("a caller terminated after it was looked up cannot take a task", "[tasks]") {
    // The caller is resolved before the write transaction; if it is terminated in between (its
    // tasks handed back), the claim must not give it a task again: no task may be left owned by a
    // terminated agent.
    Fixture fx;
    auto alice = fx.member("alice");
    fx.add("one");
    fx.add("two");
    auto record = fx.record("alice");
    fx.store.write([&] {
        mark_terminated(fx.store, record, fx.clock.now(),
                        {"force_killed", std::nullopt, std::string("SIGKILL"), "lead@web", {}, {}});
    });
    auto before = fx.snapshot();
    CHECK_THROWS_AS(fx.list.claim(fx.team, alice, std::string("1")), Error);
    CHECK_THROWS_AS(fx.list.claim(fx.team, alice, std::nullopt), Error);
    CHECK_THROWS_AS(fx.list.update(fx.team, alice, "2",
                                   TaskChange{std::string("in_progress"), {}, false, {}, {}, {}}),
                    Error);
    CHECK(fx.snapshot() == before);
    CHECK(fx.ids({std::string("alice"), {}, false}).empty());
}

TEST_CASE("completing through update follows the rule of done, and texts may not hold NUL",
          "[tasks]") {
    Fixture fx;
    auto alice = fx.member("alice");
    auto bob = fx.member("bob");
    fx.add("unowned");
    fx.add("alice's");
    fx.list.claim(fx.team, alice, std::string("2"));
    TaskChange complete{std::string("completed"), {}, false, {}, {}, {}};
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::refused, fx.list.update(fx.team, bob, "1", complete));
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::refused, fx.list.update(fx.team, bob, "2", complete));
    CHECK(str(fx.list.update(fx.team, alice, "2", complete).status) == "completed");
    CHECK(str(fx.list.update(fx.team, fx.lead, "1", complete).status) == "completed");

    NewTask nul;
    nul.subject = std::string("a\0b", 3);
    CHECK_REFUSAL_UNCHANGED(fx, ErrorCode::usage, fx.list.add(fx.team, fx.lead, nul));
}

TEST_CASE("list --owner takes name@team like add and update do", "[tasks]") {
    Fixture fx;
    auto alice = fx.member("alice");
    fx.add("one");
    fx.list.claim(fx.team, alice, std::string("1"));
    TaskFilter filter;
    filter.owner = "alice@web";
    CHECK(fx.list.list(fx.team, filter).size() == 1);
    filter.owner = "alice@other";
    CHECK(code_of([&] { fx.list.list(fx.team, filter); }) == ErrorCode::usage);
}

// task_counts is kept by triggers; it must always equal a count of the tasks themselves.
TEST_CASE("the kept task counts always equal the tasks, through every kind of change", "[tasks]") {
    Fixture fx;
    auto alice = fx.member("alice");
    auto check = [&] {
        std::map<std::string, int> real{
            {"pending", 0}, {"in_progress", 0}, {"completed", 0}, {"deleted", 0}};
        team::Statement select(fx.store.db(),
                               "SELECT status, count(*) FROM tasks WHERE team_id = ? GROUP BY "
                               "status");
        select.bind(1, fx.team.id);
        while (select.executeStep()) {
            real[select.getColumn(0).getString()] = select.getColumn(1).getInt();
        }
        CHECK(team::count_tasks_by_status(fx.store, fx.team.id) == real);
        // The open count as status and list show it (what replaced tasks::count_open).
        CHECK(fx.teams.status(fx.team).team.open_tasks == real["pending"] + real["in_progress"]);
        for (const auto& listed : fx.teams.list(false)) {
            if (listed.id == fx.team.id)
                CHECK(listed.open_tasks == real["pending"] + real["in_progress"]);
        }
    };
    check();
    for (int i = 0; i < 6; ++i) fx.add("t" + std::to_string(i));
    check();
    fx.list.claim(fx.team, alice, std::string("1"));
    fx.list.claim(fx.team, alice, std::string("2"));
    fx.list.done(fx.team, alice, "2");
    fx.list.update(fx.team, fx.lead, "3",
                   TaskChange{std::string("deleted"), {}, false, {}, {}, {}});
    fx.list.update(fx.team, fx.lead, "4",
                   TaskChange{{}, {}, false, std::string("renamed"), {}, {}});
    check();
    fx.store.write([&] {
        mark_terminated(fx.store, fx.record("alice"), fx.clock.now(),
                        {"exited", 0, std::nullopt, "alice@web", {}, {}});
    });
    check();
    auto other = fx.make_team("other");
    fx.list.add(other, fx.teams.resolve_caller(other, std::nullopt), NewTask{"x", "", {}, {}});
    fx.teams.remove(other, fx.teams.resolve_caller(other, std::nullopt));
    CHECK(team::test::exec_and_get(
              fx.store.db(),
              "SELECT count(*) FROM task_counts WHERE team_id = " + std::to_string(other.id))
              .getInt() == 0);
    check();
}
