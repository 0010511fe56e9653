// A prompt that is taken (SPEC 17): `team prompt A TEXT` returns once the agent has taken the
// text, and fails with what the screen showed when it did not within the timeout. Text left
// sitting in an input box is never reported delivered.
//
// Taken is, whichever comes first after the text was typed:
//   - an agent with hooks (a preset): its report of a submitted prompt (UserPromptSubmit,
//     BeforeAgent), which moves its activity's prompted_at past the typing; or, typed while it
//     was `waiting` (an answer to its dialog: `team prompt w1 1`, typed without Enter, which
//     would land in what the dialog leaves: Enter only for text still on the cursor's line a
//     second on), its report that the wait ended (PostToolUse, AfterTool: it works again) or
//     its screen as below (the key read, the dialog gone: an allowed command runs before
//     PostToolUse comes);
//     while no report came, an Enter the agent took for a newline (the text's end above an
//     empty input line: Gemini CLI, after a paste) is pressed again, once a second; so is an
//     Enter the agent dropped (the text still on the cursor's line), and text of which nothing
//     shows (its keys dropped) is typed again, at most twice. A prompt is not typed while Gemini
//     CLI shows "Resuming session..." (a resumed conversation loading, its keys dropped: it
//     reports SessionStart before, and draws it a little after that report);
//   - any pane agent: its terminal's input queue is empty (the program read what was typed; a
//     program that does not read, `sleep`, leaves it there), and either the terminal is in line
//     mode (a read takes the whole line, its Enter included) or, for a program that reads key by
//     key and may keep the text in an input box, the line its cursor is on no longer shows the
//     end of the text and the screen is not what it was before the typing (output followed).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "base/time.hpp"
#include "state/store.hpp"
#include "tmux/tmux.hpp"

namespace team {

struct PromptTaken {
    bool taken = false;
    std::string how;     // "report", "screen"; not taken: "dialog" (a notice left at a dialog)
    std::string screen;  // what the pane showed when it was not taken
};

// What is typed: a prompt (at a dialog, its answer) or a notice of team's own (a shutdown
// request's), which never answers a dialog: typed to an agent its hooks say waits, it is pasted
// (a dialog ignores a paste) and entered only when it shows in the agent's input box (the wait
// was over: Gemini CLI reports none when its dialog is refused); otherwise it is left there,
// not taken, `how` "dialog".
enum class Typed { prompt, notice };

// Types `text` into `pane_id` and presses Enter, then waits until the agent `agent_id` has taken
// it, at most `timeout`.
PromptTaken type_and_wait_taken(Store& store, tmux::Tmux& tmux, std::int64_t agent_id,
                                const std::string& pane_id, const std::string& text,
                                std::chrono::milliseconds timeout, const Clock& clock,
                                Typed typed = Typed::prompt);

}  // namespace team
