#include "team/hook_reports.hpp"

#include <string>

namespace team {

using nlohmann::json;

namespace {

std::string text_of(const json& doc, const char* key) {
    if (!doc.is_object() || !doc.contains(key) || !doc[key].is_string()) return "";
    return doc[key].get<std::string>();
}

ActivityReport make(std::string state, std::string_view event, bool prompt = false) {
    ActivityReport r;
    r.state = std::move(state);
    r.source = "hooks";
    r.event = std::string(event);
    r.prompt_taken = prompt;
    return r;
}

// A permission asked for a tool: its name and its command or file, as the hook gives them.
json permission(const std::string& tool, const json& input) {
    json on = {{"kind", "permission"}};
    if (!tool.empty()) on["tool"] = tool;
    for (const char* key : {"command", "cmd"}) {
        if (auto c = text_of(input, key); !c.empty()) {
            on["command"] = c;
            break;
        }
        if (input.is_object() && input.contains(key) && input[key].is_array()) {
            std::string joined;
            for (const auto& part : input[key]) {
                if (part.is_string())
                    joined += (joined.empty() ? "" : " ") + part.get<std::string>();
            }
            on["command"] = joined;
            break;
        }
    }
    for (const char* key : {"file_path", "path", "filePath", "notebook_path"}) {
        if (auto f = text_of(input, key); !f.empty()) {
            on["file"] = f;
            break;
        }
    }
    return on;
}

// Claude Code's AskUserQuestion: the first question's text.
json question(const json& input) {
    json on = {{"kind", "question"}};
    if (input.is_object() && input.contains("questions") && input["questions"].is_array() &&
        !input["questions"].empty()) {
        if (auto q = text_of(input["questions"][0], "question"); !q.empty()) on["text"] = q;
    }
    return on;
}

std::optional<ActivityReport> claude_or_codex(std::string_view event, const json& p) {
    // Codex's Interrupt: the person stopped the turn (Escape, also at its permission dialog).
    if (event == "SessionStart" || event == "Stop" || event == "Interrupt") {
        return make("idle", event);
    }
    if (event == "UserPromptSubmit") return make("working", event, true);
    if (event == "PreToolUse" || event == "PostToolUse") {
        std::string tool = text_of(p, "tool_name");
        if (event == "PreToolUse" && tool == "AskUserQuestion") {
            auto r = make("waiting", event);
            r.waiting_on = question(p.value("tool_input", json::object()));
            return r;
        }
        return make("working", event);
    }
    if (event == "PermissionRequest") {
        auto r = make("waiting", event);
        r.waiting_on = permission(text_of(p, "tool_name"), p.value("tool_input", json::object()));
        return r;
    }
    if (event == "Notification") {
        std::string type = text_of(p, "notification_type");
        std::string message = text_of(p, "message");
        if (type == "permission_prompt" ||
            (type.empty() && message.find("permission") != std::string::npos)) {
            // The dialog a PermissionRequest reported, 6 s on: never a wait of its own.
            auto r = make("waiting", event);
            r.only_while_waiting = true;
            return r;
        }
        if (type == "idle_prompt") return make("idle", event);
        if (type == "elicitation_dialog") {
            auto r = make("waiting", event);
            r.waiting_on = {{"kind", "question"}, {"text", message}};
            return r;
        }
        return std::nullopt;
    }
    // Codex's notify program: agent-turn-complete at each turn's end.
    if (event == "notify") {
        if (text_of(p, "type") == "agent-turn-complete") return make("idle", event);
        return std::nullopt;
    }
    return std::nullopt;
}

std::optional<ActivityReport> gemini(std::string_view event, const json& p) {
    if (event == "SessionStart" || event == "AfterAgent") return make("idle", event);
    if (event == "BeforeAgent") return make("working", event, true);
    if (event == "BeforeTool" || event == "AfterTool") return make("working", event);
    if (event == "Notification" && text_of(p, "notification_type") == "ToolPermission") {
        auto r = make("waiting", event);
        json details = p.value("details", json::object());
        json on = {{"kind", "permission"}};
        std::string type = text_of(details, "type");
        if (auto t = text_of(details, "title"); !t.empty()) on["tool"] = t;
        if (type == "exec") {
            if (auto c = text_of(details, "command"); !c.empty()) on["command"] = c;
        } else if (type == "edit") {
            if (auto f = text_of(details, "filePath"); !f.empty()) on["file"] = f;
        } else if (type == "mcp") {
            if (auto t = text_of(details, "toolName"); !t.empty()) on["tool"] = t;
        }
        r.waiting_on = on;
        return r;
    }
    return std::nullopt;
}

}  // namespace

bool is_hook_kind(std::string_view kind) {
    return kind == "claude" || kind == "codex" || kind == "gemini";
}

std::optional<ActivityReport> hook_report(std::string_view kind, std::string_view event,
                                          const json& payload) {
    if (kind == "gemini") return gemini(event, payload);
    if (kind == "claude" || kind == "codex") return claude_or_codex(event, payload);
    return std::nullopt;
}

}  // namespace team
