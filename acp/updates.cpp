#include "acp/updates.hpp"

namespace team::acp {

using nlohmann::json;

namespace {

std::optional<std::string> string_field(const json& object, const char* name) {
    auto it = object.find(name);
    if (it == object.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
}

std::optional<json> json_field(const json& object, const char* name) {
    auto it = object.find(name);
    if (it == object.end() || it->is_null()) return std::nullopt;
    return *it;
}

}  // namespace

std::string content_text(const json& block) {
    if (!block.is_object()) return "";
    std::string type = block.value("type", std::string());
    if (type == "text" && block.contains("text") && block["text"].is_string())
        return block["text"].get<std::string>();
    if (type == "resource_link") return "[resource " + block.value("uri", std::string()) + "]";
    if (type == "resource" && block.contains("resource") && block["resource"].is_object()) {
        const json& r = block["resource"];
        if (r.contains("text") && r["text"].is_string()) return r["text"].get<std::string>();
        return "[resource " + r.value("uri", std::string()) + "]";
    }
    return "[" + (type.empty() ? std::string("content") : type) + "]";
}

Update read_update(const json& params) {
    Update u;
    if (!params.is_object()) return u;
    u.session_id = params.value("sessionId", std::string());
    auto it = params.find("update");
    if (it == params.end() || !it->is_object()) return u;
    const json& up = *it;
    u.raw = up;
    u.kind_name = string_field(up, "sessionUpdate").value_or("");
    const std::string& k = u.kind_name;
    if (k == "user_message_chunk" || k == "agent_message_chunk" || k == "agent_thought_chunk") {
        u.kind = k == "user_message_chunk"    ? UpdateKind::user_message
                 : k == "agent_message_chunk" ? UpdateKind::agent_message
                                              : UpdateKind::agent_thought;
        u.text = content_text(up.value("content", json(nullptr)));
    } else if (k == "tool_call" || k == "tool_call_update") {
        auto id = string_field(up, "toolCallId");
        if (!id) return u;  // not a tool call we can file: kept as `other`
        u.kind = k == "tool_call" ? UpdateKind::tool_call : UpdateKind::tool_call_update;
        u.tool.id = *id;
        u.tool.title = string_field(up, "title");
        u.tool.kind = string_field(up, "kind");
        u.tool.status = string_field(up, "status");
        u.tool.content = json_field(up, "content");
        u.tool.locations = json_field(up, "locations");
        u.tool.raw_input = json_field(up, "rawInput");
        u.tool.raw_output = json_field(up, "rawOutput");
    } else if (k == "plan" && up.contains("entries") && up["entries"].is_array()) {
        u.kind = UpdateKind::plan;
        u.plan = up["entries"];
    } else if (k == "current_mode_update" && string_field(up, "currentModeId")) {
        u.kind = UpdateKind::mode;
        u.mode = *string_field(up, "currentModeId");
    } else if (k == "usage_update") {
        u.kind = UpdateKind::usage;
        u.usage = json::object();
        for (const char* f : {"used", "size", "cost"})
            if (up.contains(f)) u.usage[f] = up[f];
    }
    return u;
}

}  // namespace team::acp
