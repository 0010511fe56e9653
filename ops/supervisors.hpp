// The two entries of the command line that are not verbs of the table: the supervisors team
// starts itself, `team __supervise ID` (the detached supervisor of one background shell,
// shells/supervise) and `team __agent ID` (the supervisor inside an agent's pane,
// team/pane_supervisor). Hidden, never typed by a person; the command line reaches them here,
// as it reaches the verbs through invoke.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ops/core.hpp"

namespace team::ops {

// Supervises the shell `id` until its command ends; `ready_fd` gets "ok PID" once it runs.
// Returns the process's exit code.
int supervise_shell(Core& core, const std::string& id, int ready_fd);

// Supervises the agent `agent_id` inside its pane until it ends. Returns the exit code.
int supervise_agent(Core& core, std::int64_t agent_id, std::optional<std::int64_t> spawner);

// Hosts the ACP agent `agent_id` (team/acp_host.hpp), run by its pane supervisor.
int host_acp_agent(Core& core, std::int64_t agent_id);

// Watches the worktree of agent `agent_id` (team/worktree_watch.hpp), started by its pane
// supervisor, while the agent lives.
int watch_worktree(Core& core, std::int64_t agent_id);

// What an agent's hook reports (team/hook_reports.hpp): `team __report NAME@TEAM KIND EVENT
// [JSON]`, the hook's JSON as the last argument or else on stdin. Prints nothing (a hook's
// stdout is read by its agent) and returns 0 whatever happens: a report never stops the agent.
int report_hook(Core& core, const std::string& agent, const std::string& kind,
                const std::string& event, const std::optional<std::string>& payload);

// Watches an agent's screen through its log (team/screen_watch.hpp), started by its pane
// supervisor.
// team __usage --home DIR ID: an agent's spending watched and its limits held (team/usage.hpp).
int watch_usage(Core& core, std::int64_t agent_id);
int watch_screen(Core& core, std::int64_t agent_id);

// Watches Claude Code's state file for an agent (team/claude_state_watch.hpp), started by its
// pane supervisor.
int watch_claude_state(Core& core, std::int64_t agent_id, std::int64_t pid, const std::string& dir);

// Runs the home's notify command for the event on stdin (team/notify.hpp).
int run_notify(Core& core, const std::string& command, long long bound_ms);

// The three processes of hosts (SPEC 16): `team __link NAME`, the home's link to host NAME
// (hosts/link.hpp); `team __keeper`, the keeper of this home's lease when it is a host
// (hosts/keeper.hpp); `team __channel`, the far end of a link, run by ssh (ops/remote.hpp).
int run_link(Core& core, const std::string& name, const std::string& ssh,
             const std::string& team_path, const std::string& version, int ready_fd);
int run_keeper(Core& core, int ready_fd);
int run_channel(const std::string& version);

}  // namespace team::ops
