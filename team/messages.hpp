// Inboxes (SPEC 5): messages between the members of a team.
//
// A message is addressed to one member record, not to a name: a later agent that takes a
// terminated agent's name starts with an empty inbox. A recipient that does not exist or is
// terminated is refused before anything is stored. Reading with mark_read selects and marks in
// one BEGIN IMMEDIATE transaction, so of several readers of one inbox each message reaches
// exactly one. A waiting reader sleeps on a ChangeWatch (a FIFO that every commit writes to)
// and wakes within a millisecond of the commit that stored a matching message.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/duration.hpp"
#include "base/time.hpp"
#include "state/messages.hpp"
#include "state/store.hpp"
#include "team/teams.hpp"

namespace team {

nlohmann::json to_json(const Message& message);

// Texts and --data are refused beyond this (SPEC 5).
inline constexpr std::size_t kMaxMessageBytes = 1u << 20;

// The types only the shutdown protocol writes; `send` refuses them.
bool is_protocol_type(const std::string& type);

struct SendRequest {
    std::optional<std::string> to;  // a member name or name@team; none with `all`
    bool all = false;               // every live member but the sender (leader only)
    std::string text;
    std::string type = "message";
    std::optional<std::string> data;  // JSON text
};

struct InboxQuery {
    std::optional<std::string> agent;  // whose inbox (default the caller's; others: leader only)
    bool unread = false;
    std::optional<std::string> type;
    std::int64_t since = 0;  // only ids above this
    std::optional<std::int64_t> limit;
    bool mark_read = false;
    std::optional<Millis> wait;  // block until at least one message matches
};

struct InboxResult {
    std::vector<Message> messages;
    bool timed_out = false;  // the wait ran out (messages is empty)
};

struct AckResult {
    std::vector<std::int64_t> acked;         // marked read now
    std::vector<std::int64_t> already_read;  // were read before
};

class Messages {
  public:
    Messages(Store& store, const Clock& clock) : store_(store), clock_(clock) {}

    // Checks everything, then stores one message per recipient in one transaction. Returns them.
    std::vector<Message> send(const TeamRecord& team, const Caller& caller,
                              const SendRequest& request);

    // The messages of one inbox, oldest first.
    InboxResult inbox(const TeamRecord& team, const Caller& caller, const InboxQuery& query);

    // Marks messages read: all of them or, if one is unknown or not the caller's (the leader
    // may ack any of the team's), none.
    AckResult ack(const TeamRecord& team, const Caller& caller,
                  const std::vector<std::int64_t>& ids);

  private:
    Store& store_;
    const Clock& clock_;
};

// Stores one message in the caller's transaction, no checks: for the shutdown protocol, which
// writes the protocol types. `recipient` must be a member of `team`.
Message post_message(Db& db, const TeamRecord& team, const std::string& from,
                     const AgentRecord& recipient, const std::string& type, const std::string& text,
                     const nlohmann::json& data, EpochMs at);

// The one line `send --notify` types into the recipient's pane. It never carries the message's
// text, so nothing a sender writes is typed into a terminal (where a shell might run it).
std::string notice_line(const Message& message);

}  // namespace team
