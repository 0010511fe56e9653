// Spawn presets (issue 17): `team spawn NAME --preset claude|codex|gemini [-- CMD ...]` starts a
// coding agent that knows its team from its first second: `team mcp` wired in as an MCP server
// (acting as the agent: --home, --team and --as are given explicitly, since harnesses may start
// MCP servers with a scrubbed environment) and a short instruction to answer shutdown requests,
// claim tasks and report through the inbox. Each preset also lets the agent call that server's
// tools, and only that server's, without asking its person (issue 37), in the agent's own terms:
// Claude Code's --allowedTools, Codex's default_tools_approval_mode, Gemini CLI's trust. The
// flags were checked against the CLIs from npm (Claude Code 2.1.197, Codex 0.169.0, Gemini CLI
// 0.61.0), each interactive in a pane with nothing allowed beforehand: docs/mcp.md says how.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace team {

// The presets' names, as --preset takes them.
const std::vector<std::string>& preset_names();

struct PresetTarget {
    std::string preset;          // one of preset_names()
    std::string team_binary;     // the absolute path of `team`
    std::filesystem::path home;  // the home the agent belongs to
    std::string team;            // its team's name
    std::string agent;           // its name
    // Its conversation (SPEC 19), for Claude Code and Gemini CLI, which take an id up front:
    // `resume` (its id) resumes that conversation; else `session` starts one with that id
    // (with neither, a new id is chosen). Codex takes only a conversation to resume (its
    // thread id, learned from its hooks).
    std::optional<std::string> resume;
    std::optional<std::string> session;
};

// How a preset's agent keeps its conversation (SPEC 19): its kind (claude, codex, gemini) and
// its id when team chose it (Claude Code, Gemini CLI), or nothing when the agent's own reports
// will say it (Codex; a command that names its own session).
struct ConversationPlan {
    std::string kind;
    std::optional<std::string> id;
};

struct PresetWiring {
    std::vector<std::string> argv;  // the command with the preset's flags after its program
    std::vector<std::string> env;   // K=V to add to the agent's environment
    // A file the preset needs (Gemini's settings): its path and content; empty when none.
    std::filesystem::path file;
    std::string file_content;
    ConversationPlan conversation;
};

// The command `argv` (or the preset's program when empty) with the preset's flags. Throws a
// usage error for an unknown preset, naming the ones there are.
PresetWiring wire_preset(const PresetTarget& target, const std::vector<std::string>& argv);

// A random version 4 UUID, as Claude Code's and Gemini CLI's --session-id take it.
std::string new_uuid();

// Why Gemini CLI would skip a system settings file that team writes at `file` (as this process's
// user, mode 0600, in directories it makes with mode 0700), or nothing when it would read it.
// Gemini CLI (0.61) reads such a file only when root owns it and every directory above it, none
// of them writable by group or others, and no symbolic link on the way owned by another user; it
// skips one that fails with only a warning, and its agent then starts without the team's tools.
std::optional<std::string> gemini_settings_skipped(const std::filesystem::path& file);

// What to do when Gemini CLI would skip the settings file: a home elsewhere (root), or the
// user's own Gemini settings (any other user).
std::string gemini_settings_fix();

// The refusal of a Gemini preset whose settings file Gemini CLI would skip: the reason and what
// to do about it; nothing when it would read the file.
std::optional<std::string> gemini_settings_refusal(const std::filesystem::path& file);

}  // namespace team
