#include "acp/transcript.hpp"

namespace team::acp {

using nlohmann::json;

std::string entry_kind_name(EntryKind kind) {
    switch (kind) {
        case EntryKind::prompt:
            return "prompt";
        case EntryKind::user_message:
            return "user_message";
        case EntryKind::agent_message:
            return "agent_message";
        case EntryKind::agent_thought:
            return "agent_thought";
        case EntryKind::tool_call:
            return "tool_call";
        case EntryKind::plan:
            return "plan";
        case EntryKind::mode:
            return "mode";
        case EntryKind::stop:
            return "stop";
        case EntryKind::other:
            return "other";
    }
    return "other";
}

void Transcript::begin_turn(const std::string& prompt) {
    ++turn_;
    entries_.push_back(Entry{EntryKind::prompt, turn_, prompt, {}, nullptr});
}

void Transcript::end_turn(const std::string& stop_reason, const std::string& error) {
    Entry e{EntryKind::stop, turn_, stop_reason, {}, nullptr};
    if (!error.empty()) e.data = {{"error", error}};
    entries_.push_back(std::move(e));
}

Entry* Transcript::find_tool_call(const std::string& id) {
    for (auto it = entries_.rbegin(); it != entries_.rend(); ++it)
        if (it->kind == EntryKind::tool_call && it->tool.id == id) return &*it;
    return nullptr;
}

void Transcript::apply(const Update& u) {
    ++updates_;
    auto chunk = [&](EntryKind kind) {
        if (!entries_.empty() && entries_.back().kind == kind && entries_.back().turn == turn_)
            entries_.back().text += u.text;
        else
            entries_.push_back(Entry{kind, turn_, u.text, {}, nullptr});
    };
    switch (u.kind) {
        case UpdateKind::user_message:
            return chunk(EntryKind::user_message);
        case UpdateKind::agent_message:
            return chunk(EntryKind::agent_message);
        case UpdateKind::agent_thought:
            return chunk(EntryKind::agent_thought);
        case UpdateKind::tool_call:
        case UpdateKind::tool_call_update: {
            Entry* e = find_tool_call(u.tool.id);
            if (!e) {
                entries_.push_back(Entry{EntryKind::tool_call, turn_, "", {}, nullptr});
                e = &entries_.back();
                e->tool.id = u.tool.id;
            }
            ToolCallState& t = e->tool;
            if (u.tool.title) t.title = *u.tool.title;
            if (u.tool.kind) t.kind = *u.tool.kind;
            if (u.tool.status) t.status = *u.tool.status;
            if (u.tool.content) t.content = *u.tool.content;
            if (u.tool.locations) t.locations = *u.tool.locations;
            if (u.tool.raw_input) t.raw_input = *u.tool.raw_input;
            if (u.tool.raw_output) t.raw_output = *u.tool.raw_output;
            return;
        }
        case UpdateKind::plan:
            // A plan update carries the whole plan: it replaces this turn's plan where it was.
            for (auto it = entries_.rbegin(); it != entries_.rend() && it->turn == turn_; ++it)
                if (it->kind == EntryKind::plan) {
                    it->data = u.plan;
                    return;
                }
            entries_.push_back(Entry{EntryKind::plan, turn_, "", {}, u.plan});
            return;
        case UpdateKind::mode:
            mode_ = u.mode;
            entries_.push_back(Entry{EntryKind::mode, turn_, u.mode, {}, nullptr});
            return;
        case UpdateKind::usage:
            usage_ = u.usage;
            return;
        case UpdateKind::other:
            entries_.push_back(Entry{EntryKind::other, turn_, u.kind_name, {}, u.raw});
            return;
    }
}

namespace {

std::string plan_mark(const std::string& status) {
    if (status == "completed") return "[x]";
    if (status == "in_progress") return "[~]";
    return "[ ]";
}

// A tool call's content as text: its text blocks, and "diff PATH" for diffs.
std::string tool_content_text(const json& content) {
    std::string out;
    if (!content.is_array()) return out;
    for (const json& item : content) {
        if (!item.is_object()) continue;
        std::string type = item.value("type", std::string());
        std::string line;
        if (type == "content")
            line = content_text(item.value("content", json(nullptr)));
        else if (type == "diff")
            line = "diff " + item.value("path", std::string());
        else if (type == "terminal")
            line = "terminal " + item.value("terminalId", std::string());
        if (line.empty()) continue;
        if (!out.empty()) out += '\n';
        out += line;
    }
    return out;
}

void indented(std::string& out, const std::string& text, const std::string& prefix) {
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        out += prefix + text.substr(start, end - start) + "\n";
        start = end + 1;
    }
}

}  // namespace

std::string render_record(const json& r) {
    std::string out;
    std::string kind = r.value("kind", std::string());
    auto text = [&] { return r.value("text", std::string()); };
    if (kind == "prompt") {
        indented(out, text(), "> ");
    } else if (kind == "user_message") {
        indented(out, text(), "user: ");
    } else if (kind == "agent_message") {
        indented(out, text(), "");
    } else if (kind == "agent_thought") {
        indented(out, text(), "(thinking) ");
    } else if (kind == "tool_call") {
        json t = r.value("toolCall", json::object());
        std::string title = t.value("title", std::string());
        out += "[" + t.value("kind", std::string("other")) + "] " +
               (title.empty() ? t.value("toolCallId", std::string()) : title) + " — " +
               t.value("status", std::string()) + "\n";
        std::string body = tool_content_text(t.value("content", json::array()));
        if (!body.empty()) indented(out, body, "    ");
    } else if (kind == "plan") {
        out += "plan:\n";
        for (const json& step : r.value("entries", json::array()))
            if (step.is_object())
                out += "  " + plan_mark(step.value("status", std::string())) + " " +
                       step.value("content", std::string()) + "\n";
    } else if (kind == "mode") {
        out += "mode: " + r.value("mode", std::string()) + "\n";
    } else if (kind == "stop") {
        if (r.contains("error") && r["error"].is_string())
            out += "— turn failed: " + r["error"].get<std::string>() + "\n";
        else if (r.contains("stopReason") && r["stopReason"].is_string())
            out += "— " + r["stopReason"].get<std::string>() + "\n";
    }
    return out;
}

std::string render_records(const json& records) {
    std::string out;
    for (const json& r : records) out += render_record(r);
    return out;
}

std::string Transcript::render() const {
    return render_records(records());
}

json entry_record(const Entry& e) {
    json r = {{"kind", entry_kind_name(e.kind)}, {"turn", e.turn}};
    switch (e.kind) {
        case EntryKind::tool_call:
            r["toolCall"] = {{"toolCallId", e.tool.id},      {"title", e.tool.title},
                             {"kind", e.tool.kind},          {"status", e.tool.status},
                             {"content", e.tool.content},    {"locations", e.tool.locations},
                             {"rawInput", e.tool.raw_input}, {"rawOutput", e.tool.raw_output}};
            break;
        case EntryKind::plan:
            r["entries"] = e.data;
            break;
        case EntryKind::mode:
            r["mode"] = e.text;
            break;
        case EntryKind::stop:
            r["stopReason"] = e.text.empty() ? json(nullptr) : json(e.text);
            r["error"] = e.data.is_object() ? e.data["error"] : json(nullptr);
            break;
        case EntryKind::other:
            r["updateKind"] = e.text;
            r["raw"] = e.data;
            break;
        default:
            r["text"] = e.text;
            break;
    }
    return r;
}

json Transcript::records() const {
    json out = json::array();
    for (const Entry& e : entries_) out.push_back(entry_record(e));
    return out;
}

}  // namespace team::acp
