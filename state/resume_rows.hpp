// What it takes to bring an agent back (SPEC 19), as the store keeps it beside the agent's
// record: its preset and command as asked, and its conversation (team/resume.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/time.hpp"
#include "state/store.hpp"

namespace team {

struct ResumeRow {
    std::int64_t agent_id = 0;
    std::optional<std::string> preset;  // claude, codex, gemini: wired again at each start
    std::vector<std::string> argv;      // the command as asked, before a preset's wiring
    // How its conversation resumes (claude, codex, gemini, acp), and its id; no kind: a command
    // whose conversation, if any, team cannot resume.
    std::optional<std::string> conversation;
    std::optional<std::string> conversation_id;
    int resumes = 0;
    std::optional<EpochMs> resumed_at;
};

// In the spawn's transaction.
void insert_resume_row(Store& store, const ResumeRow& row);
std::optional<ResumeRow> load_resume_row(Store& store, std::int64_t agent_id);

// The conversation's id as the agent's own report gives it (a hook's `session_id`): kept when
// the agent has a conversation team resumes and the id changed (Claude Code's /clear starts a
// new one). In the caller's transaction; true when it changed.
bool note_conversation_id(Store& store, std::int64_t agent_id, const std::string& id);

// The agent starts again (in the resume's transaction): its conversation as it starts now.
void mark_resumed(Store& store, std::int64_t agent_id, const std::optional<std::string>& id,
                  EpochMs at);

}  // namespace team
