// What a coding agent's own hooks report (SPEC 17, FIELD-NOTES "What agents say about
// themselves"), turned into an activity report. A preset wires each hook to call
// `team __report --home HOME AGENT_ID KIND EVENT` with the hook's JSON on stdin (Codex's
// notify program gets it as its last argument instead); this reads it and records it.
//
//   Claude Code:  SessionStart idle · UserPromptSubmit working (a prompt taken) · PreToolUse,
//                 PostToolUse working (AskUserQuestion: waiting on a question) ·
//                 PermissionRequest waiting on a permission · Notification permission_prompt
//                 waiting (only a wait already reported: it comes 6 s late), idle_prompt idle
//                 · Stop idle
//   Codex:        the same hook names and payloads (its PermissionRequest names the tool
//                 Bash); Interrupt idle (the person stopped the turn: Escape, also at a
//                 permission dialog, where no other hook says it); notify
//                 agent-turn-complete idle (its preset no longer wires notify: it also
//                 fires for Codex's title thread, mid-turn)
//   Gemini CLI:   SessionStart idle · BeforeAgent working (a prompt taken) · BeforeTool,
//                 AfterTool working · Notification ToolPermission waiting on a permission ·
//                 AfterAgent idle
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "team/agent_activity.hpp"

namespace team {

// The agent kinds a report may come from: claude, codex, gemini.
bool is_hook_kind(std::string_view kind);

// The report of one hook `event` of a `kind` agent with its `payload`; none for an event that
// says nothing of the agent's activity (SessionEnd: its end is its process's).
std::optional<ActivityReport> hook_report(std::string_view kind, std::string_view event,
                                          const nlohmann::json& payload);

}  // namespace team
