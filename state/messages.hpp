// The messages repository: inboxes (SPEC 5) as the store keeps them. Writes are called inside
// Store::write.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/time.hpp"
#include "state/records.hpp"
#include "state/store.hpp"

namespace team {

// Stores `message` (from, to, recipient_id, type, text, data, created_at) in team `team`; returns
// it with its id and team set.
Message insert_message(Store& store, const TeamRecord& team, Message message);
// The same on the store's connection: for the shutdown rooms, which still pass the connection
// inside their writes (to go once they pass the Store).
Message insert_message(Db& db, const TeamRecord& team, Message message);

// Which messages of one inbox to read, oldest first.
struct InboxSelection {
    bool unread = false;  // only the unread ones (walks the partial index of unread messages)
    std::optional<std::string> type;
    std::int64_t since = 0;  // only ids above this
    std::optional<std::int64_t> limit;
};
std::vector<Message> inbox_of(Store& store, const TeamRecord& team, std::int64_t recipient_id,
                              const InboxSelection& selection);

// Marks read, at `at`, those of `messages` not read yet, unless another reader marked them
// meanwhile; sets their read_at.
void mark_unread_read(Store& store, std::vector<Message>& messages, EpochMs at);
// Marks the messages of these ids read at `at`.
void mark_read(Store& store, const std::vector<std::int64_t>& ids, EpochMs at);

// Where a message was sent: its team, its recipient, whether it was read.
struct MessageAddress {
    std::int64_t team_id = 0;
    std::int64_t recipient_id = 0;
    std::string recipient;
    bool read = false;
};
std::optional<MessageAddress> message_address(Store& store, std::int64_t id);

}  // namespace team
