// The MCP server's protocol layer (mcp/, SPEC 12), in-process and in milliseconds: the framing of
// JSON-RPC lines and its error codes, initialize's negotiation, the tools and their schemas as
// generated from the operations table, the mapping of SPEC 12's input shapes onto operations,
// and a call answered as a result. The server over real stdio with the official client is proven
// by tests/mcp.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>

#include "jsonrpc/codec.hpp"
#include "mcp/channel.hpp"
#include "mcp/schema.hpp"
#include "mcp/server.hpp"
#include "mcp/tools.hpp"
#include "tests/support/process.hpp"

using namespace team;
using namespace team::mcp;
using namespace team::jsonrpc;
using Json = nlohmann::json;

namespace {

// A server on a temporary home whose replies are collected.
struct Harness {
    team::test::TempDir dir;
    std::mutex mutex;
    std::vector<std::string> out;  // written from the calls' threads: checked on the test's
    Server server{ServerOptions{.identity = {dir.path().string(), std::nullopt, std::nullopt}},
                  [this](const std::string& line) {
                      std::lock_guard lock(mutex);
                      out.push_back(line);
                  }};

    // Sends a line and returns the replies written once every call has ended.
    std::vector<Json> send(const std::string& line) {
        {
            std::lock_guard lock(mutex);
            out.clear();
        }
        server.handle_line(line);
        for (int i = 0; i < 2500 && server.running() > 0; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        std::lock_guard lock(mutex);
        std::vector<Json> replies;
        for (const auto& l : out) {
            REQUIRE(!l.empty());
            REQUIRE(l.find('\n') == l.size() - 1);  // one line each, whole
            replies.push_back(Json::parse(l));
        }
        return replies;
    }
    Json request(const std::string& method, const Json& params, int id = 1) {
        auto replies = send(
            Json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}}.dump());
        REQUIRE(replies.size() == 1);
        CHECK(replies[0]["id"] == id);
        return replies[0];
    }
};

const Json& property(const Tool& t, const std::string& name) {
    return t.input_schema.at("properties").at(name);
}

std::set<std::string> properties(const Tool& t) {
    std::set<std::string> out;
    for (const auto& [k, _] : t.input_schema.at("properties").items()) out.insert(k);
    return out;
}

}  // namespace

TEST_CASE("mcp: a line that is not JSON is -32700 with a null id", "[mcp]") {
    auto r = parse_line("{\"jsonrpc\": \"2.0\", ");
    auto* refusal = std::get_if<Refusal>(&r);
    REQUIRE(refusal);
    CHECK(refusal->response["error"]["code"] == -32700);
    CHECK(refusal->response["id"].is_null());
    CHECK(refusal->response["jsonrpc"] == "2.0");
}

TEST_CASE("mcp: JSON that is not a request is -32600, with its id when it has one", "[mcp]") {
    for (const char* line : {R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])", "42", "\"x\"",
                             R"({"id":7,"method":"ping"})", R"({"jsonrpc":"1.0","id":7})",
                             R"({"jsonrpc":"2.0","id":7,"method":3})",
                             R"({"jsonrpc":"2.0","id":7,"method":"ping","params":[1]})",
                             R"({"jsonrpc":"2.0","id":{"a":1},"method":"ping"})"}) {
        INFO(line);
        auto r = parse_line(line);
        auto* refusal = std::get_if<Refusal>(&r);
        REQUIRE(refusal);
        CHECK(refusal->response["error"]["code"] == -32600);
    }
    auto r = parse_line(R"({"id":7,"method":"ping"})");
    CHECK(std::get<Refusal>(r).response["id"] == 7);
}

TEST_CASE("mcp: requests, notifications and replies are told apart", "[mcp]") {
    auto request = parse_line(R"({"jsonrpc":"2.0","id":"a","method":"tools/list"})");
    REQUIRE(std::holds_alternative<jsonrpc::Message>(request));
    CHECK(std::get<jsonrpc::Message>(request).is_request());
    CHECK(*std::get<jsonrpc::Message>(request).id == "a");
    auto note = parse_line(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
    REQUIRE(std::holds_alternative<jsonrpc::Message>(note));
    CHECK_FALSE(std::get<jsonrpc::Message>(note).is_request());
    CHECK(std::holds_alternative<Reply>(parse_line(R"({"jsonrpc":"2.0","id":1,"result":{}})")));
}

TEST_CASE("mcp: a frame is one line, whatever the text holds", "[mcp]") {
    auto line = frame(Json{{"text", "a\nb\r\n\xff"}});
    CHECK(line.back() == '\n');
    CHECK(line.find('\n') == line.size() - 1);
    CHECK_NOTHROW(Json::parse(line));
}

TEST_CASE("mcp: initialize answers the revision asked when spoken, else the newest", "[mcp]") {
    CHECK(initialize_result({{"protocolVersion", "2025-06-18"}}, "1", "")["protocolVersion"] ==
          "2025-06-18");
    CHECK(initialize_result({{"protocolVersion", "2025-11-25"}}, "1", "")["protocolVersion"] ==
          "2025-11-25");
    CHECK(initialize_result({{"protocolVersion", "2099-01-01"}}, "1", "")["protocolVersion"] ==
          "2025-11-25");
    auto r = initialize_result(Json::object(), "1", "");
    CHECK(r["protocolVersion"] == "2025-11-25");
    CHECK(r["capabilities"].contains("tools"));
    CHECK(r["serverInfo"]["name"] == "team");
    CHECK(r["capabilities"]["experimental"]["claude/channel"] == Json::object());
}

TEST_CASE("mcp: a message is pushed as a channel notification with string meta", "[mcp]") {
    auto n = InboxPush::notification_for({{"id", 7},
                                          {"team", "web"},
                                          {"from", "leader"},
                                          {"to", "w1"},
                                          {"type", "shutdown_request"},
                                          {"text", "please stop"},
                                          {"data", {{"requestId", "r-1"}, {"reason", "done"}}},
                                          {"readAt", nullptr}});
    CHECK(n["method"] == "notifications/claude/channel");
    CHECK(n["params"]["content"].get<std::string>().rfind("please stop", 0) == 0);
    // No `source` of ours: Claude Code adds its own, from the server's name (issue 24).
    CHECK(n["params"]["meta"] == Json{{"message_id", "7"},
                                      {"from", "leader"},
                                      {"type", "shutdown_request"},
                                      {"team", "web"},
                                      {"request_id", "r-1"}});
    for (const auto& [key, value] : n["params"]["meta"].items()) {
        CHECK(value.is_string());
        CHECK(key.find_first_not_of("abcdefghijklmnopqrstuvwxyz_") == std::string::npos);
    }
}

TEST_CASE("mcp: the tools are SPEC 12's, with schemas from the operations table", "[mcp]") {
    std::set<std::string> names;
    for (const auto& t : tools()) {
        INFO(t.name);
        CHECK(names.insert(t.name).second);
        auto listing = t.listing();
        CHECK(listing["inputSchema"]["type"] == "object");
        CHECK(listing["outputSchema"]["type"] == "object");
        CHECK_FALSE(listing["description"].get<std::string>().empty());
        // No stream parameter: a call has one answer.
        CHECK_FALSE(t.input_schema["properties"].contains("follow"));
    }
    for (const char* name :
         {"team_create",     "team_list",     "team_status",  "team_teardown", "agent_spawn",
          "agent_list",      "agent_logs",    "agent_prompt", "kill_agent",    "shutdown_respond",
          "shutdown_status", "message_send",  "inbox_read",   "inbox_ack",     "task_add",
          "task_list",       "task_get",      "task_claim",   "task_update",   "task_done",
          "kill_shell",      "shell_release", "activity"}) {
        INFO(name);
        CHECK(names.count(name) == 1);
    }
    CHECK(names.count("attach") == 0);
    // Every team operation takes an optional team; a list is put under its key.
    CHECK(property(*find_tool("task_list"), "team")["type"] == "string");
    CHECK(find_tool("task_list")->output_schema["properties"]["tasks"]["type"] == "array");
    CHECK(find_tool("task_list")->structured(Json::array()) == Json{{"tasks", Json::array()}});
}

TEST_CASE("mcp: parameter types become JSON schema types", "[mcp]") {
    const auto& inbox = *find_tool("inbox_read");
    CHECK(property(inbox, "limit") ==
          Json{{"type", "integer"},
               {"minimum", 1},
               {"description", property(inbox, "limit")["description"]}});
    CHECK(property(inbox, "unread")["type"] == "boolean");
    CHECK(property(inbox, "type")["type"] == "string");
    CHECK(property(*find_tool("inbox_ack"), "ids")["items"]["type"] == "integer");
    CHECK(find_tool("inbox_ack")->input_schema["required"] == Json{"ids"});
    CHECK(property(*find_tool("task_add"), "blocked_by")["items"]["type"] == "string");
    CHECK(property(*find_tool("agent_spawn"), "command")["type"] == "array");
    // A duration is whole milliseconds named ...Ms (SPEC 12), its default said in milliseconds.
    CHECK(property(*find_tool("team_teardown"), "graceMs")["type"] == "integer");
    CHECK(property(*find_tool("team_teardown"), "graceMs")["description"].get<std::string>().find(
              "(default 30000)") != std::string::npos);
}

TEST_CASE(
    "mcp: every duration a tool takes is whole milliseconds named ...Ms, but kill_shell's "
    "timeout",
    "[mcp]") {
    int durations = 0;
    for (const auto& t : tools()) {
        for (const auto& p : t.op->params) {
            if (p.type != ops::Type::duration) continue;
            if (t.name == "shutdown_respond") continue;  // its own schema, no duration
            ++durations;
            INFO(t.name << " " << p.name);
            bool found = false;
            for (const auto& [name, schema] : t.input_schema["properties"].items()) {
                if (schema.value("description", "").find("; a duration: ") != std::string::npos) {
                    FAIL_CHECK(name << " is still a duration string");
                }
                bool ms = name.size() > 2 && name.compare(name.size() - 2, 2, "Ms") == 0;
                if (ms || (t.name == "kill_shell" && name == "timeout")) {
                    CHECK(schema["type"] == "integer");
                    found = true;
                }
            }
            CHECK(found);
        }
    }
    CHECK(durations >= 11);  // kill_agent's three, teardown, inbox, shell start and wait, run's
                             // two, kill_shell, session exec
    for (const auto& [tool, field, param] :
         std::vector<std::tuple<std::string, std::string, std::string>>{
             {"team_teardown", "graceMs", "grace"},
             {"shell_start", "timeoutMs", "timeout"},
             {"shell_wait", "timeoutMs", "timeout"},
             {"run", "timeoutMs", "timeout"},
             {"run", "graceMs", "grace"},
             {"session_exec", "timeoutMs", "timeout"},
             {"kill_shell", "timeout", "timeout"}}) {
        const Tool* t = find_tool(tool);
        if (!t) continue;  // its operation is not in the table
        INFO(tool << "." << field);
        REQUIRE(properties(*t).count(field) == 1);
        CHECK(properties(*t).count(param + "Ms") + properties(*t).count(param) == 1);
    }
    // kill_shell as Claude Code's KillShell: milliseconds, default 5000; force true; SIGTERM.
    const Tool& kill = *find_tool("kill_shell");
    CHECK(property(kill, "timeout")["description"].get<std::string>().find("(default 5000)") !=
          std::string::npos);
    CHECK(property(kill, "force")["description"].get<std::string>().find("(default true)") !=
          std::string::npos);
    CHECK(property(kill, "signal")["description"].get<std::string>().find("(default SIGTERM)") !=
          std::string::npos);
    auto call = kill.call({{"shell_id", "bg-a1b2c3"}, {"timeout", 2000}});
    CHECK(call.values == Json{{"id", "bg-a1b2c3"}, {"timeout", "2000ms"}});
    // A timeout that is not a wait is not bounded by the 10 minutes of waits.
    if (const Tool* start = find_tool("shell_start")) {
        auto long_one = start->call({{"command", {"sleep", "1"}}, {"timeoutMs", 3'600'000}});
        CHECK(long_one.values["timeout"] == "3600000ms");
    }
}

TEST_CASE("mcp: a description says its default once", "[mcp]") {
    auto count = [](const std::string& text) {
        int n = 0;
        for (auto at = text.find("default"); at != std::string::npos;
             at = text.find("default", at + 1)) {
            ++n;
        }
        return n;
    };
    for (const auto& t : tools()) {
        auto listing = t.listing();
        INFO(t.name);
        CHECK(count(listing["description"].get<std::string>()) <= 1);
        for (const auto& [name, schema] : listing["inputSchema"]["properties"].items()) {
            INFO(name << ": " << schema.value("description", ""));
            CHECK(count(schema.value("description", "")) <= 1);
        }
    }
    // The message type's default, said once, in the help's words replaced by the schema's.
    CHECK(property(*find_tool("message_send"), "type")["description"] ==
          "the message type (default message)");
}

TEST_CASE("mcp: kill_agent, kill_shell, inbox_read and agent_spawn take SPEC 12's shapes",
          "[mcp]") {
    CHECK(properties(*find_tool("kill_agent")) ==
          std::set<std::string>{"teamName", "agentId", "force", "reason", "wait", "timeoutMs",
                                "forceAfterMs", "graceMs", "reassignTo", "notify", "noNotify"});
    CHECK(find_tool("kill_agent")->input_schema["required"] == Json{"agentId"});
    CHECK(properties(*find_tool("kill_shell")) ==
          std::set<std::string>{"shell_id", "signal", "force", "timeout", "host"});
    CHECK(properties(*find_tool("inbox_read")) ==
          std::set<std::string>{"agent", "unread", "type", "sinceId", "limit", "markRead", "waitMs",
                                "team"});
    CHECK(property(*find_tool("agent_spawn"), "env")["type"] == "object");
    CHECK(properties(*find_tool("shutdown_respond")) ==
          std::set<std::string>{"action", "reason", "requestId", "team"});
    for (const char* f : {"success", "method", "phase", "reassignedTasks", "requestId", "error"}) {
        CHECK(find_tool("kill_agent")->output_schema["properties"].contains(f));
    }
    for (const char* f :
         {"success", "shell_id", "signal_sent", "force_killed", "exit_code", "error"}) {
        CHECK(find_tool("kill_shell")->output_schema["properties"].contains(f));
    }

    auto kill = find_tool("kill_agent")
                    ->call({{"teamName", "web"},
                            {"agentId", "w1"},
                            {"timeoutMs", 1500},
                            {"graceMs", 200},
                            {"reassignTo", "w2"}});
    CHECK(kill.op->name == "kill_agent");
    CHECK(kill.team == "web");
    CHECK(kill.values ==
          Json{{"name", "w1"}, {"timeout", "1500ms"}, {"grace", "200ms"}, {"reassign_to", "w2"}});
    // A wait with no bound waits 10 minutes at most.
    auto wait = find_tool("kill_agent")->call({{"agentId", "w1"}, {"wait", true}});
    CHECK(wait.values["timeout"] == "600000ms");
    CHECK_FALSE(find_tool("kill_agent")->call({{"agentId", "w1"}}).values.contains("timeout"));
    // So does an ACP agent's turn waited for by agent_prompt; beyond 10 minutes is refused, and
    // a prompt that does not wait gets no timeout (a pane agent refuses one).
    const Tool& prompt = *find_tool("agent_prompt");
    auto turn = prompt.call({{"name", "a1"}, {"text", "hi"}, {"wait", true}});
    CHECK(turn.values["timeout"] == "600000ms");
    CHECK(prompt.call({{"name", "a1"}, {"text", "hi"}, {"wait", true}, {"timeoutMs", 1500}})
              .values["timeout"] == "1500ms");
    CHECK_FALSE(prompt.call({{"name", "a1"}, {"text", "hi"}}).values.contains("timeout"));
    CHECK_THROWS_AS(
        prompt.call({{"name", "a1"}, {"text", "hi"}, {"wait", true}, {"timeoutMs", 600001}}),
        ArgumentError);

    auto shell = find_tool("kill_shell")->call({{"shell_id", "bg-a1b2c3"}, {"force", false}});
    CHECK(shell.values == Json{{"id", "bg-a1b2c3"}, {"no_force", true}});
    // A shell on another host of the store (SPEC 16): `host` passes as it is.
    CHECK(find_tool("kill_shell")->call({{"shell_id", "bg-a1b2c3"}, {"host", "h2"}}).values ==
          Json{{"id", "bg-a1b2c3"}, {"host", "h2"}});
    CHECK(properties(*find_tool("shell_release")) == std::set<std::string>{"shell_id", "host"});

    auto inbox = find_tool("inbox_read")
                     ->call({{"sinceId", 3}, {"markRead", true}, {"waitMs", 250}, {"team", "web"}});
    CHECK(inbox.values == Json{{"since", 3}, {"mark_read", true}, {"wait", "250ms"}});
    CHECK(inbox.team == "web");

    auto spawn = find_tool("agent_spawn")
                     ->call({{"name", "w1"},
                             {"command", {"sleep", "60"}},
                             {"env", {{"A", "1"}, {"B", "x=y"}}}});
    CHECK(spawn.values["env"] == Json{"A=1", "B=x=y"});

    auto approve =
        find_tool("shutdown_respond")->call({{"action", "approve"}, {"requestId", "r1"}});
    CHECK(approve.op->name == "approve_shutdown");
    CHECK(approve.values == Json{{"request", "r1"}});
    auto reject = find_tool("shutdown_respond")->call({{"action", "reject"}, {"reason", "busy"}});
    CHECK(reject.op->name == "reject_shutdown");
    CHECK(find_tool("shutdown_respond")->call({{"action", "confirm"}}).op->name ==
          "confirm_shutdown");
}

TEST_CASE("mcp: arguments that do not fit are refused naming the field", "[mcp]") {
    auto field_of = [](const char* tool, const Json& args) {
        try {
            find_tool(tool)->call(args);
        } catch (const ArgumentError& e) {
            return e.field;
        }
        return std::string("(accepted)");
    };
    CHECK(field_of("kill_agent", {{"agentId", 3}}) == "agentId");
    CHECK(field_of("kill_agent", Json::object()) == "agentId");
    CHECK(field_of("kill_agent", {{"agentId", "w"}, {"timeoutMs", 0}}) == "timeoutMs");
    CHECK(field_of("kill_agent", {{"agentId", "w"}, {"timeoutMs", 600001}}) == "timeoutMs");
    CHECK(field_of("kill_agent", {{"agentId", "w"}, {"bogus", 1}}) == "bogus");
    CHECK(field_of("inbox_read", {{"limit", 0}}) == "limit");
    CHECK(field_of("inbox_read", {{"waitMs", "5s"}}) == "waitMs");
    CHECK(field_of("team_teardown", {{"graceMs", "soon"}}) == "graceMs");
    CHECK(field_of("team_teardown", {{"grace", "30s"}}) == "grace");  // no such field
    CHECK(field_of("kill_shell", {{"shell_id", "bg-a1b2c3"}, {"timeout", "2s"}}) == "timeout");
    CHECK(field_of("agent_spawn", {{"name", "w"}, {"env", {{"A", 1}}}}) == "env");
    CHECK(field_of("shutdown_respond", {{"action", "maybe"}}) == "action");
    CHECK(field_of("shutdown_respond", {{"action", "reject"}}) == "reason");
}

TEST_CASE("mcp: the server answers the protocol's methods and refuses the rest", "[mcp]") {
    Harness h;
    auto init = h.request("initialize", {{"protocolVersion", "2025-06-18"},
                                         {"capabilities", Json::object()},
                                         {"clientInfo", {{"name", "t"}, {"version", "1"}}}});
    CHECK(init["result"]["protocolVersion"] == "2025-06-18");
    CHECK(h.send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})").empty());
    CHECK(h.request("ping", nullptr)["result"] == Json::object());
    auto list = h.request("tools/list", Json::object());
    CHECK(list["result"]["tools"].size() == tools().size());
    CHECK(h.request("resources/read", Json::object())["error"]["code"] == -32601);
    auto unknown = h.request("tools/call", {{"name", "kill_agnet"}});
    CHECK(unknown["error"]["code"] == -32602);
    CHECK(unknown["error"]["message"].get<std::string>().find("kill_agent") != std::string::npos);
    auto bad = h.request("tools/call", {{"name", "task_add"}, {"arguments", {{"subject", 1}}}});
    CHECK(bad["error"]["code"] == -32602);
    CHECK(bad["error"]["data"]["field"] == "subject");
    // Malformed, then the server goes on.
    auto garbage = h.send("not json");
    REQUIRE(garbage.size() == 1);
    CHECK(garbage[0]["error"]["code"] == -32700);
    CHECK(h.request("ping", nullptr, 9)["id"] == 9);
}

TEST_CASE(
    "mcp: arguments that do not fit are a tool result with isError under 2025-11-25, "
    "-32602 under 2025-06-18, and an unknown tool is -32602 under both",
    "[mcp]") {
    for (const char* revision : {"2025-11-25", "2025-06-18"}) {
        INFO("revision " << revision);
        Harness h;
        auto init = h.request("initialize", {{"protocolVersion", revision},
                                             {"capabilities", Json::object()},
                                             {"clientInfo", {{"name", "t"}, {"version", "1"}}}});
        CHECK(init["result"]["protocolVersion"] == revision);
        auto bad = h.request("tools/call",
                             {{"name", "kill_shell"},
                              {"arguments", {{"shell_id", "bg-a1b2c3"}, {"timeout", "2s"}}}});
        auto missing =
            h.request("tools/call", {{"name", "task_add"}, {"arguments", Json::object()}});
        if (std::string(revision) == "2025-11-25") {
            // SEP-1303: the model sees the message and corrects its call.
            for (const auto& r : {bad, missing}) {
                REQUIRE(r.contains("result"));
                CHECK(r["result"]["isError"] == true);
                const auto& content = r["result"]["structuredContent"];
                CHECK(content["success"] == false);
                CHECK(content["code"] == "usage");
                CHECK(Json::parse(r["result"]["content"][0]["text"].get<std::string>()) == content);
            }
            CHECK(bad["result"]["structuredContent"]["field"] == "timeout");
            CHECK(bad["result"]["structuredContent"]["error"].get<std::string>().rfind(
                      "timeout must be a whole number", 0) == 0);
            CHECK(missing["result"]["structuredContent"]["field"] == "subject");
        } else {
            CHECK(bad["error"]["code"] == -32602);
            CHECK(bad["error"]["data"]["field"] == "timeout");
            CHECK(missing["error"]["code"] == -32602);
            CHECK(missing["error"]["data"]["field"] == "subject");
        }
        auto unknown = h.request("tools/call", {{"name", "kill_agnet"}});
        CHECK(unknown["error"]["code"] == -32602);
    }
}

TEST_CASE("mcp: a call is a result with structured content and the same JSON as text", "[mcp]") {
    Harness h;
    auto ok = h.request("tools/call", {{"name", "team_list"}, {"arguments", Json::object()}});
    const auto& result = ok["result"];
    CHECK(result["isError"] == false);
    CHECK(result["structuredContent"] == Json{{"teams", Json::array()}});
    CHECK(Json::parse(result["content"][0]["text"].get<std::string>()) ==
          result["structuredContent"]);
    // A refusal is a result with isError, in the error shape of SPEC 1.4.
    auto missing =
        h.request("tools/call", {{"name", "task_list"}, {"arguments", {{"team", "nope"}}}});
    CHECK(missing["result"]["isError"] == true);
    CHECK(missing["result"]["structuredContent"]["success"] == false);
    CHECK(missing["result"]["structuredContent"]["code"] == "not_found");
    // kill_agent keeps its own shape.
    auto kill = h.request("tools/call", {{"name", "kill_agent"},
                                         {"arguments", {{"agentId", "w1"}, {"teamName", "nope"}}}});
    CHECK(kill["result"]["isError"] == true);
    for (const char* f : {"success", "method", "phase", "reassignedTasks", "requestId", "error"}) {
        CHECK(kill["result"]["structuredContent"].contains(f));
    }
}

TEST_CASE("mcp: serve reads lines, refuses one over 2 MiB, and ends at end of input", "[mcp]") {
    team::test::TempDir dir;
    int in[2], out[2];
    REQUIRE(::pipe(in) == 0);
    REQUIRE(::pipe(out) == 0);
    std::thread server([&] {
        Server::serve(in[0], out[1], ServerOptions{.identity = {dir.path().string(), {}, {}}});
        ::close(out[1]);
    });
    std::string input = R"({"jsonrpc":"2.0","id":1,"method":"ping"})"
                        "\r\n{oops\n" +
                        std::string(kMaxLine + 10, 'x') + "\n" +
                        R"({"jsonrpc":"2.0","id":2,"method":"ping"})";  // the last, unterminated
    std::thread writer([&] {
        const char* p = input.data();
        std::size_t left = input.size();
        while (left > 0) {
            auto n = ::write(in[1], p, left);
            if (n <= 0) break;
            p += n;
            left -= static_cast<std::size_t>(n);
        }
        ::close(in[1]);
    });
    std::string got;
    char buf[4096];
    for (;;) {
        auto n = ::read(out[0], buf, sizeof buf);
        if (n <= 0) break;
        got.append(buf, static_cast<std::size_t>(n));
    }
    writer.join();
    server.join();
    ::close(in[0]);
    ::close(out[0]);
    std::vector<Json> replies;
    std::size_t start = 0;
    for (auto end = got.find('\n'); end != std::string::npos; end = got.find('\n', start)) {
        replies.push_back(Json::parse(got.substr(start, end - start)));
        start = end + 1;
    }
    REQUIRE(replies.size() == 4);
    CHECK(replies[0]["id"] == 1);
    CHECK(replies[1]["error"]["code"] == -32700);
    CHECK(replies[2]["error"]["code"] == -32600);
    CHECK(replies[2]["error"]["message"].get<std::string>().find("2 MiB") != std::string::npos);
    CHECK(replies[3]["id"] == 2);
}
