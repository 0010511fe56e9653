// The instructions of an agent of a team (issue 24): one text, given by every spawn preset
// (Claude Code's --append-system-prompt, Codex's developer_instructions) and by `team mcp` as its
// `instructions` at initialize (how Gemini CLI gets them), and quoted in docs/mcp.md. It tells the
// agent to answer shutdown requests, to read its inbox when a notice or a push says a message is
// waiting, and to take and report work through the team's tools.
#pragma once

#include <string>

namespace team {

// The text for agent `agent` of team `team`; with no agent (a server acting as the leader, or
// whose caller is not known), the same rules with a general first sentence.
std::string agent_instructions(const std::string& agent, const std::string& team);

}  // namespace team
