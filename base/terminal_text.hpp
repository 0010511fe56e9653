// Terminal output as text a person can read. A coding agent is a full-screen program: its pane's
// raw bytes (the agent's log) move the cursor, erase and redraw, and may switch to the alternate
// screen, so printed as they are they garble the reader's terminal. tmux renders them (see
// TmuxServer::capture_pane); these are for what is left when no pane can render them any more,
// and for a reader whose terminal takes no colour.
#pragma once

#include <string>
#include <string_view>

namespace team {

// Whether the output draws a screen rather than prints lines: cursor positioning or movement
// up/down, erasing the display, scroll regions, cursor save/restore, or the alternate screen.
// Colours, a carriage return (a progress bar) and erasing a line read fine as lines and do not
// count.
bool draws_screen(std::string_view raw);

// The text without escape sequences (CSI, OSC, DCS and the other strings, two-byte escapes) and
// without control characters other than newline and tab. A carriage return not followed by a
// newline starts the line again (what follows replaces it, as a progress bar is read); a
// backspace takes back the last character.
std::string strip_escapes(std::string_view raw);

}  // namespace team
