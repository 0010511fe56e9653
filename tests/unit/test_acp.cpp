// acp/: the pieces of the ACP client that need no agent: reading lines and updates, the
// transcript, the permission policy, the roots of fs/*, and the tail of terminal output.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "acp/files.hpp"
#include "acp/permissions.hpp"
#include "acp/terminals.hpp"
#include "acp/transcript.hpp"
#include "acp/wire.hpp"
#include "base/error.hpp"
#include "tests/support/process.hpp"

using namespace team::acp;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

Update update_of(json u) {
    return read_update({{"sessionId", "s"}, {"update", std::move(u)}});
}

Update chunk(const std::string& kind, const std::string& text) {
    return update_of({{"sessionUpdate", kind}, {"content", {{"type", "text"}, {"text", text}}}});
}

PermissionRequest request_of(const std::string& tool_kind, json options) {
    auto r = read_permission_request(
        {{"sessionId", "s"},
         {"toolCall", {{"toolCallId", "t1"}, {"title", "T"}, {"kind", tool_kind}}},
         {"options", std::move(options)}});
    REQUIRE(r);
    return *r;
}

json all_options() {
    return json::array({{{"optionId", "a1"}, {"name", "Allow"}, {"kind", "allow_once"}},
                        {{"optionId", "a2"}, {"name", "Always"}, {"kind", "allow_always"}},
                        {{"optionId", "r1"}, {"name", "Reject"}, {"kind", "reject_once"}},
                        {{"optionId", "r2"}, {"name", "Never"}, {"kind", "reject_always"}}});
}

void write_file(const fs::path& p, const std::string& text) {
    std::ofstream(p) << text;
}

}  // namespace

TEST_CASE("acp lines are requests, notifications or replies, and anything else is named",
          "[acp-unit]") {
    auto request = read_message(
        R"({"jsonrpc":"2.0","id":0,"method":"fs/read_text_file","params":{"path":"/x"}})");
    REQUIRE(std::holds_alternative<Incoming>(request));
    CHECK(std::get<Incoming>(request).kind == Incoming::Kind::request);
    CHECK(std::get<Incoming>(request).id == 0);

    auto note =
        read_message(R"({"jsonrpc":"2.0","method":"session/update","params":{},"_meta":{}})");
    CHECK(std::get<Incoming>(note).kind == Incoming::Kind::notification);

    auto failed =
        read_message(R"({"jsonrpc":"2.0","id":7,"error":{"code":-32000,"message":"auth"}})");
    const auto& reply = std::get<Incoming>(failed);
    CHECK(reply.kind == Incoming::Kind::reply);
    REQUIRE(reply.error);
    CHECK(reply.error->code == -32000);

    CHECK(std::get<std::string>(read_message("this is not json")).find("not JSON") !=
          std::string::npos);
    CHECK(std::get<std::string>(read_message("[1,2]")).find("not a message") != std::string::npos);
    CHECK(std::get<std::string>(read_message(R"({"jsonrpc":"2.0"})")).find("neither") !=
          std::string::npos);
}

TEST_CASE("acp updates are typed, and unknown kinds and fields are kept as JSON", "[acp-unit]") {
    Update text = chunk("agent_message_chunk", "hi");
    CHECK(text.kind == UpdateKind::agent_message);
    CHECK(text.text == "hi");

    Update future = update_of({{"sessionUpdate", "future_kind"}, {"x", 1}, {"_meta", {{"a", 1}}}});
    CHECK(future.kind == UpdateKind::other);
    CHECK(future.kind_name == "future_kind");
    CHECK(future.raw["x"] == 1);

    Update tool = update_of(
        {{"sessionUpdate", "tool_call_update"}, {"toolCallId", "t"}, {"status", "failed"}});
    CHECK(tool.kind == UpdateKind::tool_call_update);
    CHECK(tool.tool.status == std::optional<std::string>("failed"));
    CHECK_FALSE(tool.tool.title);

    CHECK(read_update(json::array()).kind == UpdateKind::other);                   // never throws
    CHECK(update_of({{"sessionUpdate", "tool_call"}}).kind == UpdateKind::other);  // no id
    CHECK(content_text({{"type", "image"}, {"data", "…"}}) == "[image]");
}

TEST_CASE("the transcript merges consecutive chunks and upserts tool calls", "[acp-unit]") {
    Transcript t;
    t.begin_turn("do it");
    t.apply(chunk("agent_message_chunk", "hel"));
    t.apply(chunk("agent_message_chunk", "lo"));
    t.apply(chunk("agent_thought_chunk", "hmm"));
    t.apply(update_of({{"sessionUpdate", "tool_call"},
                       {"toolCallId", "c1"},
                       {"title", "Read a"},
                       {"kind", "read"}}));
    t.apply(chunk("agent_message_chunk", "after"));
    t.apply(update_of(
        {{"sessionUpdate", "tool_call_update"},
         {"toolCallId", "c1"},
         {"status", "completed"},
         {"content",
          json::array({{{"type", "content"}, {"content", {{"type", "text"}, {"text", "A"}}}}})}}));
    t.apply(chunk("agent_message_chunk", " more"));
    t.apply(update_of({{"sessionUpdate", "plan"},
                       {"entries", json::array({{{"content", "x"}, {"status", "pending"}}})}}));
    t.apply(update_of({{"sessionUpdate", "plan"},
                       {"entries", json::array({{{"content", "x"}, {"status", "completed"}}})}}));
    t.apply(update_of({{"sessionUpdate", "current_mode_update"}, {"currentModeId", "code"}}));
    t.apply(update_of({{"sessionUpdate", "usage_update"}, {"used", 10}, {"size", 100}}));
    t.apply(update_of({{"sessionUpdate", "future_kind"}}));
    t.end_turn("end_turn");

    const auto& e = t.entries();
    REQUIRE(e.size() == 9);  // prompt, message, thought, tool, message, plan, mode, other, stop
    CHECK(e[1].text == "hello");
    CHECK(e[3].tool.status == "completed");
    CHECK(e[3].tool.title == "Read a");
    CHECK(e[4].text == "after more");
    CHECK(e[5].data[0]["status"] == "completed");  // replaced in place
    CHECK(t.mode() == "code");
    CHECK(t.usage()["used"] == 10);
    CHECK(t.updates() == 12);

    std::string text = t.render();
    CHECK(text ==
          "> do it\nhello\n(thinking) hmm\n[read] Read a — completed\n    A\nafter more\n"
          "plan:\n  [x] x\nmode: code\n— end_turn\n");
    json records = t.records();
    CHECK(records[3]["kind"] == "tool_call");
    CHECK(records[3]["toolCall"]["toolCallId"] == "c1");
    CHECK(records[7]["kind"] == "other");
    CHECK(records[7]["updateKind"] == "future_kind");
    CHECK(records[8]["stopReason"] == "end_turn");
}

TEST_CASE("a failed turn and a new turn's chunks are entries of their own", "[acp-unit]") {
    Transcript t;
    t.begin_turn("one");
    t.apply(chunk("agent_message_chunk", "a"));
    t.end_turn("", "connection ended: agent exited with 3");
    t.begin_turn("two");
    t.apply(chunk("agent_message_chunk", "b"));
    CHECK(t.entries().back().text == "b");
    CHECK(t.records()[2]["error"] == "connection ended: agent exited with 3");
    CHECK(t.render().find("— turn failed: connection ended: agent exited with 3") !=
          std::string::npos);
}

TEST_CASE("the permission policy answers what it may, and a deny is a reject option",
          "[acp-unit]") {
    using K = PermissionChoice::Kind;
    auto edit = request_of("edit", all_options());
    auto read = request_of("read", all_options());
    CHECK_FALSE(policy_answer(Policy::ask, read));
    CHECK(policy_answer(Policy::allow_reads, read)->kind == K::allow);
    CHECK_FALSE(policy_answer(Policy::allow_reads, edit));
    CHECK(policy_answer(Policy::allow_all, edit)->kind == K::allow);
    CHECK(policy_answer(Policy::deny, read)->kind == K::deny);

    CHECK(option_for(edit, {K::allow, ""}) == std::optional<std::string>("a1"));
    CHECK(option_for(edit, {K::allow_always, ""}) == std::optional<std::string>("a2"));
    CHECK(option_for(edit, {K::deny, ""}) == std::optional<std::string>("r1"));
    CHECK(option_for(edit, {K::deny_always, ""}) == std::optional<std::string>("r2"));
    CHECK(option_for(edit, {K::option, "r2"}) == std::optional<std::string>("r2"));
    CHECK_FALSE(option_for(edit, {K::option, "nope"}));
    CHECK_FALSE(option_for(edit, {K::cancelled, ""}));  // cancelled is not an option

    auto only_always = request_of(
        "edit", json::array({{{"optionId", "n"}, {"name", "N"}, {"kind", "reject_always"}}}));
    CHECK(option_for(only_always, {K::deny, ""}) == std::optional<std::string>("n"));
    CHECK_FALSE(option_for(only_always, {K::allow, ""}));

    CHECK(parse_policy("allow-reads") == Policy::allow_reads);
    CHECK_THROWS_WITH(parse_policy("maybe"), Catch::Contains("'maybe'"));
    CHECK(selected_outcome("r1") ==
          json{{"outcome", {{"outcome", "selected"}, {"optionId", "r1"}}}});
}

TEST_CASE("fs paths stay inside the roots: .., symlinks and relative paths refused", "[acp-unit]") {
    team::test::TempDir tmp;
    fs::path base = fs::canonical(tmp.path());
    fs::create_directories(base / "root/sub");
    fs::create_directories(base / "outside");
    write_file(base / "outside/secret", "s");
    write_file(base / "root/lines", "1\n2\n3\n4\n");
    fs::create_symlink(base / "outside", base / "root/link");
    Roots roots({base / "root"});

    CHECK(read_text_file(roots, (base / "root/lines").string(), std::nullopt, std::nullopt) ==
          "1\n2\n3\n4\n");
    CHECK(read_text_file(roots, (base / "root/lines").string(), 2, 2) == "2\n3\n");
    CHECK(read_text_file(roots, (base / "root/lines").string(), 4, 10) == "4\n");
    CHECK(read_text_file(roots, (base / "root/lines").string(), std::nullopt, 1) == "1\n");

    auto refused = [&](const std::string& p, bool write) {
        try {
            if (write)
                write_text_file(roots, p, "x");
            else
                read_text_file(roots, p, std::nullopt, std::nullopt);
        } catch (const team::Error& e) {
            return std::string(e.what());
        }
        return std::string("allowed");
    };
    CHECK(refused((base / "outside/secret").string(), false).find("outside the agent's roots") !=
          std::string::npos);
    CHECK(refused((base / "root/link/secret").string(), false).find("outside") !=
          std::string::npos);
    CHECK(refused((base / "root/link/new").string(), true).find("outside") != std::string::npos);
    CHECK(refused((base / "root/../outside/secret").string(), false).find("'..'") !=
          std::string::npos);
    CHECK(refused("root/lines", false).find("not absolute") != std::string::npos);
    CHECK(refused((base / "root/missing").string(), false).find("no file") != std::string::npos);
    CHECK_FALSE(fs::exists(base / "outside/new"));

    write_text_file(roots, (base / "root/sub/deeper/new.txt").string(), "é\n");
    CHECK(read_text_file(roots, (base / "root/sub/deeper/new.txt").string(), std::nullopt,
                         std::nullopt) == "é\n");
}

TEST_CASE("terminal output is the tail, cut on a UTF-8 boundary", "[acp-unit]") {
    bool truncated = false;
    CHECK(utf8_tail("hello", 10, truncated) == "hello");
    CHECK_FALSE(truncated);
    CHECK(utf8_tail("hello", 3, truncated) == "llo");
    CHECK(truncated);
    // "aé€" is a, c3 a9, e2 82 ac: the last 4 bytes start inside é, so only € is left.
    CHECK(utf8_tail("a\xc3\xa9\xe2\x82\xac", 4, truncated) == "\xe2\x82\xac");
    CHECK(truncated);
    CHECK(utf8_tail("a\xc3\xa9\xe2\x82\xac", 5, truncated) == "\xc3\xa9\xe2\x82\xac");
    CHECK(utf8_tail("\xe2\x82\xac", 2, truncated).empty());
    CHECK(utf8_tail("abc", 0, truncated).empty());
}
