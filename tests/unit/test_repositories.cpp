// The repositories of state/ on a real store in a temporary home: messages (insert, inbox order,
// marking read once), members as spawn and the pane supervisor write them, teams.
#include <catch2/catch.hpp>

#include "state/members.hpp"
#include "state/messages.hpp"
#include "state/store.hpp"
#include "state/teams.hpp"
#include "team/teams.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/process.hpp"

using namespace team;
using team::test::TempDir;

namespace {

constexpr EpochMs kStart = 1'800'000'000'000;

class FixedClock final : public Clock {
  public:
    EpochMs now() const override { return t; }
    std::int64_t boot_ms() const override { return t - kStart; }
    EpochMs t = kStart;
};

struct Home {
    TempDir tmp;
    Store store{tmp.path()};
    FixedClock clock;
    Teams teams{store, clock};
    TeamRecord team = teams.create({"web", "", tmp.path().string(), "lead"});

    AgentRecord member(const std::string& name) {
        store.write(
            [&] { team::test::insert_member(store.db(), team.id, name, "active", clock.now()); });
        auto m = find_member(store, team, name);
        REQUIRE(m);
        return *m;
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

TEST_CASE("messages: ack marks by id; the address says where a message went", "[repo][messages]") {
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

    AgentStart start{100, 1000, 99, 990, std::string("%3")};
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
