// An agent's activity from its hooks' reports (team/agent_activity, SPEC 17), in-process over a
// real store: a wait tells the leader once, Claude Code's late Notification of a dialog (6 s
// after it) confirms the wait it follows and never starts one after the person answered, and a
// wait on something else is a new one. The reports are hook_report's of the payloads Claude Code
// sent in tests/agents.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "state/agent_activity_rows.hpp"
#include "team/agent_activity.hpp"
#include "team/hook_reports.hpp"
#include "team/messages.hpp"
#include "tests/support/unit_home.hpp"

using namespace team;
using Json = nlohmann::json;

namespace {

struct Fixture : team::test::TeamStore {
    Messages messages{store, clock};
    Caller w1 = member("w1");
    std::int64_t id = record("w1").id;

    Fixture() { start_agent_activity(store, id, "hooks", clock.now()); }

    bool report(const char* event, const Json& payload) {
        auto r = hook_report("claude", event, payload);
        REQUIRE(r);
        clock.t += 1000;
        return AgentActivity(store, clock).report(id, *r);
    }

    std::string state() { return load_agent_activity(store, id)->state; }

    // The leader's needs_input messages.
    std::vector<Message> asked() {
        InboxQuery q;
        q.type = "needs_input";
        return messages.inbox(team, lead, q).messages;
    }
};

Json permission_request(const std::string& command) {
    return {{"hook_event_name", "PermissionRequest"},
            {"tool_name", "Bash"},
            {"tool_input", {{"command", command}, {"description", "write ran.txt"}}}};
}

const Json kLateNotification = {{"hook_event_name", "Notification"},
                                {"message", "Claude needs your permission"},
                                {"notification_type", "permission_prompt"}};

}  // namespace

TEST_CASE_METHOD(Fixture, "a wait tells the leader once; the late Notification adds nothing",
                 "[activity]") {
    REQUIRE(report("UserPromptSubmit", {{"prompt", "write the file"}}));
    CHECK(state() == "working");
    REQUIRE(report("PermissionRequest", permission_request("echo ran > ran.txt")));
    CHECK(state() == "waiting");
    auto row = load_agent_activity(store, id);
    CHECK(row->waiting_on ==
          Json{{"kind", "permission"}, {"tool", "Bash"}, {"command", "echo ran > ran.txt"}});
    auto once = asked();
    REQUIRE(once.size() == 1);
    CHECK(once[0].from == "w1");
    CHECK(once[0].text.find("Bash `echo ran > ran.txt`") != std::string::npos);
    // 6 s on, the dialog still shown: the same wait, its detail kept, no second message.
    EpochMs since = row->since;
    CHECK(report("Notification", kLateNotification));
    row = load_agent_activity(store, id);
    CHECK(row->state == "waiting");
    CHECK(row->since == since);
    CHECK(row->waiting_on["command"] == "echo ran > ran.txt");
    CHECK(asked().size() == 1);
    // Answered: working, then idle.
    REQUIRE(report("PostToolUse", {{"tool_name", "Bash"}}));
    CHECK(state() == "working");
    REQUIRE(report("Stop", {{"last_assistant_message", "done"}}));
    CHECK(state() == "idle");
    CHECK(asked().size() == 1);
}

TEST_CASE_METHOD(Fixture, "a Notification after the answer starts no wait", "[activity]") {
    REQUIRE(report("PermissionRequest", permission_request("echo ran > ran.txt")));
    REQUIRE(report("PostToolUse", {{"tool_name", "Bash"}}));
    CHECK_FALSE(report("Notification", kLateNotification));
    CHECK(state() == "working");
    CHECK(asked().size() == 1);
}

TEST_CASE_METHOD(Fixture, "a wait on another command is a new one", "[activity]") {
    REQUIRE(report("PermissionRequest", permission_request("echo one")));
    REQUIRE(report("PermissionRequest", permission_request("echo one")));
    CHECK(asked().size() == 1);
    REQUIRE(report("PermissionRequest", permission_request("echo two")));
    CHECK(asked().size() == 2);
}
