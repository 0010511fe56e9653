// What a person reads of an agent's pane (issue 18). A coding agent is a full-screen program, so
// its log (the pane's raw bytes) moves the cursor and redraws; printed as it is it garbles the
// reader's terminal. tmux renders those bytes into the pane's screen and scrollback, so while
// the pane lives, tmux's rendering is what is read (tmux/capture.hpp); just before the
// pane goes, its pane supervisor keeps that rendering beside the log (NAME-ID.screen), and that
// is what is read once the agent has ended. Logs that only print lines are read as they are.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "state/records.hpp"
#include "tmux/tmux.hpp"

namespace team {

// Where the rendered history of the agent whose log is `log_file` is kept: beside it, .screen.
std::filesystem::path screen_file(const std::filesystem::path& log_file);

// When the log draws a screen (one that prints lines needs no rendering and costs no tmux call),
// keeps the pane's rendered history (scrollback and screen, colours as SGR escapes) in the
// screen file of `log_file`, written whole (a reader never sees half of it), mode 0600. Never
// throws: the record of the agent's end matters more.
void keep_screen(tmux::Tmux& tmux, const std::string& pane_id,
                 const std::filesystem::path& log_file) noexcept;

struct ReadableLog {
    std::string text;
    // "log": the log as it is (it prints lines); "pane": rendered by the live pane; "kept": the
    // rendering kept when the pane went; "stripped": the log without its escapes (no rendering
    // was kept, e.g. the pane's supervisor was killed).
    std::string source;
};

// The agent's log, `raw`, as a person reads it (see the top of this file).
ReadableLog readable_log(tmux::Tmux& tmux, const AgentRecord& agent, const std::string& raw);

// The agent's screen now, as tmux renders it (`history`: with the scrollback), while its pane
// lives; nothing once it is gone.
std::optional<std::string> live_screen(tmux::Tmux& tmux, const AgentRecord& agent, bool history);

}  // namespace team
