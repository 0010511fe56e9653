// What each agent is doing (SPEC 17): `starting`, `working`, `waiting` (for a person: a
// permission, a question), `idle` (its turn is over) or `ended`, with since when, the source
// that said so and, while waiting, what it waits on.
//
// Sources, best first: the agent's own reports (the hooks its preset wires call
// `team __report`, team/hook_reports.hpp), the ACP host (turns, permission requests), and for
// any other program its pane (team/screen_watch.hpp: output is `working`, a screen still for
// `idle-after` is `idle`). The source an agent gets is chosen at its spawn; a report from a
// lesser source than the one it has is dropped, so the screen never overrides what the agent
// said of itself. `ended` is the agent's record's end, not a report.
//
// Attention: when an agent starts waiting (it was not, or it now waits on something else), its
// leader gets one inbox message of type `needs_input` (who, what it waits on, the command that
// answers), in the same transaction; a report of the same wait again sends nothing. The home's
// notify command hears of it (team/notify.hpp), and of each `idle` and each end.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/time.hpp"
#include "state/agent_activity_rows.hpp"
#include "state/records.hpp"
#include "state/store.hpp"

namespace team {

// The states a look shows, in the order `team wait --until` lists them.
const std::vector<std::string>& activity_states();

struct ActivityReport {
    std::string state;   // working | waiting | idle
    std::string source;  // hooks | acp | screen
    // While waiting: {kind: permission | question, tool, command, file, text, answer}; null
    // when the source does not say (a report of a wait already known then keeps its detail).
    nlohmann::json waiting_on = nullptr;
    bool prompt_taken = false;  // the agent took a prompt (a submitted-prompt report)
    // A late notice of a wait another report started (Claude Code's Notification, 6 s after
    // the dialog): taken only while the agent still waits, so that one coming after the
    // person answered never starts a second wait.
    bool only_while_waiting = false;
    // A start that must not end a wait already reported (an ACP turn's start, written after the
    // permission request its agent sent at once).
    bool unless_waiting = false;
    std::string event;  // what the source reported, for the log (UserPromptSubmit…)
    // More for the data of the leader's needs_input message (an ACP permission: its id, the
    // tool call, the options).
    nlohmann::json data = nullptr;
};

// Where an agent's activity comes from, chosen at spawn: "hooks" (a preset that wires them),
// "acp", else "screen".
void start_agent_activity(Store& store, std::int64_t agent_id, const std::string& source,
                          EpochMs at);

class AgentActivity {
  public:
    AgentActivity(Store& store, const Clock& clock) : store_(store), clock_(clock) {}

    // Records `report` of a live agent, in one write: its row, an `agent_state` entry of the
    // activity log when the state changes, and the attention of a new wait. Returns whether it
    // was taken (false: the agent has ended, or a better source speaks for it).
    bool report(std::int64_t agent_id, const ActivityReport& report);
    // The same inside the caller's write.
    bool report_in_write(std::int64_t agent_id, const ActivityReport& report);

  private:
    Store& store_;
    const Clock& clock_;
};

// An agent's activity as every look shows it: {state, since, source, waitingOn}; null for a
// member with no source (the leader, an agent from before schema 14).
nlohmann::json activity_json(const AgentRecord& agent, const AgentActivityRow* row);

// The state name of `activity_json`'s document ("" when null).
std::string activity_state(const nlohmann::json& activity);

}  // namespace team
