// What the program hosting an ACP agent provides to the client (acp/client.hpp): where
// permission requests go (the leader's inbox, next), its terminals (team's shells, next), and
// what it is told as the session goes (updates for the pane and the store, automatic answers
// and writes for the activity log, the end of the connection). Every call comes from one of
// the client's threads, never while the client holds its lock: a host may call back into it.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "acp/permissions.hpp"
#include "acp/terminals.hpp"

namespace team::acp {

struct AuthMethod {
    std::string id, name, description;
};

// How a turn ended: the agent's stop reason, or why it failed (the connection's end).
struct TurnResult {
    std::string stop_reason;  // "end_turn", "cancelled", …; empty when it failed
    std::string error;
    // The reply's `usage`, when the agent gives one (the turn's tokens: inputTokens,
    // outputTokens, cachedReadTokens, cachedWriteTokens); null otherwise.
    nlohmann::json usage;
    bool ok() const { return error.empty(); }
};

class Host {
  public:
    virtual ~Host() = default;

    // A permission request that the policy leaves to a person. The host answers it later, from
    // any thread, with Client::answer_permission(request.number, …).
    virtual void permission_requested(const PermissionRequest& request) = 0;
    // A request that is no longer open: answered (`how` is the optionId or "cancelled"), or
    // expired because the connection ended ("expired").
    virtual void permission_closed(std::int64_t number, const std::string& how) {
        (void)number, (void)how;
    }
    // The agent's terminals.
    virtual Terminals& terminals() = 0;
    // Turn `number` was sent to the agent (session/prompt), and how it ended.
    virtual void turn_started(int number) { (void)number; }
    virtual void turn_ended(int number, const TurnResult& result) { (void)number, (void)result; }
    // A session/update, after it was applied to the transcript.
    virtual void updated(const Update& update) { (void)update; }
    // Something for the activity log: an automatic permission answer, a file written.
    virtual void activity(const std::string& what) { (void)what; }
    // The agent wants authentication before a session (recorded `needs_auth`).
    virtual void needs_auth(const std::vector<AuthMethod>& methods) { (void)methods; }
    // The connection has ended, with its reason ("agent exited with 3", "closed", …).
    virtual void ended(const std::string& reason) { (void)reason; }
};

}  // namespace team::acp
