// Agents in tmux panes (SPEC 4): spawn, list with reconciliation, and the supervisor that runs
// inside each agent's pane.
//
// A pane does not run the agent's command directly: it runs `team __agent ID`, a Supervisor
// (proc/supervisor.hpp) that starts the command on the pane's terminal, in a process group of
// its own, as a child subreaper, records its pid, and when the command ends kills its own pane
// (the session and the server go with their last pane), then records how it ended and hands its
// tasks back. So an agent's exit code or signal is never lost, and its escaped descendants can be
// found. If the supervisor itself is killed, the next command that looks at agents (reconcile)
// ends what is left of the agent's tree and marks it `lost`.
// Files: agents.cpp (colours, list, find), spawn.cpp, pane_supervisor.cpp, reconcile.cpp.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/time.hpp"
#include "proc/processes.hpp"
#include "state/host_rows.hpp"
#include "state/store.hpp"
#include "state/usage_rows.hpp"
#include "team/resume.hpp"
#include "team/teams.hpp"
#include "team/worktrees.hpp"
#include "tmux/server.hpp"

namespace team {

struct SpawnRequest {
    std::string name;
    std::string role;
    std::optional<std::string> cwd;  // default: the team's
    std::vector<std::string> env;    // "K=V"
    std::optional<std::string> color;
    std::vector<std::string> argv;  // may be empty with a preset (its program)
    // Wires `team mcp` and the agent instructions into a known coding agent (team/presets).
    std::optional<std::string> preset;
    // Tell it of shutdown requests in its pane too (always so with a preset): AgentRecord::notify.
    bool notify = false;
    // A git worktree of its own, on its own branch (SPEC 14): the agent starts in it.
    std::optional<WorktreeAsk> worktree;
    // Hosted over the Agent Client Protocol (SPEC 15), with this permission policy: the pane
    // runs `team __acp ID` (team/acp_host.hpp), which runs the command as an ACP agent.
    std::optional<std::string> acp_policy;
    // What it may spend (SPEC 18, team/usage.hpp): held to by team.
    UsageLimits limits;
};

// The pool of agent colours, in the order they are handed out.
const std::vector<std::string>& color_pool();

class Agents {
  public:
    Agents(Store& store, const Clock& clock, tmux::Tmux& tmux,
           proc::Processes& processes = proc::system_processes())
        : store_(store), clock_(clock), tmux_(tmux), processes_(processes) {}

    // Leader only. Returns once the agent's pane and process are confirmed alive. A command that
    // cannot start leaves no record and no pane.
    AgentRecord spawn(const TeamRecord& team, const Caller& caller, const SpawnRequest& request);
    // Leader only. Starts lost agents again (SPEC 19, team/resume.hpp): the outcome of each, in
    // the order asked (--all: by name). Named agents that cannot be resumed refuse the whole
    // call, before anything starts; with --all they are skipped, with why.
    std::vector<ResumeOutcome> resume(const TeamRecord& team, const Caller& caller,
                                      const ResumeAsk& ask);

    // The worktree the last spawn made (with --worktree), as its result shows it; else null.
    const nlohmann::json& spawned_worktree() const { return spawned_worktree_; }

    // Checks every live agent of the team against its supervisor, the OS and tmux, and marks
    // those whose process has ended as terminated (tasks handed back). Returns how many changed.
    int reconcile(const TeamRecord& team);

    // Live agents (all: terminated ones too), after reconciliation.
    std::vector<AgentRecord> list(const TeamRecord& team, bool all);
    // A live agent by name; not found: with did-you-mean. `all`: the newest record of that name.
    AgentRecord find(const TeamRecord& team, const std::string& name, bool all = false);

    // Where an agent's pane output is kept.
    std::filesystem::path log_path(const TeamRecord& team, const AgentRecord& agent) const;

    // The body of the hidden `team __agent ID`, run inside the agent's pane.
    // `spawner`: the pid of the spawn or resume that opened the pane; the record must be its.
    static int supervise(Store& store, std::int64_t agent_id,
                         std::optional<std::int64_t> spawner = std::nullopt);

    tmux::TmuxServer server() { return tmux::TmuxServer(tmux_); }

  private:
    // Another home's agent on a host whose lease has run out: recorded as ended (lost),
    // its tasks handed back, the host marked lost. True when this call recorded it.
    bool end_if_host_lost(const std::vector<HostRecord>& hosts, const AgentRecord& agent);

    Store& store_;
    const Clock& clock_;
    tmux::Tmux& tmux_;
    proc::Processes& processes_;
    nlohmann::json spawned_worktree_ = nullptr;
};

}  // namespace team
