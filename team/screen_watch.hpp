// The activity of an agent that says nothing of itself (SPEC 17): its pane. Everything the pane
// shows is appended to the agent's log as it comes (tmux pipe-pane, tmux/server.hpp); the pane
// supervisor of such an agent (source "screen") starts `team __screen --home HOME ID`, a child
// that ends with it (proc/companion.hpp), which looks at that file's size every kScreenLook:
// output is `working`, and no output for the `idle-after` setting (default 5 s) is `idle`, also
// from the start (a program that prints nothing). It
// writes only when the state changes, and ends when the agent has ended or a better source speaks
// for it. A screen never says `waiting`: that needs the agent's own report.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>

#include "state/store.hpp"

namespace team {

// How often a screen's watcher looks at its agent's log.
inline constexpr std::chrono::milliseconds kScreenLook{200};

// Starts the watcher of `agent_id`'s screen as a companion of this process. False when it could
// not be started.
bool start_screen_watch(const std::filesystem::path& home, std::int64_t agent_id);

// The body of `team __screen`: watches the agent's log until the agent ends.
int watch_screen(Store& store, std::int64_t agent_id);

}  // namespace team
