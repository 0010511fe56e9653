// team/usage_records: the agents' own records of their usage, in the layouts measured against
// the real agents (docs/usage-records.md), read past a cursor so that nothing counts twice.

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "team/usage_records.hpp"
#include "tests/support/process.hpp"

using namespace team;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

void append(const fs::path& file, const std::string& text) {
    std::ofstream out(file, std::ios::app | std::ios::binary);
    out << text;
}

// Claude Code's assistant entry (2.1.197): one per content block, the usage of the whole message.
std::string claude_entry(const std::string& id, const std::string& block, int input, int output,
                         int cache_read, int cache_write, const std::string& at) {
    json usage = {
        {"input_tokens", input},
        {"cache_creation_input_tokens", cache_write},
        {"cache_read_input_tokens", cache_read},
        {"output_tokens", output},
        {"server_tool_use", {{"web_search_requests", 0}, {"web_fetch_requests", 0}}},
        {"service_tier", "standard"},
        {"cache_creation", {{"ephemeral_1h_input_tokens", 0}, {"ephemeral_5m_input_tokens", 0}}}};
    json entry = {{"parentUuid", "p"},
                  {"isSidechain", false},
                  {"type", "assistant"},
                  {"timestamp", at},
                  {"requestId", "req_" + id},
                  {"message",
                   {{"id", id},
                    {"type", "message"},
                    {"role", "assistant"},
                    {"model", "claude-opus-4-8"},
                    {"content", json::array({{{"type", block}, {"text", "Running it."}}})},
                    {"usage", usage}}}};
    return entry.dump() + "\n";
}

std::string claude_user(const std::string& text) {
    json entry = {{"type", "user"},
                  {"timestamp", "2026-11-29T02:45:49.244Z"},
                  {"message", {{"role", "user"}, {"content", text}}}};
    return entry.dump() + "\n";
}

// A Codex rollout's token_count event (0.169): the thread's running total and the last call's.
std::string codex_count(int input, int cached, int output, const std::string& at) {
    json total = {{"input_tokens", input},         {"cached_input_tokens", cached},
                  {"cache_write_input_tokens", 0}, {"output_tokens", output},
                  {"reasoning_output_tokens", 0},  {"total_tokens", input + output}};
    json entry = {{"timestamp", at},
                  {"type", "event_msg"},
                  {"payload",
                   {{"type", "token_count"},
                    {"info",
                     {{"total_token_usage", total},
                      {"last_token_usage", total},
                      {"model_context_window", 258400}}},
                    {"rate_limits", {{"limit_id", "codex"}}}}}};
    return entry.dump() + "\n";
}

std::string codex_turn(const std::string& model) {
    json entry = {{"timestamp", "2026-11-29T02:46:45.477Z"},
                  {"type", "turn_context"},
                  {"payload", {{"turn_id", "t1"}, {"cwd", "/w"}, {"model", model}}}};
    return entry.dump() + "\n";
}

// A Gemini CLI message with tokens (0.61): input counts the cached tokens, output not thoughts.
json gemini_message(const std::string& id, int input, int output, int cached, int thoughts) {
    return {{"id", id},
            {"timestamp", "2026-11-29T02:47:06.030Z"},
            {"type", "gemini"},
            {"content", "hello"},
            {"thoughts", json::array()},
            {"tokens",
             {{"input", input},
              {"output", output},
              {"cached", cached},
              {"thoughts", thoughts},
              {"tool", 0},
              {"total", input + output + thoughts}}},
            {"model", "gemini-2.5-flash"}};
}

}  // namespace

TEST_CASE("claude: a message in several entries counts once, as the transcript says it",
          "[usage_records]") {
    team::test::TempDir dir;
    fs::path file = dir.path() / "session.jsonl";
    append(file, claude_user("Say hello"));
    append(file, claude_entry("msg_1", "tool_use", 1014, 56, 20, 10, "2026-11-29T02:45:49.391Z"));
    append(file, claude_entry("msg_2", "text", 1028, 62, 40, 20, "2026-11-29T02:45:49.609Z"));
    append(file, claude_entry("msg_2", "tool_use", 1028, 62, 40, 20, "2026-11-29T02:45:49.610Z"));
    append(file, claude_entry("synthetic", "text", 0, 0, 0, 0, "2026-11-29T02:45:50.000Z"));

    auto read = read_usage_records("claude", file, nullptr);
    REQUIRE(read.entries.size() == 2);
    const auto& a = read.entries[0];
    CHECK(a.key == "msg_1");
    CHECK(a.model == "claude-opus-4-8");
    CHECK(a.at == 1795920349391);
    CHECK(a.input == 1014);
    CHECK(a.output == 56);
    CHECK(a.cache_read == 20);
    CHECK(a.cache_write == 10);
    CHECK(read.entries[1].key == "msg_2");
    CHECK(read.entries[1].output == 62);

    // Nothing new: nothing read, the cursor as it was.
    auto again = read_usage_records("claude", file, read.cursor);
    CHECK(again.entries.empty());
    CHECK(again.cursor == read.cursor);
}

TEST_CASE("a last line not ended yet is read once it is whole, and only then", "[usage_records]") {
    team::test::TempDir dir;
    fs::path file = dir.path() / "session.jsonl";
    append(file, claude_entry("msg_1", "text", 1000, 50, 0, 0, "2026-11-29T02:45:49.391Z"));
    std::string second = claude_entry("msg_2", "text", 2000, 60, 0, 0, "2026-11-29T02:45:50.391Z");
    append(file, second.substr(0, 40));

    auto first = read_usage_records("claude", file, nullptr);
    REQUIRE(first.entries.size() == 1);
    CHECK(first.entries[0].key == "msg_1");
    CHECK(read_usage_records("claude", file, first.cursor).entries.empty());

    append(file, second.substr(40, second.size() - 41));  // all but its newline
    CHECK(read_usage_records("claude", file, first.cursor).entries.empty());
    append(file, "\n");
    auto whole = read_usage_records("claude", file, first.cursor);
    REQUIRE(whole.entries.size() == 1);
    CHECK(whole.entries[0].key == "msg_2");
    CHECK(whole.entries[0].input == 2000);
    CHECK(read_usage_records("claude", file, whole.cursor).entries.empty());
}

TEST_CASE("a read from an old cursor gives the same keys again", "[usage_records]") {
    team::test::TempDir dir;
    fs::path file = dir.path() / "session.jsonl";
    append(file, claude_entry("msg_1", "text", 1000, 50, 0, 0, "2026-11-29T02:45:49.391Z"));
    auto old = read_usage_records("claude", file, nullptr);
    append(file, claude_entry("msg_2", "text", 2000, 60, 0, 0, "2026-11-29T02:45:50.391Z"));
    auto next = read_usage_records("claude", file, old.cursor);
    REQUIRE(next.entries.size() == 1);
    // The caller lost `next` (a crash before its transaction): the old cursor reads it again,
    // with the same key, which its store then keeps once.
    auto replay = read_usage_records("claude", file, old.cursor);
    REQUIRE(replay.entries.size() == 1);
    CHECK(replay.entries[0].key == next.entries[0].key);
    CHECK(replay.cursor == next.cursor);
}

TEST_CASE("a garbage line is skipped and the lines after it are read", "[usage_records]") {
    team::test::TempDir dir;
    fs::path file = dir.path() / "session.jsonl";
    append(file, "{\"type\":\"assistant\",\"usage\": not json\n");
    append(file, "\n");
    append(file, "[1,2,3]\n");
    append(file, "{\"type\":\"assistant\",\"message\":{\"id\":7,\"usage\":{}}}\n");
    append(file, claude_entry("msg_1", "text", 1000, 50, 0, 0, "not a time"));
    auto read = read_usage_records("claude", file, nullptr);
    REQUIRE(read.entries.size() == 1);
    CHECK(read.entries[0].key == "msg_1");
    CHECK(read.entries[0].at == 0);
}

TEST_CASE("claude: content with quotes, braces and a usage of its own is stepped over",
          "[usage_records]") {
    team::test::TempDir dir;
    fs::path file = dir.path() / "session.jsonl";
    json entry =
        json::parse(claude_entry("msg_1", "tool_use", 1000, 50, 3, 4, "2026-11-29T02:45:49.391Z"));
    entry["message"]["content"] = json::array(
        {{{"type", "tool_use"},
          {"name", "Write"},
          {"input",
           {{"content", "a \"usage\":{\"input_tokens\":9} and } ] { [ \\\" \\"},
            {"usage", {{"input_tokens", 999999}, {"output_tokens", 999999}}},
            {"list", {1, 2.5, -3e2, true, false, nullptr, json::object(), json::array()}}}}}});
    entry["message"]["model"] = "claude-\u00e9";
    append(file, entry.dump(-1, ' ', /*ensure_ascii=*/true) + "\n");  // the model as \u00e9
    auto read = read_usage_records("claude", file, nullptr);
    REQUIRE(read.entries.size() == 1);
    CHECK(read.entries[0].input == 1000);
    CHECK(read.entries[0].output == 50);
    CHECK(read.entries[0].cache_read == 3);
    CHECK(read.entries[0].cache_write == 4);
    CHECK(read.entries[0].model == "claude-\u00e9");
}

TEST_CASE("a missing file gives nothing and keeps the cursor", "[usage_records]") {
    team::test::TempDir dir;
    json cursor = {{"offset", 12}, {"size", 12}, {"mtime_ns", 1}, {"inode", 1}};
    for (const char* kind : {"claude", "codex", "gemini"}) {
        auto read = read_usage_records(kind, dir.path() / "gone.jsonl", cursor);
        CHECK(read.entries.empty());
        CHECK(read.cursor == cursor);
        CHECK(read_usage_records(kind, dir.path() / "gone.jsonl", nullptr).cursor.is_null());
    }
}

TEST_CASE("a file replaced by another is read from its start", "[usage_records]") {
    team::test::TempDir dir;
    fs::path file = dir.path() / "session.jsonl";
    append(file, claude_entry("msg_1", "text", 1000, 50, 0, 0, "2026-11-29T02:45:49.391Z"));
    append(file, claude_entry("msg_2", "text", 1000, 50, 0, 0, "2026-11-29T02:45:49.391Z"));
    auto read = read_usage_records("claude", file, nullptr);
    fs::path other = dir.path() / "other.jsonl";
    append(other, claude_entry("msg_3", "text", 1000, 50, 0, 0, "2026-11-29T02:45:49.391Z"));
    fs::rename(other, file);
    auto again = read_usage_records("claude", file, read.cursor);
    REQUIRE(again.entries.size() == 1);
    CHECK(again.entries[0].key == "msg_3");
}

TEST_CASE("codex: running totals become one delta per event, keyed by the total",
          "[usage_records]") {
    team::test::TempDir dir;
    fs::path file = dir.path() / "rollout-2026-11-29T02-46-45-01a2.jsonl";
    append(file, codex_turn("gpt-5"));
    append(file, codex_count(1017, 10, 53, "2026-11-29T02:46:45.609Z"));
    append(file, codex_count(2051, 30, 109, "2026-11-29T02:46:45.684Z"));
    append(file, codex_count(2051, 30, 109, "2026-11-29T02:46:45.700Z"));  // did not grow

    auto read = read_usage_records("codex", file, nullptr);
    REQUIRE(read.entries.size() == 2);
    const auto& a = read.entries[0];
    CHECK(a.key == "rollout-2026-11-29T02-46-45-01a2.jsonl#1070");
    CHECK(a.model == "gpt-5");
    CHECK(a.at == 1795920405609);
    CHECK(a.input == 1007);  // the cached tokens apart
    CHECK(a.cache_read == 10);
    CHECK(a.output == 53);
    CHECK(a.cache_write == 0);
    const auto& b = read.entries[1];
    CHECK(b.key == "rollout-2026-11-29T02-46-45-01a2.jsonl#2160");
    CHECK(b.input == 1014);
    CHECK(b.cache_read == 20);
    CHECK(b.output == 56);

    // The next turn, read from the cursor: its delta from the totals the cursor kept, and the
    // model its turn_context names.
    append(file, codex_turn("gpt-5.1"));
    append(file, codex_count(3102, 60, 168, "2026-11-29T02:46:45.731Z"));
    auto next = read_usage_records("codex", file, read.cursor);
    REQUIRE(next.entries.size() == 1);
    CHECK(next.entries[0].key == "rollout-2026-11-29T02-46-45-01a2.jsonl#3270");
    CHECK(next.entries[0].model == "gpt-5.1");
    CHECK(next.entries[0].input == 1021);
    CHECK(next.entries[0].cache_read == 30);
    CHECK(next.entries[0].output == 59);

    // Read whole again from the start: the same keys and the same figures.
    auto whole = read_usage_records("codex", file, nullptr);
    REQUIRE(whole.entries.size() == 3);
    CHECK(whole.entries[2].key == next.entries[0].key);
    CHECK(whole.entries[2].input == next.entries[0].input);
    CHECK(whole.entries[2].model == "gpt-5.1");
}

TEST_CASE("codex: an event without totals and a truncated event add nothing", "[usage_records]") {
    team::test::TempDir dir;
    fs::path file = dir.path() / "rollout-x.jsonl";
    append(file,
           "{\"timestamp\":\"2026-11-29T02:46:45.442Z\",\"type\":\"event_msg\",\"payload\":"
           "{\"type\":\"token_count\",\"info\":null,\"rate_limits\":{}}}\n");
    std::string count = codex_count(1017, 10, 53, "2026-11-29T02:46:45.609Z");
    append(file, count.substr(0, 30));
    auto read = read_usage_records("codex", file, nullptr);
    CHECK(read.entries.empty());
    append(file, count.substr(30));
    auto whole = read_usage_records("codex", file, read.cursor);
    REQUIRE(whole.entries.size() == 1);
    CHECK(whole.entries[0].input == 1007);
}

TEST_CASE("gemini: the JSONL chat file, a message repeated when updated counts once",
          "[usage_records]") {
    team::test::TempDir dir;
    fs::path file = dir.path() / "session-2026-11-29T02-47-db507a08.jsonl";
    append(
        file,
        R"({"sessionId":"db50","projectHash":"49b2","startTime":"2026-11-29T02:47:05.289Z","kind":"main"})"
        "\n");
    json first = gemini_message("3a00", 1017, 52, 10, 1);
    append(file, first.dump() + "\n");
    append(file, R"({"$set":{"lastUpdated":"2026-11-29T02:47:06.030Z"}})"
                 "\n");
    first["toolCalls"] = json::array({{{"id", "c1"}, {"name", "mcp_team_inbox_read"}}});
    append(file, first.dump() + "\n");
    append(file,
           json({{"$set", {{"messages", json::array({gemini_message("d46e", 1034, 54, 20, 2)})}}}})
                   .dump() +
               "\n");
    append(file, R"({"$rewindTo":"d46e"})"
                 "\n");

    auto read = read_usage_records("gemini", file, nullptr);
    REQUIRE(read.entries.size() == 2);
    const auto& a = read.entries[0];
    CHECK(a.key == "3a00");
    CHECK(a.model == "gemini-2.5-flash");
    CHECK(a.at == 1795920426030);
    CHECK(a.input == 1007);
    CHECK(a.cache_read == 10);
    CHECK(a.output == 53);  // thoughts included
    CHECK(read.entries[1].key == "d46e");
    CHECK(read_usage_records("gemini", file, read.cursor).entries.empty());
}

TEST_CASE("gemini: the older chat file, one document, is read whole when it changed",
          "[usage_records]") {
    team::test::TempDir dir;
    fs::path file = dir.path() / "session-2025-01-01T00-00-abcd.json";
    json doc = {{"sessionId", "abcd"},
                {"messages", json::array({{{"id", "u1"}, {"type", "user"}, {"content", "hi"}},
                                          gemini_message("g1", 1017, 52, 10, 1)})}};
    { std::ofstream(file) << doc.dump(2); }
    auto read = read_usage_records("gemini", file, nullptr);
    REQUIRE(read.entries.size() == 1);
    CHECK(read.entries[0].key == "g1");
    CHECK(read_usage_records("gemini", file, read.cursor).entries.empty());

    doc["messages"].push_back(gemini_message("g2", 2000, 40, 0, 0));
    { std::ofstream(file) << doc.dump(2) << "   "; }
    auto again = read_usage_records("gemini", file, read.cursor);
    REQUIRE(again.entries.size() == 2);  // all of them: their keys count them once
    CHECK(again.entries[1].key == "g2");
    CHECK(again.entries[1].input == 2000);
}

TEST_CASE("a transcript of ten thousand entries is read from the start at once",
          "[usage_records]") {
    team::test::TempDir dir;
    fs::path file = dir.path() / "long.jsonl";
    {
        std::ofstream out(file);
        for (int i = 0; i < 10000; ++i) {
            out << claude_user(std::string(300, 'x'));
            out << claude_entry("msg_" + std::to_string(i), "text", 1000 + i, 50, 0, 0,
                                "2026-11-29T02:45:49.391Z");
        }
    }
    auto started = std::chrono::steady_clock::now();
    auto read = read_usage_records("claude", file, nullptr);
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::steady_clock::now() - started)
                  .count();
    CHECK(read.entries.size() == 10000);
    CHECK(read.entries.back().input == 10999);
    CHECK(ms < 1000);  // ~40 ms for 12 MB at -O2; the bound leaves room for sanitizers
    CHECK(read_usage_records("claude", file, read.cursor).entries.empty());
}

TEST_CASE("every cut of an entry short of its end is read as nothing", "[usage_records]") {
    team::test::TempDir dir;
    std::string line = claude_entry("msg_1", "text", 1000, 50, 3, 4, "2026-11-29T02:45:49.391Z");
    line.pop_back();
    for (std::size_t n = 0; n < line.size(); ++n) {
        fs::path file = dir.path() / ("cut" + std::to_string(n) + ".jsonl");
        append(file, line.substr(0, n) + "\n");
        INFO(line.substr(0, n));
        CHECK(read_usage_records("claude", file, nullptr).entries.empty());
    }
    fs::path whole = dir.path() / "whole.jsonl";
    append(whole, line + "\n");
    CHECK(read_usage_records("claude", whole, nullptr).entries.size() == 1);
}
