// The verbs of ACP agents (SPEC 15), over the store: a prompt queued as a turn (and waited for),
// a cancel asked for, the permission requests listed and answered. The agent's host (team/
// acp_host.hpp) acts on each of these the moment it is committed: it wakes on the store's
// changes. Spawning one is `team spawn --acp` (team/spawn.cpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/time.hpp"
#include "state/acp_rows.hpp"
#include "state/records.hpp"
#include "state/store.hpp"

namespace team {

// --permissions: ask | allow-reads | allow-all | deny; a usage error otherwise.
std::string check_acp_policy(const std::string& text);

// The program a preset stands for when spawned with --acp: claude -> claude-agent-acp, codex ->
// codex-acp, gemini -> gemini --experimental-acp, opencode -> opencode acp. Throws a usage error
// for another name.
std::vector<std::string> acp_preset_command(const std::string& preset);

// How a person answers a permission request: an option of the agent's by its id, or a decision
// that picks one (a deny is one of its reject_* options, never `cancelled`).
struct PermissionAnswer {
    std::optional<std::string> option;  // an optionId the agent offered
    std::string decision;               // "allow" | "deny" (when no option is named)
    bool always = false;
};

class AcpAgents {
  public:
    AcpAgents(Store& store, const Clock& clock) : store_(store), clock_(clock) {}

    // The agent's ACP session; refused (naming what to do instead) when it is not an ACP agent.
    AcpSessionRow session_of(const AgentRecord& agent);
    bool is_acp(const AgentRecord& agent);

    // Queues a prompt turn. Refused when the agent has ended or its session has.
    AcpTurnRow prompt(const AgentRecord& agent, const Caller& caller, const std::string& text);
    // The turn once it has ended, waiting up to `timeout` (none: forever); the turn as it
    // stands when the time ran out.
    AcpTurnRow wait_turn(std::int64_t id, std::optional<std::chrono::milliseconds> timeout,
                         bool& ended);
    // Asks the host to cancel the turn under way. Returns whether one was under way (or queued).
    bool cancel(const TeamRecord& team, const Caller& caller, const AgentRecord& agent);

    std::vector<AcpPermissionRow> permissions(const TeamRecord& team, bool all);
    // Records the answer (open -> answering); the host hands it to the agent. not_found for an
    // unknown id or one of another team; refused when it is no longer open; usage when the
    // option is not one the agent offered.
    AcpPermissionRow answer(const TeamRecord& team, const Caller& caller, std::int64_t id,
                            const PermissionAnswer& answer);

    // Each ACP agent of the team, by agent id: {state, policy, sessionId, turn, queued,
    // openPermissions, endReason}. One query each for sessions, turns and permissions.
    std::map<std::int64_t, nlohmann::json> states(const TeamRecord& team);

  private:
    Store& store_;
    const Clock& clock_;
};

// A turn's stop reason as the exit code of `prompt --wait` (docs/guide.md): end_turn 0,
// cancelled 130, any other (refusal, max_tokens, max_turn_requests) 5, a failed turn 1.
int stop_reason_exit_code(const AcpTurnRow& turn);

}  // namespace team
