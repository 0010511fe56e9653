#include "state/messages.hpp"

#include "state/db.hpp"

#include "state/sql.hpp"

namespace team {

namespace {

const char* const kMessageColumns =
    "id, sender, recipient, type, text, data, created_at, read_at, recipient_id";

Message read_message(Statement& row, const std::string& team) {
    Message m;
    m.id = row.getColumn(0).getInt64();
    m.team = team;
    m.from = row.getColumn(1).getString();
    m.to = row.getColumn(2).getString();
    m.type = row.getColumn(3).getString();
    m.text = row.getColumn(4).getString();
    if (!row.getColumn(5).isNull()) {
        m.data = nlohmann::json::parse(row.getColumn(5).getString(), nullptr, false);
    }
    m.created_at = row.getColumn(6).getInt64();
    m.read_at = column_or_null<EpochMs>(row.getColumn(7));
    m.recipient_id = row.getColumn(8).getInt64();
    return m;
}

}  // namespace

Message insert_message(Store& store, const TeamRecord& team, Message message) {
    return insert_message(store.db(), team, std::move(message));
}

Message insert_message(Db& db, const TeamRecord& team, Message m) {
    db.writes(Db::Change::messages);  // PostgreSQL wakes the inboxes' listeners at the commit
    Statement insert(db, R"sql(
        INSERT INTO messages (team_id, sender, recipient_id, recipient, type, text, data, created_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id
    )sql");
    insert.bind(1, team.id);
    insert.bind(2, m.from);
    insert.bind(3, m.recipient_id);
    insert.bind(4, m.to);
    insert.bind(5, m.type);
    insert.bind(6, m.text);
    if (m.data.is_null()) {
        insert.bind(7);
    } else {
        insert.bind(7, m.data.dump());
    }
    insert.bind(8, m.created_at);
    insert.executeStep();
    m.id = insert.getColumn(0).getInt64();
    m.team = team.name;
    return m;
}

std::vector<Message> inbox_of(Store& store, const TeamRecord& team, std::int64_t recipient_id,
                              const InboxSelection& q) {
    // --unread walks only the unread part of the inbox (a partial index), whatever else is asked:
    // an inbox holds few unread messages and may hold a million read ones.
    std::string sql = std::string("SELECT ") + kMessageColumns + " FROM messages" +
                      (q.unread ? " INDEXED BY messages_unread" : "") +
                      " WHERE recipient_id = ? AND id > ?";
    if (q.unread) sql += " AND read_at IS NULL";
    if (q.type) sql += " AND type = ?";
    sql += " ORDER BY id";
    if (q.limit) sql += " LIMIT ?";
    Statement select(store.db(), sql);
    int i = 0;
    select.bind(++i, recipient_id);
    select.bind(++i, q.since);
    if (q.type) select.bind(++i, *q.type);
    if (q.limit) select.bind(++i, *q.limit);
    std::vector<Message> out;
    while (select.executeStep()) out.push_back(read_message(select, team.name));
    return out;
}

void mark_unread_read(Store& store, std::vector<Message>& messages, EpochMs at) {
    Statement mark(store.db(), "UPDATE messages SET read_at = ? WHERE id = ? AND read_at IS NULL");
    for (auto& m : messages) {
        if (m.read_at) continue;
        mark.bind(1, at);
        mark.bind(2, m.id);
        mark.exec();
        mark.reset();
        m.read_at = at;
    }
}

void mark_read(Store& store, const std::vector<std::int64_t>& ids, EpochMs at) {
    Statement mark(store.db(), "UPDATE messages SET read_at = ? WHERE id = ?");
    for (auto id : ids) {
        mark.bind(1, at);
        mark.bind(2, id);
        mark.exec();
        mark.reset();
    }
}

std::optional<MessageAddress> message_address(Store& store, std::int64_t id) {
    Statement select(store.db(), R"sql(
        SELECT team_id, recipient_id, recipient, read_at FROM messages WHERE id = ?
    )sql");
    select.bind(1, id);
    if (!select.executeStep()) return std::nullopt;
    return MessageAddress{select.getColumn(0).getInt64(), select.getColumn(1).getInt64(),
                          select.getColumn(2).getString(), !select.getColumn(3).isNull()};
}

}  // namespace team
