// The transcript of one ACP session, in memory: every session/update applied as it arrives
// (consecutive chunks of one kind merged into one entry, tool calls upserted by id, the turn's
// plan replaced in place), with the prompts and stop reasons that frame each turn. Rendered as
// text for the pane and `team logs`, and as JSON records for --json and the dashboard.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "acp/updates.hpp"

namespace team::acp {

enum class EntryKind {
    prompt,        // what we sent: the turn's prompt text
    user_message,  // user_message_chunk (an agent replaying a loaded session)
    agent_message,
    agent_thought,
    tool_call,
    plan,
    mode,
    stop,   // how the turn ended: its stop reason, or why it failed
    other,  // an update kind we do not know: kept, not rendered
};

std::string entry_kind_name(EntryKind kind);

struct ToolCallState {
    std::string id, title, kind = "other", status = "pending";
    nlohmann::json content = nlohmann::json::array();
    nlohmann::json locations = nlohmann::json::array();
    nlohmann::json raw_input, raw_output;
};

struct Entry {
    EntryKind kind = EntryKind::other;
    int turn = 0;         // 1 for the first prompt's turn; 0 before any
    std::string text;     // prompt, chunks, mode id, stop reason, other's kind name
    ToolCallState tool;   // tool_call
    nlohmann::json data;  // plan: its entries; other: the raw update; stop: {"error"} if any
};

class Transcript {
  public:
    // A new turn: its prompt.
    void begin_turn(const std::string& prompt);
    // The end of the current turn: its stop reason ("end_turn", "cancelled", …) or, when it
    // failed, an empty reason and the error.
    void end_turn(const std::string& stop_reason, const std::string& error = "");
    void apply(const Update& update);

    const std::vector<Entry>& entries() const { return entries_; }
    int turn() const { return turn_; }
    const std::string& mode() const { return mode_; }
    const nlohmann::json& usage() const { return usage_; }  // the last usage_update, or null
    // How many updates were applied (a follower's cursor).
    std::size_t updates() const { return updates_; }

    // Readable lines, one block per entry (`other` entries left out).
    std::string render() const;
    // One JSON record per entry.
    nlohmann::json records() const;

  private:
    Entry* find_tool_call(const std::string& id);
    std::vector<Entry> entries_;
    int turn_ = 0;
    std::string mode_;
    nlohmann::json usage_;
    std::size_t updates_ = 0;
};

// An entry as its JSON record.
nlohmann::json entry_record(const Entry& entry);
// A record as readable lines (empty for `other`), and a whole transcript's records.
std::string render_record(const nlohmann::json& record);
std::string render_records(const nlohmann::json& records);

}  // namespace team::acp
