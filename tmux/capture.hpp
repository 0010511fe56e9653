// What a pane shows, as tmux renders it (issue 18: reading full-screen agents). Beside
// TmuxServer rather than in it: a reader of screens needs this one call only.
#pragma once

#include <optional>
#include <string>

#include "tmux/tmux.hpp"

namespace team::tmux {

// The pane's text, with colours and attributes as SGR escapes (-e) and nothing else of the
// terminal's (no cursor movement), wrapped lines joined (-J); `history`: the scrollback before
// the visible screen too (-S -). Trailing blanks of lines and blank lines at the end are left
// out. Nothing when the pane or the server is gone; a `failed` error when tmux fails otherwise.
std::optional<std::string> capture_pane(Tmux& tmux, const std::string& pane_id, bool history);

}  // namespace team::tmux
