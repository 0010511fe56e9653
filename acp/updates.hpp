// `session/update` notifications as typed records (STYLE 20): the wire's JSON is read here once,
// and nothing deeper knows its field names. Kinds this client does not know, and fields it does
// not read, are kept as JSON (`raw`) and otherwise ignored; `_meta` is tolerated anywhere.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace team::acp {

enum class UpdateKind {
    user_message,   // user_message_chunk
    agent_message,  // agent_message_chunk
    agent_thought,  // agent_thought_chunk
    tool_call,      // tool_call: a new tool call
    tool_call_update,
    plan,
    mode,   // current_mode_update
    usage,  // usage_update
    other,  // any other kind (available_commands_update, ones newer than us): kept, ignored
};

// What a tool call update changes: only the fields it carries.
struct ToolCallPatch {
    std::string id;
    std::optional<std::string> title, kind, status;
    std::optional<nlohmann::json> content, locations, raw_input, raw_output;
};

struct Update {
    UpdateKind kind = UpdateKind::other;
    std::string kind_name;  // the wire's `sessionUpdate` ("agent_message_chunk", "future_kind")
    std::string session_id;
    std::string text;      // chunks: their text (other content as "[image]", "[resource …]")
    ToolCallPatch tool;    // tool_call and tool_call_update
    nlohmann::json plan;   // plan: its entries [{content, priority, status}]
    std::string mode;      // current_mode_update: currentModeId
    nlohmann::json usage;  // usage_update: {used, size[, cost]}
    nlohmann::json raw;    // the update object as it came
};

// Reads the params of a session/update. Never throws: what it cannot read is an `other` update
// with its raw JSON.
Update read_update(const nlohmann::json& params);

// A content block (text, image, resource_link, …) as text for a transcript.
std::string content_text(const nlohmann::json& block);

}  // namespace team::acp
