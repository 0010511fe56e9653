// The push of the caller's inbox over Claude Code's channel capability (SPEC 12): the server
// declares experimental["claude/channel"], and each new message of the caller's inbox is sent as
// a notifications/claude/channel, {content: the text, meta: {from, type, message_id, team,
// request_id}}, so a Claude Code agent sees a shutdown request while it works, without polling.
// The messages stay in the inbox (nothing is marked read). Clients without the capability ignore
// the notification, as JSON-RPC lets them.
//
// One thread with a core of its own: it reads the inbox through the operations table (the
// inbox operation, as inbox_read does), first the whole of it (pushing what is unread and
// keeping the newest id as its cursor), then, at every commit to the store (the core's changes,
// ops/changes.hpp), what came after its cursor.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>

#include "ops/core.hpp"

namespace team::mcp {

class InboxPush {
  public:
    // `send` writes one notification (whole, under the server's lock).
    using Send = std::function<void(const nlohmann::json& notification)>;

    InboxPush(ops::Identity identity, Send send);
    // Stops the thread and waits for it (its wait ends at once).
    ~InboxPush();
    InboxPush(const InboxPush&) = delete;
    InboxPush& operator=(const InboxPush&) = delete;

    void stop();

    // The notification for one message of the inbox's JSON (exposed for the unit tests).
    static nlohmann::json notification_for(const nlohmann::json& message);

  private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace team::mcp
