// The repositories of state/ on a real store in a temporary home: messages (insert, inbox order,
// marking read once), members as spawn, the pane supervisor and the shutdown rooms write them,
// teams, and shutdown requests.
#include <catch2/catch.hpp>

#include "state/members.hpp"
#include "state/messages.hpp"
#include "state/shutdown_rows.hpp"
#include "state/store.hpp"
#include "state/teams.hpp"
#include "team/teams.hpp"
#include "tests/support/unit_home.hpp"

using namespace team;
using team::test::kStart;

namespace {

struct Home : team::test::TeamStore {
    AgentRecord member(const std::string& name) {
        TeamStore::member(name);
        return record(name);
    }

    Message send(const std::string& from, const AgentRecord& to, const std::string& text,
                 const std::string& type = "message") {
        Message m;
        m.from = from;
        m.to = to.name;
        m.recipient_id = to.id;
        m.type = type;
        m.text = text;
        m.created_at = clock.now();
        return store.write([&] { return insert_message(store, team, m); });
    }

    std::vector<std::int64_t> ids(std::int64_t recipient, const InboxSelection& q) {
        std::vector<std::int64_t> out;
        for (const auto& m : inbox_of(store, team, recipient, q)) out.push_back(m.id);
        return out;
    }
};

}  // namespace

TEST_CASE("messages: an inbox holds its own messages, oldest first", "[repo][messages]") {
    Home h;
    auto alice = h.member("alice");
    auto bob = h.member("bob");
    auto m1 = h.send("lead", alice, "one");
    auto m2 = h.send("lead", bob, "for bob");
    auto m3 = h.send("bob", alice, "two", "note");
    CHECK(m1.id < m2.id);
    CHECK(m2.id < m3.id);
    CHECK(m1.team == "web");

    auto inbox = inbox_of(h.store, h.team, alice.id, {});
    REQUIRE(inbox.size() == 2);
    CHECK(inbox[0].text == "one");
    CHECK(inbox[0].from == "lead");
    CHECK(inbox[0].to == "alice");
    CHECK(inbox[0].data.is_null());
    CHECK(inbox[0].created_at == kStart);
    CHECK_FALSE(inbox[0].read_at);
    CHECK(inbox[1].text == "two");
    CHECK(h.ids(bob.id, {}) == std::vector<std::int64_t>{m2.id});

    CHECK(h.ids(alice.id, {false, std::string("note"), 0, {}}) == std::vector<std::int64_t>{m3.id});
    CHECK(h.ids(alice.id, {false, {}, m1.id, {}}) == std::vector<std::int64_t>{m3.id});
    CHECK(h.ids(alice.id, {false, {}, 0, 1}) == std::vector<std::int64_t>{m1.id});
}

TEST_CASE("messages: data is kept as JSON", "[repo][messages]") {
    Home h;
    auto alice = h.member("alice");
    Message m;
    m.from = "lead";
    m.to = "alice";
    m.recipient_id = alice.id;
    m.data = {{"k", 1}};
    h.store.write([&] { insert_message(h.store, h.team, m); });
    auto inbox = inbox_of(h.store, h.team, alice.id, {});
    REQUIRE(inbox.size() == 1);
    CHECK(inbox[0].data == nlohmann::json{{"k", 1}});
}

TEST_CASE("messages: marked read once, with no duplicates among readers", "[repo][messages]") {
    Home h;
    auto alice = h.member("alice");
    auto m1 = h.send("lead", alice, "one");
    auto m2 = h.send("lead", alice, "two");

    // Two readers select the same unread messages; the first marks them, the second, marking
    // what it selected, does not move their read time.
    auto first = inbox_of(h.store, h.team, alice.id, {true, {}, 0, {}});
    auto second = first;
    REQUIRE(first.size() == 2);
    h.store.write([&] { mark_unread_read(h.store, first, 100); });
    CHECK(first[0].read_at == 100);
    CHECK(first[1].read_at == 100);
    CHECK(h.ids(alice.id, {true, {}, 0, {}}).empty());
    h.store.write([&] { mark_unread_read(h.store, second, 200); });
    for (const auto& m : inbox_of(h.store, h.team, alice.id, {})) CHECK(m.read_at == 100);

    auto m3 = h.send("lead", alice, "three");
    CHECK(h.ids(alice.id, {true, {}, 0, {}}) == std::vector<std::int64_t>{m3.id});
    CHECK(h.ids(alice.id, {}) == std::vector<std::int64_t>{m1.id, m2.id, m3.id});
}

TEST_CASE("messages: ack marks by id, and the address says where a message went",
          "[repo][messages]") {
    Home h;
    auto alice = h.member("alice");
    auto m1 = h.send("lead", alice, "one");
    auto address = message_address(h.store, m1.id);
    REQUIRE(address);
    CHECK(address->team_id == h.team.id);
    CHECK(address->recipient_id == alice.id);
    CHECK(address->recipient == "alice");
    CHECK_FALSE(address->read);
    CHECK_FALSE(message_address(h.store, m1.id + 100));

    h.store.write([&] { mark_read(h.store, {m1.id}, 300); });
    CHECK(message_address(h.store, m1.id)->read);
    CHECK(inbox_of(h.store, h.team, alice.id, {})[0].read_at == 300);
}

TEST_CASE("members: a spawning record, started once, or deleted", "[repo][members]") {
    Home h;
    AgentRecord agent;
    agent.team_id = h.team.id;
    agent.name = "alice";
    agent.role = "tests";
    agent.color = "blue";
    agent.command = nlohmann::json::array({"sleep", "1"});
    agent.cwd = "/";
    agent.env = {"A=1"};
    agent.created_at = kStart;
    CHECK_FALSE(h.store.write([&] { return live_member_exists(h.store, h.team.id, "alice"); }));
    auto id = h.store.write([&] {
        auto id = insert_spawning_agent(h.store, agent, {42, 4242});
        set_agent_log_file(h.store, id, "/tmp/alice.log");
        return id;
    });
    auto stored = load_agent(h.store, id);
    REQUIRE(stored);
    CHECK(stored->status == AgentStatus::spawning);
    CHECK(stored->team == "web");
    CHECK(stored->color == "blue");
    CHECK(stored->command == nlohmann::json::array({"sleep", "1"}));
    CHECK(stored->env == std::vector<std::string>{"A=1"});
    CHECK(stored->spawner_pid == 42);
    CHECK(stored->spawner_start == 4242);
    CHECK(stored->log_file == "/tmp/alice.log");
    CHECK(live_member_exists(h.store, h.team.id, "alice"));
    CHECK(live_member_colors(h.store, h.team.id) == std::vector<std::string>{"blue"});

    AgentStart start{100, 1000, 99, 990, std::string("%3"), std::nullopt};
    CHECK(h.store.write([&] { return record_agent_started(h.store, id, start); }));
    CHECK_FALSE(h.store.write([&] { return record_agent_started(h.store, id, start); }));
    stored = load_agent(h.store, id);
    CHECK(stored->status == AgentStatus::active);
    CHECK(stored->pid == 100);
    CHECK(stored->pid_start == 1000);
    CHECK(stored->supervisor_pid == 99);
    CHECK(stored->pane_id == "%3");

    h.store.write([&] { set_agent_spawn_error(h.store, id, "no such program"); });
    CHECK(load_agent(h.store, id)->spawn_error == "no such program");
    h.store.write([&] { delete_agent(h.store, id); });
    CHECK_FALSE(load_agent(h.store, id));
    CHECK_FALSE(live_member_exists(h.store, h.team.id, "alice"));
}

TEST_CASE("members: live members with their panes, leader included", "[repo][members]") {
    Home h;
    h.member("alice");
    auto live = live_member_panes(h.store, h.team);
    REQUIRE(live.size() == 2);
    CHECK(live[0].name == "lead");
    CHECK(live[1].name == "alice");
    CHECK(live[1].team == "web");
}

TEST_CASE("teams: active until dissolved", "[repo][teams]") {
    Home h;
    CHECK(team_is_active(h.store, h.team.id));
    CHECK_FALSE(team_is_active(h.store, h.team.id + 1));
    h.store.write([&] { h.store.db().exec("UPDATE teams SET status = 'dissolved'"); });
    CHECK_FALSE(team_is_active(h.store, h.team.id));
}

TEST_CASE("teams: found by name (the live one first) or id, listed, named", "[repo][teams]") {
    Home h;
    auto found = find_team(h.store, "web");
    REQUIRE(found);
    CHECK(found->id == h.team.id);
    CHECK(found->leader == "lead");
    CHECK(found->status == TeamState::active);
    CHECK(found->live_agents == 0);
    h.member("alice");
    CHECK(find_team_by_id(h.store, h.team.id)->live_agents == 1);
    CHECK(find_team_by_id(h.store, h.team.id)->total_agents == 1);
    CHECK_FALSE(find_team(h.store, "api"));
    CHECK_FALSE(find_team_by_id(h.store, h.team.id + 1));
    CHECK(team_exists(h.store, h.team.id));
    CHECK_FALSE(team_exists(h.store, h.team.id + 1));

    // A dissolved team and a live one of the same name: the live one is found.
    h.store.write([&] {
        CHECK(active_team_exists(h.store, "web"));
        mark_team_dissolved(h.store, h.team.id, kStart + 5);
        CHECK_FALSE(active_team_exists(h.store, "web"));
    });
    TeamRecord again;
    again.name = "web";
    again.description = "second";
    again.cwd = "/";
    again.leader = "boss";
    again.created_at = kStart + 10;
    auto second = h.store.write([&] { return insert_team(h.store, again); });
    CHECK(find_team(h.store, "web")->id == second);
    CHECK(find_team(h.store, "web")->leader == "boss");
    auto old = find_team_by_id(h.store, h.team.id);
    CHECK(old->status == TeamState::dissolved);
    CHECK(old->dissolved_at == kStart + 5);

    h.store.write([&] {
        TeamRecord api = again;
        api.name = "api";
        insert_team(h.store, api);
    });
    CHECK(team_names(h.store) == std::vector<std::string>{"api", "web"});
    auto live = list_teams(h.store, false);
    REQUIRE(live.size() == 2);
    CHECK(live[0].id == second);
    CHECK(live[1].name == "api");
    CHECK(list_teams(h.store, true).size() == 3);
    CHECK(list_teams(h.store, true)[0].id == h.team.id);

    CHECK(h.store.write([&] { return delete_team(h.store, h.team.id); }));
    CHECK_FALSE(h.store.write([&] { return delete_team(h.store, h.team.id); }));
    CHECK_FALSE(team_exists(h.store, h.team.id));
    CHECK_FALSE(find_leader(h.store, h.team.id));  // its members went with it
}

TEST_CASE("teams: the list counts open tasks", "[repo][teams]") {
    Home h;
    h.store.write([&] {
        auto t = std::to_string(h.team.id);
        h.store.db().exec(
            "INSERT INTO tasks (team_id, id, subject, status, created_at, "
            "updated_at) VALUES (" +
            t + ", 1, 'a', 'pending', 0, 0), (" + t + ", 2, 'b', 'in_progress', 0, 0), (" + t +
            ", 3, 'c', 'completed', 0, 0)");
    });
    auto teams = list_teams(h.store, false);
    REQUIRE(teams.size() == 1);
    CHECK(teams[0].open_tasks == 2);
}

TEST_CASE("members: the leader, callers, live counts and log files", "[repo][members]") {
    Home h;
    auto alice = h.member("alice");
    auto leader = find_leader(h.store, h.team.id);
    REQUIRE(leader);
    CHECK(leader->name == "lead");
    CHECK(leader->is_leader);
    CHECK(leader->team == "web");
    CHECK(live_leader_name(h.store, h.team.id)->id == leader->id);
    CHECK(count_live_agents(h.store, h.team.id) == 1);

    auto caller = find_live_caller(h.store, h.team, "lead");
    REQUIRE(caller);
    CHECK(caller->is_leader);
    CHECK(caller->member_id == leader->id);
    CHECK(caller->id() == "lead@web");
    CHECK_FALSE(find_live_caller(h.store, h.team, "alice")->is_leader);
    CHECK_FALSE(find_live_caller(h.store, h.team, "bob"));

    CHECK(h.store.write(
        [&] { return other_live_member_exists(h.store, h.team.id, "alice", leader->id); }));
    CHECK_FALSE(h.store.write(
        [&] { return other_live_member_exists(h.store, h.team.id, "alice", alice.id); }));

    CHECK(agent_log_files(h.store, h.team.id).empty());
    h.store.write([&] { set_agent_log_file(h.store, alice.id, "/tmp/alice.log"); });
    CHECK(agent_log_files(h.store, h.team.id) == std::vector<std::string>{"/tmp/alice.log"});

    // A second team's leader through insert_leader.
    auto other = h.store.write([&] {
        TeamRecord api;
        api.name = "api";
        api.cwd = "/";
        api.leader = "boss";
        auto id = insert_team(h.store, api);
        insert_leader(h.store, id, "boss", "/", kStart);
        return id;
    });
    auto boss = find_leader(h.store, other);
    REQUIRE(boss);
    CHECK(boss->name == "boss");
    CHECK(boss->role == "leader");
    CHECK(boss->status == AgentStatus::active);
    CHECK(boss->cwd == "/");
    CHECK(count_live_agents(h.store, other) == 0);
}

TEST_CASE("members: shutting down, back to active, terminated once", "[repo][members]") {
    Home h;
    auto alice = h.member("alice");
    h.store.write([&] {
        CHECK(set_agent_shutting_down(h.store, alice.id));
        CHECK_FALSE(set_agent_shutting_down(h.store, alice.id));
    });
    CHECK(load_agent(h.store, alice.id)->status == AgentStatus::shutting_down);
    h.store.write([&] { set_agent_active_again(h.store, alice.id); });
    CHECK(load_agent(h.store, alice.id)->status == AgentStatus::active);

    AgentExit exit{kStart + 7, "exited", 3, std::nullopt};
    CHECK(h.store.write([&] { return mark_agent_terminated(h.store, alice.id, exit); }));
    CHECK_FALSE(h.store.write([&] { return mark_agent_terminated(h.store, alice.id, exit); }));
    auto ended = load_agent(h.store, alice.id);
    CHECK(ended->status == AgentStatus::terminated);
    CHECK(ended->terminated_at == kStart + 7);
    CHECK(ended->exit_reason == "exited");
    CHECK(ended->exit_code == 3);
    CHECK_FALSE(ended->signal);
    CHECK(count_live_agents(h.store, h.team.id) == 0);
    // Not brought back: only a shutting-down agent is.
    h.store.write([&] { set_agent_active_again(h.store, alice.id); });
    CHECK(load_agent(h.store, alice.id)->status == AgentStatus::terminated);
    CHECK_FALSE(h.store.write([&] { return set_agent_shutting_down(h.store, alice.id); }));
}

namespace {

NewShutdownRequest graceful_to(const Home& h, const AgentRecord& agent, EpochMs at) {
    NewShutdownRequest r;
    r.team_id = h.team.id;
    r.agent_id = agent.id;
    r.reason = "done";
    r.requested_by = "lead@web";
    r.requested_at = at;
    r.grace_ms = 2000;
    return r;
}

}  // namespace

TEST_CASE("shutdown rows: a graceful request as stored, found and listed", "[repo][shutdown]") {
    Home h;
    auto alice = h.member("alice");
    auto bob = h.member("bob");
    CHECK_FALSE(newest_request(h.store, alice.id));
    CHECK_FALSE(newest_open_request(h.store, alice.id));
    CHECK(open_requests(h.store, h.team.id).empty());

    auto row = graceful_to(h, alice, kStart + 1);
    row.force_at = kStart + 60'000;
    row.force_at_boot = 60'001;
    row.reassign_to = "bob";
    auto id = h.store.write([&] { return insert_graceful_request(h.store, row); });
    auto r = find_request(h.store, id);
    REQUIRE(r);
    CHECK(r->id == id);
    CHECK(r->team_id == h.team.id);
    CHECK(r->agent_id == alice.id);
    CHECK(r->agent == "alice@web");
    CHECK(r->method == ShutdownMethod::graceful);
    CHECK(r->phase == ShutdownPhase::requested);
    CHECK(r->reason == "done");
    CHECK(r->requested_by == "lead@web");
    CHECK(r->requested_at == kStart + 1);
    CHECK(r->force_at == kStart + 60'000);
    CHECK(r->force_at_boot == 60'001);
    CHECK(r->grace_ms == 2000);
    CHECK(r->reassign_to == "bob");
    CHECK(r->reassigned.empty());
    CHECK_FALSE(r->forced_at);
    CHECK_FALSE(r->closed_at);
    CHECK_FALSE(find_request(h.store, id + 1));

    // Without a deadline, both clocks stay null.
    auto to_bob = h.store.write(
        [&] { return insert_graceful_request(h.store, graceful_to(h, bob, kStart + 2)); });
    auto b = find_request(h.store, to_bob);
    CHECK_FALSE(b->force_at);
    CHECK_FALSE(b->force_at_boot);
    CHECK_FALSE(b->reassign_to);

    auto open = open_requests(h.store, h.team.id);
    REQUIRE(open.size() == 2);
    CHECK(open[0].id == id);
    CHECK(open[1].id == to_bob);
    CHECK(newest_open_request(h.store, alice.id)->id == id);
    CHECK(newest_request(h.store, bob.id)->id == to_bob);
    CHECK(requests_of(h.store, alice.id, false).size() == 1);
}

TEST_CASE("shutdown rows: the answers", "[repo][shutdown]") {
    Home h;
    auto alice = h.member("alice");
    auto first = h.store.write(
        [&] { return insert_graceful_request(h.store, graceful_to(h, alice, kStart)); });
    h.store.write([&] { mark_request_approved(h.store, first, kStart + 1); });
    auto r = find_request(h.store, first);
    CHECK(r->phase == ShutdownPhase::approved);
    CHECK(r->responded_at == kStart + 1);
    h.store.write([&] { mark_request_confirmed(h.store, first, kStart + 2); });
    r = find_request(h.store, first);
    CHECK(r->phase == ShutdownPhase::confirmed);
    CHECK(r->confirmed_at == kStart + 2);
    CHECK(r->responded_at == kStart + 1);  // kept from the approval
    CHECK_FALSE(r->closed_at);

    // A confirmation with no approval before it is the response too.
    auto second = h.store.write(
        [&] { return insert_graceful_request(h.store, graceful_to(h, alice, kStart + 3)); });
    h.store.write([&] { mark_request_confirmed(h.store, second, kStart + 4); });
    CHECK(find_request(h.store, second)->responded_at == kStart + 4);

    // A rejection closes its request.
    auto third = h.store.write(
        [&] { return insert_graceful_request(h.store, graceful_to(h, alice, kStart + 5)); });
    h.store.write([&] { mark_request_rejected(h.store, third, "busy", kStart + 6); });
    r = find_request(h.store, third);
    CHECK(r->phase == ShutdownPhase::rejected);
    CHECK(r->reject_reason == "busy");
    CHECK(r->responded_at == kStart + 6);
    CHECK(r->closed_at == kStart + 6);
    CHECK(newest_request(h.store, alice.id)->id == third);
    CHECK(newest_open_request(h.store, alice.id)->id == second);
    auto open = requests_of(h.store, alice.id, true);
    REQUIRE(open.size() == 2);
    CHECK(open[0].id == first);
    CHECK(open[1].id == second);
    CHECK(requests_of(h.store, alice.id, false).size() == 3);
}

TEST_CASE("shutdown rows: force, to a live agent only", "[repo][shutdown]") {
    Home h;
    auto alice = h.member("alice");
    auto row = graceful_to(h, alice, kStart + 1);
    row.reassign_to = "lead";
    auto id = h.store.write([&] { return insert_force_request(h.store, row); });
    REQUIRE(id);
    auto r = find_request(h.store, *id);
    CHECK(r->method == ShutdownMethod::force);
    CHECK(r->phase == ShutdownPhase::requested);
    CHECK(r->forced_at == kStart + 1);
    CHECK(r->requested_at == kStart + 1);
    CHECK(r->grace_ms == 2000);
    CHECK(r->reassign_to == "lead");
    CHECK_FALSE(r->force_at);

    h.store.write([&] { mark_agent_terminated(h.store, alice.id, {kStart + 2, "exited", 0, {}}); });
    CHECK_FALSE(h.store.write([&] { return insert_force_request(h.store, row); }));
    CHECK(requests_of(h.store, alice.id, false).size() == 1);
}

TEST_CASE("shutdown rows: deadlines brought forward, force begun", "[repo][shutdown]") {
    Home h;
    auto alice = h.member("alice");
    auto bob = h.member("bob");
    auto later = graceful_to(h, alice, kStart);
    later.force_at = kStart + 90'000;
    later.force_at_boot = 90'000;
    auto a = h.store.write([&] { return insert_graceful_request(h.store, later); });
    auto b = h.store.write(
        [&] { return insert_graceful_request(h.store, graceful_to(h, bob, kStart)); });

    // Teardown's deadline (30 s) is sooner than alice's; bob had none.
    h.store.write([&] {
        bring_deadline_forward(h.store, alice.id, kStart + 30'000, 30'000, 500);
        bring_deadline_forward(h.store, bob.id, kStart + 30'000, 30'000, 500);
    });
    auto ra = find_request(h.store, a);
    CHECK(ra->force_at == kStart + 30'000);
    CHECK(ra->force_at_boot == 30'000);
    CHECK(ra->grace_ms == 500);
    auto rb = find_request(h.store, b);
    CHECK(rb->force_at == kStart + 30'000);
    CHECK(rb->force_at_boot == 30'000);
    // A later deadline leaves the sooner one.
    h.store.write([&] { bring_deadline_forward(h.store, alice.id, kStart + 60'000, 60'000, 900); });
    ra = find_request(h.store, a);
    CHECK(ra->force_at == kStart + 30'000);
    CHECK(ra->force_at_boot == 30'000);
    CHECK(ra->grace_ms == 500);

    // Force begins on the newest request, reopened; once only.
    h.store.write([&] { mark_request_rejected(h.store, a, "no", kStart + 1); });
    h.store.write([&] { begin_force_newest(h.store, alice.id, kStart + 2); });
    ra = find_request(h.store, a);
    CHECK(ra->forced_at == kStart + 2);
    CHECK_FALSE(ra->closed_at);
    h.store.write([&] { begin_force_newest(h.store, alice.id, kStart + 3); });
    CHECK(find_request(h.store, a)->forced_at == kStart + 2);

    // A due deadline: force begins unless the agent has ended.
    h.store.write([&] { mark_agent_terminated(h.store, bob.id, {kStart + 4, "exited", 0, {}}); });
    h.store.write([&] { begin_force_due(h.store, b, bob.id, kStart + 5); });
    CHECK_FALSE(find_request(h.store, b)->forced_at);
    auto carol = h.member("carol");
    auto c = h.store.write(
        [&] { return insert_graceful_request(h.store, graceful_to(h, carol, kStart)); });
    h.store.write([&] { begin_force_due(h.store, c, carol.id, kStart + 6); });
    CHECK(find_request(h.store, c)->forced_at == kStart + 6);
}

TEST_CASE("shutdown rows: closed with the tasks handed back", "[repo][shutdown]") {
    Home h;
    auto alice = h.member("alice");
    auto bob = h.member("bob");
    auto carol = h.member("carol");
    auto a = h.store.write(
        [&] { return insert_graceful_request(h.store, graceful_to(h, alice, kStart)); });
    auto b = h.store.write(
        [&] { return insert_graceful_request(h.store, graceful_to(h, bob, kStart)); });
    auto c = h.store.write(
        [&] { return insert_graceful_request(h.store, graceful_to(h, carol, kStart)); });
    h.store.write([&] {
        mark_request_approved(h.store, a, kStart + 1);
        mark_request_confirmed(h.store, b, kStart + 1);
    });

    h.store.write([&] {
        close_requests(h.store, alice.id, false, kStart + 10, {"1", "2"});  // approved
        close_requests(h.store, bob.id, false, kStart + 10, {});            // confirmed
        close_requests(h.store, carol.id, true, kStart + 10, {"3"});        // forced
    });
    auto ra = find_request(h.store, a);
    CHECK(ra->phase == ShutdownPhase::confirmed);
    CHECK(ra->confirmed_at == kStart + 10);
    CHECK(ra->closed_at == kStart + 10);
    CHECK(ra->reassigned == std::vector<std::string>{"1", "2"});
    auto rb = find_request(h.store, b);
    CHECK(rb->phase == ShutdownPhase::confirmed);
    CHECK(rb->confirmed_at == kStart + 1);  // the time of the confirmation is kept
    CHECK(rb->reassigned.empty());
    auto rc = find_request(h.store, c);
    CHECK(rc->phase == ShutdownPhase::force_killed);
    CHECK_FALSE(rc->confirmed_at);
    CHECK(rc->reassigned == std::vector<std::string>{"3"});
    CHECK(open_requests(h.store, h.team.id).empty());

    // An unanswered request keeps its phase; a closed one is not touched again.
    auto d = h.store.write(
        [&] { return insert_graceful_request(h.store, graceful_to(h, alice, kStart + 20)); });
    h.store.write([&] { close_requests(h.store, alice.id, false, kStart + 30, {}); });
    CHECK(find_request(h.store, d)->phase == ShutdownPhase::requested);
    CHECK(find_request(h.store, d)->closed_at == kStart + 30);
    CHECK(find_request(h.store, a)->closed_at == kStart + 10);
}

TEST_CASE(
    "shutdown rows: force begun on a live agent's newest request, never reopening a "
    "terminated agent's",
    "[repo][shutdown]") {
    Home h;
    auto alice = h.member("alice");
    auto bob = h.member("bob");
    auto to_alice = h.store.write(
        [&] { return insert_graceful_request(h.store, graceful_to(h, alice, kStart)); });
    auto to_bob = h.store.write(
        [&] { return insert_graceful_request(h.store, graceful_to(h, bob, kStart)); });

    // Bob ended (confirmed) before a teardown that had listed him forced the agents it listed:
    // his closed request stays closed.
    h.store.write([&] {
        mark_request_confirmed(h.store, to_bob, kStart + 1);
        CHECK(mark_agent_terminated(h.store, bob.id, {kStart + 2, "confirmed", 0, std::nullopt}));
        close_requests(h.store, bob.id, false, kStart + 2, {});
    });
    h.store.write([&] {
        begin_force_newest(h.store, alice.id, kStart + 3);
        begin_force_newest(h.store, bob.id, kStart + 3);
    });
    CHECK(find_request(h.store, to_alice)->forced_at == kStart + 3);
    auto b = find_request(h.store, to_bob);
    CHECK_FALSE(b->forced_at);
    CHECK(b->closed_at == kStart + 2);
    auto open = open_requests(h.store, h.team.id);
    REQUIRE(open.size() == 1);
    CHECK(open[0].id == to_alice);
}
