// ACP agents (SPEC 15) through the HTTP API of `team serve` (issue 27: the same through MCP and
// HTTP): the real binary, real tmux, the scripted ACP agent of tests/acp (each line of a prompt
// is a step of its script) spawned by the command line, and `team serve` on a port of the test's
// own home (tests/support/http_client.hpp). Tagged [acp] (ctest label `acp`); without
// tests/acp/node_modules each test says so and is skipped.
#include <catch2/catch.hpp>
#include <filesystem>
#include <functional>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/acp_peer.hpp"
#include "tests/support/agents_home.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/mcp_call.hpp"
#include "tests/support/process.hpp"

using team::test::bound;
using team::test::eventually;
using team::test::HttpResponse;
using team::test::Serve;
using Json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

using team::test::acp_peer_ready;

fs::path peer() {
    return team::test::acp_peer();
}

class AcpHttpHome : public team::test::AgentsHome {
  public:
    explicit AcpHttpHome(const std::string& team) : AgentsHome(team) {}

    // `team spawn NAME --acp -- node agent.mjs`, marked for the leftovers check. Its turns queue
    // from the start; the host runs them once the session is up.
    void spawn_acp(const std::string& name) const {
        auto doc =
            ok({"spawn", name, "--acp", "--env", mark.entry(), "--", "node", peer().string()});
        REQUIRE(doc["name"] == name);
    }

    // Everything an answer could change, straight from the database.
    std::string snapshot() const {
        return rows({"SELECT agent_id, policy, state, cancels FROM acp_agents ORDER BY agent_id",
                     "SELECT id, agent_id, state, stop_reason FROM acp_turns ORDER BY id",
                     "SELECT id, state, answer, answered_by FROM acp_permissions ORDER BY id"});
    }

    // The JSON of `team --json ARGS` as the command line prints it.
    Json cli(std::vector<std::string> args) const {
        auto r = json_run(std::move(args));
        INFO("stdout: " << r.out << " stderr: " << r.err);
        return r.json();
    }
};

std::string path(const AcpHttpHome& h, const std::string& rest) {
    return "/api/teams/" + h.team() + rest;
}

// One request's answer, checked for its status (and, for a refusal, SPEC 1.4's shape and code).
Json expect(const HttpResponse& r, int status, const std::string& code = "") {
    INFO("status " << r.status << " body " << r.body.substr(0, 2000));
    REQUIRE(r.status == status);
    auto doc = r.json();
    if (!code.empty()) {
        CHECK(doc["success"] == false);
        CHECK(doc["code"] == code);
    }
    return doc;
}

// The leader's next permission request, waited for by the inbox's own wait (woken by the
// commit): its id.
std::int64_t wait_permission_request(const Serve& s, const AcpHttpHome& h) {
    auto inbox = expect(s.get(path(h,
                                   "/messages?agent=leader&unread=true&mark_read=true&type="
                                   "needs_input&wait=" +
                                       std::to_string(bound(30000)) + "ms")),
                        200);
    REQUIRE(inbox.size() == 1);
    CHECK(inbox[0]["data"]["agent"] == "a1");
    return inbox[0]["data"]["permission"].get<std::int64_t>();
}

// The transcript's records (GET logs) once `done` holds: for what no request of ours waited
// on (a turn not waited for, the words a turn says before it waits). A waited turn's whole
// transcript is stored before its end, so after the wait GET logs has all of it at once.
Json records_when(const Serve& s, const AcpHttpHome& h,
                  const std::function<bool(const Json&)>& done) {
    Json records;
    bool ok = eventually(
        [&] {
            auto r = s.get(path(h, "/agents/a1/logs"));
            if (r.status != 200) return false;
            records = r.json()["records"];
            return done(records);
        },
        bound(20000));
    INFO("records: " << records.dump());
    REQUIRE(ok);
    return records;
}

bool said(const Json& records, const std::string& text) {
    for (const auto& r : records)
        if (r["kind"] == "agent_message" &&
            r["text"].get<std::string>().find(text) != std::string::npos)
            return true;
    return false;
}

Json stop_of(const Json& records, std::int64_t turn) {
    for (const auto& r : records)
        if (r["kind"] == "stop" && r["turn"] == turn) return r;
    return nullptr;
}

// `team mcp` as the leader, one tools/call of agent_prompt with `arguments`, started: its input
// stays open until the answer is out in `out` (an input that closes ends a waiting call).
team::test::Child start_mcp_prompt(const AcpHttpHome& h, const Json& arguments,
                                   const fs::path& out) {
    Json init = team::test::mcp_initialize();
    Json call = team::test::mcp_tool_call("agent_prompt", arguments);
    std::string script =
        R"({ printf '%s\n' "$MCP_INIT" "$MCP_CALL"; )"
        R"(until grep -qs '"id":2' "$MCP_OUT"; do sleep 0.02; done; } | "$TEAM_BIN" mcp > "$MCP_OUT")";
    return team::test::Child({"/bin/sh", "-c", script},
                             h.env.environment(h.extra({{"TEAM_BIN", team::test::team_binary()},
                                                        {"MCP_INIT", init.dump()},
                                                        {"MCP_CALL", call.dump()},
                                                        {"MCP_OUT", out.string()}})));
}

// Its answer: the tools/call's result.
Json finish_mcp_prompt(team::test::Child& mcp, const fs::path& out) {
    auto r = mcp.wait();
    INFO("mcp: exit " << r.exit_code << " stderr " << r.err);
    CHECK(r.exit_code == 0);
    for (const auto& line : team::test::lines_of(team::test::slurp(out))) {
        auto message = Json::parse(line);
        if (message.value("id", Json()) == 2) return message.value("result", Json());
    }
    FAIL("no answer to the call in " << out);
    return nullptr;
}

// The fields of a waited turn's document that each face must give alike.
void check_fields(const Json& doc, const Json& fields) {
    INFO("document: " << doc.dump());
    for (const auto& [key, value] : fields.items()) CHECK(doc.value(key, Json()) == value);
}

}  // namespace

TEST_CASE(
    "acp: the three faces agree on a waited turn's end, a stop reason an answer and a failed "
    "turn or a wait that ran out an error",
    "[acp]") {
    if (!acp_peer_ready()) return;
    AcpHttpHome h("acp-faces");
    h.spawn_acp("a1");
    Serve s(h);
    int mcp_calls = 0;
    auto mcp_out = [&] { return h.env.dir() / ("mcp-" + std::to_string(++mcp_calls)); };

    struct Case {
        std::string text, timeout;
        Json fields;
        int exit, status;  // the command line's exit code, the HTTP status
    };
    const Json answered = {{"success", true}, {"state", "done"}};
    auto with = [](Json fields, const Json& more) {
        fields.update(more);
        return fields;
    };
    const std::vector<Case> cases = {
        {"say x", "60s", with(answered, {{"stopReason", "end_turn"}}), 0, 200},
        {"stop refusal", "60s", with(answered, {{"stopReason", "refusal"}}), 5, 200},
        {"stop max_tokens", "60s", with(answered, {{"stopReason", "max_tokens"}}), 5, 200},
        {"fail scripted failure",
         "60s",
         {{"success", false}, {"state", "failed"}, {"stopReason", nullptr}, {"code", "failed"}},
         1,
         500},
    };
    for (const auto& c : cases) {
        INFO("prompt: " << c.text);
        auto cli = h.json_run({"prompt", "a1", c.text, "--wait", "--timeout", c.timeout});
        INFO("command line: " << cli.exit_code << " " << cli.out << cli.err);
        CHECK(cli.exit_code == c.exit);
        check_fields(cli.json(), c.fields);

        auto out = mcp_out();
        auto mcp = start_mcp_prompt(h, {{"name", "a1"}, {"text", c.text}, {"wait", true}}, out);
        auto tool = finish_mcp_prompt(mcp, out);
        CHECK(tool["isError"] == (c.status != 200));
        check_fields(tool["structuredContent"], c.fields);

        auto http = expect(s.post(path(h, "/agents/a1/prompt"),
                                  {{"text", c.text}, {"wait", true}, {"timeout", c.timeout}}),
                           c.status);
        check_fields(http, c.fields);
    }
    CHECK_THAT(h.rows({"SELECT error FROM acp_turns WHERE state = 'failed'"}),
               Catch::Contains("scripted failure"));

    // Cancelled while each face waits: an answer, `cancelled`, exit 130.
    const Json cancelled = with(answered, {{"stopReason", "cancelled"}});
    auto cancel_when_said = [&](const std::string& words) {
        records_when(s, h, [&](const Json& rs) { return said(rs, words); });
        CHECK(h.cli({"cancel", "a1"})["cancelled"] == true);
    };
    auto waiting = h.env.start(
        {"--json", "prompt", "a1", "say waiting-cli\nwait-cancel", "--wait", "--timeout", "60s"},
        h.extra());
    cancel_when_said("waiting-cli");
    auto cli = waiting.wait();
    CHECK(cli.exit_code == 130);
    check_fields(cli.json(), cancelled);

    auto out = mcp_out();
    auto mcp = start_mcp_prompt(
        h, {{"name", "a1"}, {"text", "say waiting-mcp\nwait-cancel"}, {"wait", true}}, out);
    cancel_when_said("waiting-mcp");
    auto tool = finish_mcp_prompt(mcp, out);
    CHECK(tool["isError"] == false);
    check_fields(tool["structuredContent"], cancelled);

    auto http = std::async(std::launch::async, [&] {
        return s.post(
            path(h, "/agents/a1/prompt"),
            {{"text", "say waiting-http\nwait-cancel"}, {"wait", true}, {"timeout", "60s"}});
    });
    cancel_when_said("waiting-http");
    check_fields(expect(http.get(), 200), cancelled);

    // A wait that runs out is an error on each face: 124, isError, 504.
    const Json late = {{"success", false}, {"code", "timeout"}};
    auto slow = h.json_run({"prompt", "a1", "sleep 1000", "--wait", "--timeout", "100ms"});
    CHECK(slow.exit_code == 124);
    check_fields(slow.json(), late);
    auto out_late = mcp_out();
    auto mcp_late = start_mcp_prompt(
        h, {{"name", "a1"}, {"text", "sleep 1000"}, {"wait", true}, {"timeoutMs", 100}}, out_late);
    tool = finish_mcp_prompt(mcp_late, out_late);
    CHECK(tool["isError"] == true);
    check_fields(tool["structuredContent"], late);
    check_fields(expect(s.post(path(h, "/agents/a1/prompt"),
                               {{"text", "sleep 1000"}, {"wait", true}, {"timeout", "100ms"}}),
                        504, "timeout"),
                 late);

    expect(s.post(path(h, "/agents/a1/kill"), {{"force", true}}), 200);
    s.stop();
    h.check_nothing_left();
}

TEST_CASE(
    "acp over http: a prompt, its permission request listed and answered by option, bad "
    "answers refused, a waiting turn cancelled, the transcript",
    "[acp]") {
    if (!acp_peer_ready()) return;
    AcpHttpHome h("acp-http");
    h.spawn_acp("a1");
    Serve s(h);

    auto turn = expect(
        s.post(path(h, "/agents/a1/prompt"), {{"text", "permission edit\nsay after-allow"}}), 200);
    CHECK(turn["state"] == "queued");
    auto id = wait_permission_request(s, h);
    auto listed = expect(s.get(path(h, "/permissions")), 200);
    REQUIRE(listed.size() == 1);
    CHECK(listed[0]["id"] == id);
    CHECK(listed[0]["state"] == "open");
    CHECK(listed[0]["agentId"] == "a1@acp-http");
    CHECK(listed[0]["options"].size() == 4);
    // The same document as the command line's, for the open ones and for all.
    CHECK(listed == h.cli({"permission", "list"}));
    CHECK(expect(s.get(path(h, "/permissions?all=true")), 200) ==
          h.cli({"permission", "list", "--all"}));

    // Bad answers: each refused with its status and SPEC 1.4's error, nothing changed, and the
    // server still serving.
    const std::string answer = path(h, "/permissions/" + std::to_string(id));
    auto before = h.snapshot();
    auto still_open = [&] {
        auto now = expect(s.get(path(h, "/permissions")), 200);
        INFO("open: " << now.dump() << "\nall: " << h.cli({"permission", "list", "--all"}).dump());
        REQUIRE(now.size() == 1);
        CHECK(now[0]["state"] == "open");
        CHECK(h.snapshot() == before);
    };
    auto refused = [&](const HttpResponse& r, int status, const std::string& code,
                       const std::string& message) {
        INFO("the refusal naming " << message);
        auto doc = expect(r, status, code);
        CHECK_THAT(doc["error"].get<std::string>(), Catch::Contains(message));
        still_open();
    };
    refused(s.post(path(h, "/permissions/999999"), {{"option", "allow"}}), 404, "not_found",
            "permission request 999999 not found");
    refused(s.post(path(h, "/permissions/abc"), {{"option", "allow"}}), 400, "usage",
            "whole number");
    refused(s.post(path(h, "/permissions/0"), {{"option", "allow"}}), 400, "usage", "whole number");
    refused(s.request("POST", answer, R"({"option": "allow",)"), 400, "usage", "not valid JSON");
    refused(s.request("POST", answer, "\xff\xfe garbage \x01"), 400, "usage", "not valid JSON");
    refused(s.request("POST", answer, R"(["allow"])"), 400, "usage", "must be a JSON object");
    refused(s.post(answer, {{"option", "allow"}, {"decision", "deny"}}), 400, "usage",
            "an option or a decision, not both");
    refused(s.post(answer, {{"option", 5}}), 400, "usage", "option");
    refused(s.post(answer, {{"option", "no-such"}}), 400, "usage",
            "no option 'no-such' for request " + std::to_string(id) +
                " (its options: allow, allow-always, reject, reject-always)");
    refused(s.post(answer, {{"decision", "maybe"}}), 400, "usage", "unknown decision 'maybe'");
    refused(s.post(answer, {{"decision", "allow"}, {"always", "yes"}}), 400, "usage", "always");
    refused(s.post(answer, {{"opton", "allow"}}), 400, "usage", "did you mean 'option'");
    refused(s.post(answer, Json::object()), 400, "usage", "name the option to choose");
    // A hostile option as large as a body may be (1 MiB with its JSON): refused, the answer
    // naming it cut short; a whole MiB of option makes the body itself too large (413).
    const std::string piece = "'\"; $(touch pwned) `id` \x1b[31m \xC3\xA9 \xE6\x97\xA5 ";
    auto escaped = Json(piece).dump().size() - 2;  // its size inside the body
    std::string hostile;
    for (auto n = ((1u << 20) - 64) / escaped; n > 0; --n) hostile += piece;
    Json big = {{"option", hostile}};
    REQUIRE(big.dump().size() <= (1u << 20));
    auto large = s.post(answer, big);
    refused(large, 400, "usage", "no option '");
    CHECK(large.body.size() < 4096);
    CHECK_FALSE(fs::exists(h.env.dir() / "pwned"));
    refused(s.post(answer, {{"option", std::string(1u << 20, 'x')}}), 413, "usage", "over 1 MiB");

    // Answered by the agent's option id; the answer reaches the agent and its turn goes on.
    auto answered = expect(s.post(answer, {{"option", "allow"}}), 200);
    CHECK(answered ==
          Json{{"success", true}, {"id", id}, {"agentId", "a1@acp-http"}, {"answer", "allow"}});
    auto twice = expect(s.post(answer, {{"option", "reject"}}), 409, "refused");
    CHECK_THAT(twice["error"].get<std::string>(),
               Catch::Contains("can be answered only while open"));
    auto records = records_when(s, h, [&](const Json& rs) {
        return !stop_of(rs, turn["turn"].get<std::int64_t>()).is_null();
    });
    CHECK(said(records, "permission: allow"));
    CHECK(said(records, "after-allow"));
    CHECK(stop_of(records, turn["turn"].get<std::int64_t>())["stopReason"] == "end_turn");
    CHECK(expect(s.get(path(h, "/permissions")), 200).empty());
    auto all = expect(s.get(path(h, "/permissions?all=true")), 200);
    REQUIRE(all.size() == 1);
    CHECK(all[0]["state"] == "answered");
    CHECK(all[0]["answer"] == "allow");
    // The whole transcript: the same document as `team logs --json`.
    CHECK(expect(s.get(path(h, "/agents/a1/logs")), 200) == h.cli({"logs", "a1"}));

    // A waited turn that says it waits, then waits for session/cancel, on a connection of its
    // own; POST cancel ends it `cancelled`, and the waiting request answers so (a stop reason is
    // a result: 200). The turn is known to be under way once its words are in the transcript.
    int waiting = team::test::connect_to(s.port());
    REQUIRE(waiting >= 0);
    Json wait_body = {{"text", "say waiting-1\nwait-cancel"}, {"wait", true}, {"timeout", "60s"}};
    team::test::send_all(waiting,
                         team::test::request_text(
                             "POST", path(h, "/agents/a1/prompt"),
                             s.auth({{"X-Team-CSRF", "1"}, {"Content-Type", "application/json"}}),
                             wait_body.dump(), s.port()));
    // Another call that may wait, right behind it, is answered meanwhile: it gets a waiting
    // thread of its own (http/pool.cpp once gave both the one idle thread: the logs waited
    // behind the whole turn, here until the client's bound).
    expect(s.get(path(h, "/agents/a1/logs")), 200);
    records_when(s, h, [&](const Json& rs) { return said(rs, "waiting-1"); });
    auto cancelled = expect(s.post(path(h, "/agents/a1/cancel"), Json::object()), 200);
    CHECK(cancelled == Json{{"success", true}, {"agentId", "a1@acp-http"}, {"cancelled", true}});
    auto ended = team::test::parse_response(
        team::test::read_until(waiting, team::test::response_complete, bound(30000)));
    ::close(waiting);
    auto ended_doc = expect(ended, 200);
    auto cancelled_turn = ended_doc["turn"].get<std::int64_t>();
    CHECK(cancelled_turn > turn["turn"].get<std::int64_t>());
    CHECK(ended_doc["state"] == "done");
    CHECK(ended_doc["stopReason"] == "cancelled");
    records = expect(s.get(path(h, "/agents/a1/logs")), 200)["records"];
    CHECK(stop_of(records, cancelled_turn)["stopReason"] == "cancelled");
    CHECK(said(records, "waiting-1"));
    // Nothing runs now: a cancel has nothing to cancel; an unknown agent is 404.
    CHECK(expect(s.post(path(h, "/agents/a1/cancel"), Json::object()), 200)["cancelled"] == false);
    expect(s.post(path(h, "/agents/nobody/cancel"), Json::object()), 404, "not_found");
    // A wait that runs out is 504 with the turn as it stands; the cancel ends that turn too.
    auto late = expect(
        s.post(path(h, "/agents/a1/prompt"),
               {{"text", "say waiting-2\nwait-cancel"}, {"wait", true}, {"timeout", "300ms"}}),
        504, "timeout");
    CHECK_THAT(late["error"].get<std::string>(), Catch::Contains("still"));
    auto late_turn = late["turn"].get<std::int64_t>();
    records_when(s, h, [&](const Json& rs) { return said(rs, "waiting-2"); });
    CHECK(expect(s.post(path(h, "/agents/a1/cancel"), Json::object()), 200)["cancelled"] == true);
    records = records_when(s, h, [&](const Json& rs) { return !stop_of(rs, late_turn).is_null(); });
    CHECK(stop_of(records, late_turn)["stopReason"] == "cancelled");
    // Each of the three turns was recorded started and ended, as the activity log says.
    auto count = [&](const std::string& type) {
        return expect(s.get(path(h, "/activity?type=" + type)), 200).size();
    };
    CHECK(eventually([&] { return count("acp_turn_ended") == 3; }, bound(10000)));
    CHECK(count("acp_turn_started") == 3);

    expect(s.post(path(h, "/agents/a1/kill"), {{"force", true}}), 200);
    s.stop();
    h.check_nothing_left();
}

TEST_CASE(
    "acp over http: a permission request left open survives a restart of team serve and is "
    "answered through the new one",
    "[acp]") {
    if (!acp_peer_ready()) return;
    AcpHttpHome h("acp-restart");
    h.spawn_acp("a1");
    std::optional<Serve> s;
    s.emplace(h);

    auto turn = expect(
        s->post(path(h, "/agents/a1/prompt"), {{"text", "permission execute\nsay after-restart"}}),
        200);
    auto id = wait_permission_request(*s, h);
    auto before = expect(s->get(path(h, "/permissions")), 200);
    REQUIRE(before.size() == 1);
    CHECK(before[0]["id"] == id);
    CHECK(before[0]["state"] == "open");

    // Stopped: the request is a row of the store, not of the server; the agent still waits.
    s->terminate();
    s.reset();
    CHECK_FALSE(fs::exists(h.env.home() / "serve.json"));
    CHECK(h.cli({"permission", "list"}) == before);
    CHECK(h.agent("a1")["acp"]["openPermissions"] == 1);

    // Started again: listed as it was, answered through it, and the answer reaches the agent.
    s.emplace(h);
    CHECK(expect(s->get(path(h, "/permissions")), 200) == before);
    // The one agent carries the ACP session its row of the list does.
    auto one = expect(s->get(path(h, "/agents/a1")), 200);
    CHECK(one["acp"]["openPermissions"] == 1);
    CHECK(one["acp"] == h.agent("a1")["acp"]);
    auto answered = expect(s->post(path(h, "/permissions/" + std::to_string(id)),
                                   {{"decision", "allow"}, {"always", true}}),
                           200);
    CHECK(answered["answer"] == "allow-always");
    auto records = records_when(*s, h, [&](const Json& rs) {
        return !stop_of(rs, turn["turn"].get<std::int64_t>()).is_null();
    });
    CHECK(said(records, "permission: allow-always"));
    CHECK(said(records, "after-restart"));
    auto all = expect(s->get(path(h, "/permissions?all=true")), 200);
    REQUIRE(all.size() == 1);
    CHECK(all[0]["state"] == "answered");
    CHECK(all[0]["answeredBy"] == "leader@acp-restart");

    expect(s->post(path(h, "/agents/a1/kill"), {{"force", true}}), 200);
    s->stop();
    h.check_nothing_left();
}
