// The activity of an agent that says nothing of itself (SPEC 17): its pane. The pane supervisor
// of such an agent (source "screen") has tmux pipe the pane's output into
// `team __screen --home HOME ID` (tmux pipe-pane -O), which reads it as it comes: output is
// `working`, and a pane with no output for the `idle-after` setting (default 5 s) is `idle`. It
// writes only when the state changes, and ends with the pane (its stdin closes), or when the
// agent has ended or a better source speaks for it. A screen never says `waiting`: that needs
// the agent's own report.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "state/store.hpp"
#include "tmux/tmux.hpp"

namespace team {

// Pipes `pane_id`'s output into the watcher of `agent_id`. False when tmux refused.
bool start_screen_watch(tmux::Tmux& tmux, const std::string& pane_id,
                        const std::filesystem::path& home, std::int64_t agent_id);

// The body of `team __screen`: reads the pane's output from stdin until it closes.
int watch_screen(Store& store, std::int64_t agent_id);

}  // namespace team
