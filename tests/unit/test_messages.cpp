// Inboxes (team/messages, SPEC 5) in-process over a real store in a temporary home with a fixed
// clock: who may send what to whom, that a refusal stores nothing, reading with mark-read, a
// waiting read woken by a send from another connection, and ack's all-or-none.
#include <catch2/catch.hpp>
#include <functional>
#include <future>
#include <set>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "team/messages.hpp"
#include "tests/support/unit_home.hpp"

using namespace team;
using namespace std::chrono_literals;

namespace {

struct Fixture : team::test::TeamStore {
    Messages messages{store, clock};
    Caller alice = member("alice");
    Caller bob = member("bob");

    std::vector<Message> send(const Caller& from, const std::string& to, const std::string& text,
                              const std::string& type = "message") {
        SendRequest r;
        r.to = to;
        r.text = text;
        r.type = type;
        return messages.send(team, from, r);
    }

    std::vector<std::int64_t> inbox_ids(const Caller& who, InboxQuery q = {}) {
        std::vector<std::int64_t> ids;
        for (const auto& m : messages.inbox(team, who, q).messages) ids.push_back(m.id);
        return ids;
    }

    // Every message of the team, as ids: what a refusal must leave as it was.
    std::set<std::int64_t> all_ids() {
        std::set<std::int64_t> out;
        for (const auto& name : {"alice", "bob"}) {
            InboxQuery q;
            q.agent = name;
            for (auto id : inbox_ids(lead, q)) out.insert(id);
        }
        return out;
    }
};

ErrorCode code_of(const std::function<void()>& fn) {
    try {
        fn();
    } catch (const Error& e) {
        return e.code();
    }
    FAIL("no error thrown");
    return ErrorCode::failed;
}

}  // namespace

TEST_CASE("a message reaches its recipient's inbox and no one else's", "[messages]") {
    Fixture fx;
    auto sent = fx.send(fx.lead, "alice", "take task 1");
    REQUIRE(sent.size() == 1);
    CHECK(sent[0].from == "lead");
    CHECK(sent[0].to == "alice");
    CHECK(sent[0].created_at == team::test::kStart);
    CHECK(fx.inbox_ids(fx.alice) == std::vector<std::int64_t>{sent[0].id});
    CHECK(fx.inbox_ids(fx.bob).empty());
    // An agent may write to another agent and to the leader.
    fx.send(fx.alice, "bob", "done?");
    fx.send(fx.bob, "lead", "yes");
    CHECK(fx.inbox_ids(fx.bob).size() == 1);
    CHECK(fx.inbox_ids(fx.lead).size() == 1);
}

TEST_CASE("a refused send stores nothing", "[messages]") {
    Fixture fx;
    fx.send(fx.lead, "alice", "first");
    auto before = fx.all_ids();
    fx.member("gone", "terminated");

    CHECK(code_of([&] { fx.send(fx.lead, "carol", "hi"); }) == ErrorCode::not_found);
    CHECK(code_of([&] { fx.send(fx.lead, "gone", "hi"); }) == ErrorCode::refused);
    CHECK(code_of([&] { fx.send(fx.lead, "alice", ""); }) == ErrorCode::usage);
    CHECK(code_of([&] { fx.send(fx.lead, "alice", std::string(kMaxMessageBytes + 1, 'x')); }) ==
          ErrorCode::usage);
    CHECK(code_of([&] { fx.send(fx.lead, "alice", "bad\xff"); }) == ErrorCode::usage);
    CHECK(code_of([&] { fx.send(fx.lead, "alice", "yes", "shutdown_request"); }) ==
          ErrorCode::refused);
    CHECK(code_of([&] { fx.send(fx.lead, "alice@other", "hi"); }) == ErrorCode::usage);
    SendRequest to_all;
    to_all.all = true;
    to_all.text = "everyone";
    CHECK(code_of([&] { fx.messages.send(fx.team, fx.alice, to_all); }) == ErrorCode::refused);
    SendRequest bad_data;
    bad_data.to = "alice";
    bad_data.data = "{not json";
    CHECK(code_of([&] { fx.messages.send(fx.team, fx.lead, bad_data); }) == ErrorCode::usage);

    CHECK(fx.all_ids() == before);
}

TEST_CASE("a send to all from the leader reaches every live member but the sender", "[messages]") {
    Fixture fx;
    fx.member("gone", "terminated");
    SendRequest r;
    r.all = true;
    r.text = "stand-up";
    auto sent = fx.messages.send(fx.team, fx.lead, r);
    std::set<std::string> to;
    for (const auto& m : sent) to.insert(m.to);
    CHECK(to == std::set<std::string>{"alice", "bob"});
}

TEST_CASE("reading with mark-read hands each message to one reader once", "[messages]") {
    Fixture fx;
    for (int i = 0; i < 5; ++i) fx.send(fx.lead, "alice", "m" + std::to_string(i));
    InboxQuery take;
    take.unread = true;
    take.mark_read = true;
    take.limit = 2;
    auto first = fx.inbox_ids(fx.alice, take);
    auto second = fx.inbox_ids(fx.alice, take);
    auto third = fx.inbox_ids(fx.alice, take);
    CHECK(first.size() == 2);
    CHECK(second.size() == 2);
    CHECK(third.size() == 1);
    std::set<std::int64_t> seen(first.begin(), first.end());
    seen.insert(second.begin(), second.end());
    seen.insert(third.begin(), third.end());
    CHECK(seen.size() == 5);
    CHECK(fx.inbox_ids(fx.alice, take).empty());
    // Reading another agent's inbox is the leader's.
    InboxQuery others;
    others.agent = "alice";
    CHECK(code_of([&] { fx.inbox_ids(fx.bob, others); }) == ErrorCode::refused);
    CHECK(fx.inbox_ids(fx.lead, others).size() == 5);
}

TEST_CASE("a waiting read is woken by a send on another connection", "[messages]") {
    Fixture fx;
    InboxQuery wait;
    wait.unread = true;
    wait.wait = 10s;
    auto reader = std::async(std::launch::async, [&] {
        // A connection of its own, as another process has.
        Store store(fx.tmp.path());
        Messages mine(store, fx.clock);
        return mine.inbox(fx.team, fx.alice, wait);
    });
    // The send may come before or after the reader first looks: either way it is seen.
    fx.send(fx.bob, "alice", "wake up");
    REQUIRE(reader.wait_for(10s) == std::future_status::ready);
    auto got = reader.get();
    CHECK_FALSE(got.timed_out);
    REQUIRE(got.messages.size() == 1);
    CHECK(got.messages[0].text == "wake up");

    InboxQuery brief;
    brief.unread = true;
    brief.type = "nothing";
    brief.wait = 30ms;
    auto none = fx.messages.inbox(fx.team, fx.alice, brief);
    CHECK(none.timed_out);
    CHECK(none.messages.empty());
}

TEST_CASE("ack marks all the ids given or none", "[messages]") {
    Fixture fx;
    auto a = fx.send(fx.lead, "alice", "one")[0].id;
    auto b = fx.send(fx.lead, "bob", "two")[0].id;
    // One of them is not alice's: nothing is marked.
    CHECK(code_of([&] { fx.messages.ack(fx.team, fx.alice, {a, b}); }) == ErrorCode::refused);
    CHECK(code_of([&] { fx.messages.ack(fx.team, fx.alice, {a, 9999}); }) == ErrorCode::not_found);
    CHECK(code_of([&] { fx.messages.ack(fx.team, fx.alice, {}); }) == ErrorCode::usage);
    InboxQuery unread;
    unread.unread = true;
    CHECK(fx.inbox_ids(fx.alice, unread) == std::vector<std::int64_t>{a});

    auto first = fx.messages.ack(fx.team, fx.alice, {a, a});
    CHECK(first.acked == std::vector<std::int64_t>{a});
    auto again = fx.messages.ack(fx.team, fx.alice, {a});
    CHECK(again.acked.empty());
    CHECK(again.already_read == std::vector<std::int64_t>{a});
    // The leader may ack anyone's.
    CHECK(fx.messages.ack(fx.team, fx.lead, {b}).acked == std::vector<std::int64_t>{b});
}
