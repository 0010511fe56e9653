// Claude Code's own state file (FIELD-NOTES "What agents say about themselves"): beside its hooks,
// Claude Code keeps $CLAUDE_CONFIG_DIR/sessions/<pid>.json up to date, its `status` busy ->
// waiting -> busy -> idle. It says what no hook does: that a permission dialog was answered (and
// the command is running, long before its PostToolUse) or refused ("no" fires no hook at all).
// The pane supervisor of a Claude Code agent with hooks starts `team __claude-state --home HOME
// ID PID DIR`, a child that ends with it (proc/companion.hpp), which looks at that file every
// 200 ms (team/screen_watch.hpp's kScreenLook) and reports each change of its status: busy is
// working, idle is idle, and waiting only confirms a wait a hook reported (it carries no detail,
// and a wait is told once, with what it waits on).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "state/store.hpp"

namespace team {

// Whether `argv` runs Claude Code: its program's name says so.
bool runs_claude_code(const std::vector<std::string>& argv);

// Claude Code's configuration directory in the environment `env` ("K=V"): CLAUDE_CONFIG_DIR,
// else $HOME/.claude.
std::filesystem::path claude_config_dir(const std::vector<std::string>& env);

// Starts the watcher of agent `agent_id`'s state file (Claude Code's pid `pid`, its
// configuration directory `dir`) as a companion of this process. False when it could not start.
bool start_claude_state_watch(const std::filesystem::path& home, std::int64_t agent_id,
                              std::int64_t pid, const std::filesystem::path& dir);

// The body of `team __claude-state`: reports the file's changes until the agent ends.
int watch_claude_state(Store& store, std::int64_t agent_id, std::int64_t pid,
                       const std::filesystem::path& dir);

}  // namespace team
