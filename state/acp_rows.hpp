// The ACP repository (SPEC 15): the session of each agent spawned with --acp, its queued prompt
// turns, its permission requests and its transcript, as the store keeps them. The rules are
// team/acp_agents.hpp's (the verbs) and team/acp_host.hpp's (the host in the agent's pane);
// these are the reads and writes they make. Writes run inside Store::write.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/time.hpp"
#include "state/store.hpp"

namespace team {

struct AcpSessionRow {
    std::int64_t agent_id = 0;
    std::int64_t team_id = 0;
    std::string policy = "ask";
    std::string state = "starting";  // starting | ready | needs_auth | ended
    std::optional<std::string> session_id;
    nlohmann::json agent_info;    // null until initialize answered
    nlohmann::json auth_methods;  // null unless it asked for authentication
    std::optional<std::string> end_reason, stderr_tail;
    std::int64_t cancels = 0;
    // The session its host loads (`session/load`) at its next start, set by a resume (SPEC 19).
    std::optional<std::string> load_from;
};

void insert_acp_session(Store& store, const AcpSessionRow& row);
std::optional<AcpSessionRow> load_acp_session(Store& store, std::int64_t agent_id);
// Those of these agents that are ACP agents, by agent id (one query).
std::vector<AcpSessionRow> acp_sessions_of_team(Store& store, std::int64_t team_id);
void set_acp_session_state(Store& store, std::int64_t agent_id, const std::string& state,
                           const std::optional<std::string>& session_id,
                           const nlohmann::json& agent_info, const nlohmann::json& auth_methods);
void set_acp_session_ended(Store& store, std::int64_t agent_id, const std::string& reason,
                           const std::string& stderr_tail);
// The agent has ended (every end records it, team/agent_end): its session, unless its host
// recorded the end first, is ended with `reason`; its open turns fail and its open permission
// requests expire. Nothing for an agent that is not an ACP agent (one lookup by key).
void end_acp_session(Store& store, std::int64_t agent_id, const std::string& reason, EpochMs at);
// The agent starts again (a resume, SPEC 19): its session is starting, and its host loads
// `load_from` (when given) instead of making a new one.
void reopen_acp_session(Store& store, std::int64_t agent_id,
                        const std::optional<std::string>& load_from);
// Its host has opened the session `load_from` asked for, or a new one in its place: nothing is
// left to load.
void clear_acp_session_load(Store& store, std::int64_t agent_id);
// One more cancel request; returns the new count.
std::int64_t add_acp_cancel(Store& store, std::int64_t agent_id);

struct AcpTurnRow {
    std::int64_t id = 0;
    std::int64_t agent_id = 0;
    std::string text;
    std::string source;            // who asked: "leader@t", "message 12"
    std::string state = "queued";  // queued | running | done | failed
    std::optional<std::string> stop_reason, error;
    EpochMs created_at = 0;
    std::optional<EpochMs> ended_at;
};

std::int64_t insert_acp_turn(Store& store, const AcpTurnRow& turn);
std::optional<AcpTurnRow> load_acp_turn(Store& store, std::int64_t id);
// The agent's turns not yet ended (queued or running), oldest first.
std::vector<AcpTurnRow> open_acp_turns(Store& store, std::int64_t agent_id);
// The queued turns with ids above `after`, oldest first (the host's cursor).
std::vector<AcpTurnRow> queued_acp_turns(Store& store, std::int64_t agent_id, std::int64_t after);
void set_acp_turn_running(Store& store, std::int64_t id);
void end_acp_turn(Store& store, std::int64_t id, const std::optional<std::string>& stop_reason,
                  const std::optional<std::string>& error, EpochMs at);
// Every open turn of the agent failed with `error` (its host ended). Returns how many.
int fail_open_acp_turns(Store& store, std::int64_t agent_id, const std::string& error, EpochMs at);

struct AcpPermissionRow {
    std::int64_t id = 0;
    std::int64_t team_id = 0;
    std::int64_t agent_id = 0;
    std::string agent;  // the agent's name (joined)
    std::int64_t number = 0;
    nlohmann::json tool_call;    // {toolCallId, title, kind, status, rawInput}
    nlohmann::json options;      // [{optionId, name, kind}]
    std::string state = "open";  // open | answering | answered | cancelled | expired
    std::optional<std::string> answer, answered_by;
    EpochMs created_at = 0;
    std::optional<EpochMs> closed_at;
};

std::int64_t insert_acp_permission(Store& store, const AcpPermissionRow& row);
std::optional<AcpPermissionRow> load_acp_permission(Store& store, std::int64_t id);
// A team's requests, oldest first: the open ones (open or answering), or all.
std::vector<AcpPermissionRow> acp_permissions_of_team(Store& store, std::int64_t team_id, bool all);
// The agent's requests answered but not yet handed to the agent.
std::vector<AcpPermissionRow> answering_acp_permissions(Store& store, std::int64_t agent_id);
std::optional<AcpPermissionRow> acp_permission_by_number(Store& store, std::int64_t agent_id,
                                                         std::int64_t number);
// open -> answering with the option chosen; false when it was not open any more.
bool answer_acp_permission(Store& store, std::int64_t id, const std::string& option,
                           const std::string& by);
// -> answered / cancelled / expired (the host, once the agent has it or it is gone).
void close_acp_permission(Store& store, std::int64_t id, const std::string& state,
                          const std::optional<std::string>& answer, EpochMs at);
// Every request of the agent still open or answering: expired (its host ended).
int expire_acp_permissions(Store& store, std::int64_t agent_id, EpochMs at);

// The transcript: one record per entry, replaced whole when it changes.
void put_acp_transcript(Store& store, std::int64_t agent_id, std::int64_t seq,
                        const nlohmann::json& record);
nlohmann::json acp_transcript(Store& store, std::int64_t agent_id);
// The seq after the agent's last entry (0 for none): where a host started again (a resume)
// writes its session's transcript, after the one kept from before.
std::int64_t next_acp_transcript_seq(Store& store, std::int64_t agent_id);

nlohmann::json to_json(const AcpPermissionRow& row, const std::string& team);
nlohmann::json to_json(const AcpTurnRow& turn);

}  // namespace team
