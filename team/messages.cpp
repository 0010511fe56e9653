#include "team/messages.hpp"

#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>
#include <cctype>
#include <chrono>

#include "base/error.hpp"
#include "base/names.hpp"
#include "base/text.hpp"
#include "state/change_watch.hpp"
#include "state/sql.hpp"

namespace team {

namespace {

const char* const kMessageColumns =
    "id, sender, recipient, type, text, data, created_at, read_at, recipient_id";

Message read_message(SQLite::Statement& row, const std::string& team) {
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

// A message type is a word: letters, digits, '_', '-', '.', at most 64.
void check_type(const std::string& type) {
    bool ok = !type.empty() && type.size() <= 64;
    for (char c : type) {
        ok =
            ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.');
    }
    if (!ok) {
        throw usage_error("bad message type " + quote(type) +
                          ": use letters, digits, '_', '-' and '.', at most 64");
    }
}

// The name part of "name" or "name@team", checked to be of `team`.
std::string member_name(const TeamRecord& team, const std::string& given, const char* what) {
    std::string name = given;
    if (auto at = name.find('@'); at != std::string::npos) {
        std::string team_part = name.substr(at + 1);
        name = name.substr(0, at);
        if (team_part != team.name) {
            throw usage_error(std::string(what) + " " + quote(given) + " belongs to team " +
                              quote(team_part) + ", but this command acts on team " +
                              quote(team.name));
        }
    }
    check_name(name, "agent name");
    return name;
}

// The live member `given` names: unknown -> not_found, terminated -> refused.
AgentRecord live_recipient(Store& store, const TeamRecord& team, const std::string& given) {
    std::string name = member_name(team, given, "recipient");
    auto member = find_member(store, team, name);
    if (!member) member_not_found(store, team, name);
    if (!member->live()) {
        throw refused("agent " + quote(name) + " is terminated (" +
                      member->exit_reason.value_or("ended") +
                      "); a message to it would never be read, so none was stored");
    }
    return *member;
}

std::vector<AgentRecord> live_members(Store& store, const TeamRecord& team) {
    std::vector<AgentRecord> out;
    SQLite::Statement select(store.db(), R"sql(
        SELECT id, name, pane_id FROM agents
        WHERE team_id = ? AND status <> 'terminated' ORDER BY id
    )sql");
    select.bind(1, team.id);
    while (select.executeStep()) {
        AgentRecord a;
        a.id = select.getColumn(0).getInt64();
        a.name = select.getColumn(1).getString();
        a.team = team.name;
        a.team_id = team.id;
        a.status = AgentStatus::active;
        a.pane_id = column_or_null<std::string>(select.getColumn(2));
        out.push_back(std::move(a));
    }
    return out;
}

// The inbox query of SPEC 5, as SQL over the inbox indexes.
std::vector<Message> select_inbox(Store& store, const TeamRecord& team, std::int64_t recipient_id,
                                  const InboxQuery& q) {
    // --unread walks only the unread part of the inbox (a partial index), whatever else is asked:
    // an inbox holds few unread messages and may hold a million read ones.
    std::string sql = std::string("SELECT ") + kMessageColumns + " FROM messages" +
                      (q.unread ? " INDEXED BY messages_unread" : "") +
                      " WHERE recipient_id = ? AND id > ?";
    if (q.unread) sql += " AND read_at IS NULL";
    if (q.type) sql += " AND type = ?";
    sql += " ORDER BY id";
    if (q.limit) sql += " LIMIT ?";
    SQLite::Statement select(store.db(), sql);
    int i = 0;
    select.bind(++i, recipient_id);
    select.bind(++i, q.since);
    if (q.type) select.bind(++i, *q.type);
    if (q.limit) select.bind(++i, *q.limit);
    std::vector<Message> out;
    while (select.executeStep()) out.push_back(read_message(select, team.name));
    return out;
}

}  // namespace

nlohmann::json to_json(const Message& m) {
    return {{"id", m.id},
            {"team", m.team},
            {"from", m.from},
            {"to", m.to},
            {"type", m.type},
            {"text", m.text},
            {"data", m.data},
            {"createdAt", iso8601(m.created_at)},
            {"readAt", m.read_at ? nlohmann::json(iso8601(*m.read_at)) : nullptr}};
}

bool is_protocol_type(const std::string& type) {
    return type == "shutdown_request" || type == "shutdown_approved" ||
           type == "shutdown_rejected" || type == "shutdown_confirmed";
}

Message post_message(SQLite::Database& db, const TeamRecord& team, const std::string& from,
                     const AgentRecord& recipient, const std::string& type, const std::string& text,
                     const nlohmann::json& data, EpochMs at) {
    SQLite::Statement insert(db, R"sql(
        INSERT INTO messages (team_id, sender, recipient_id, recipient, type, text, data, created_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
    )sql");
    insert.bind(1, team.id);
    insert.bind(2, from);
    insert.bind(3, recipient.id);
    insert.bind(4, recipient.name);
    insert.bind(5, type);
    insert.bind(6, text);
    if (data.is_null()) {
        insert.bind(7);
    } else {
        insert.bind(7, data.dump());
    }
    insert.bind(8, at);
    insert.exec();
    Message m;
    m.id = db.getLastInsertRowid();
    m.team = team.name;
    m.from = from;
    m.to = recipient.name;
    m.type = type;
    m.text = text;
    m.data = data;
    m.created_at = at;
    m.recipient_id = recipient.id;
    return m;
}

std::vector<Message> Messages::send(const TeamRecord& team, const Caller& caller,
                                    const SendRequest& request) {
    // Everything that can be checked without the store first: bad input changes nothing.
    if (request.all && request.to) {
        throw usage_error("give either a recipient or --all, not both");
    }
    if (!request.all && !request.to) throw usage_error("no recipient given: team send TO TEXT");
    check_text(request.text, kMaxMessageBytes, "the text");
    check_type(request.type);
    if (is_protocol_type(request.type)) {
        throw refused("type " + quote(request.type) +
                      " is written only by the shutdown protocol (team kill-agent, team "
                      "shutdown ...); send cannot use it");
    }
    nlohmann::json data;
    if (request.data) {
        check_text(*request.data, kMaxMessageBytes, "--data");
        data = nlohmann::json::parse(*request.data, nullptr, false);
        if (data.is_discarded()) {
            throw usage_error("--data is not valid JSON: " + quote(*request.data));
        }
    }
    if (request.text.empty() && !request.data) {
        throw usage_error("the text is empty (give a text, or --data)");
    }
    if (request.all) require_leader(caller, "send to every agent (--all)");
    std::string to_name;
    if (request.to) to_name = member_name(team, *request.to, "recipient");

    return store_.write([&] {
        std::vector<AgentRecord> recipients;
        if (request.all) {
            for (auto& m : live_members(store_, team)) {
                if (m.id != caller.member_id) recipients.push_back(std::move(m));
            }
            if (recipients.empty()) {
                throw refused("team " + quote(team.name) +
                              " has no live agent besides you; nothing was sent");
            }
        } else {
            recipients.push_back(live_recipient(store_, team, to_name));
        }
        auto now = clock_.now();
        std::vector<Message> sent;
        for (const auto& r : recipients) {
            sent.push_back(post_message(store_.db(), team, caller.name, r, request.type,
                                        request.text, data, now));
        }
        return sent;
    });
}

InboxResult Messages::inbox(const TeamRecord& team, const Caller& caller, const InboxQuery& q) {
    if (q.type) check_type(*q.type);
    std::int64_t recipient_id = caller.member_id;
    if (q.agent) {
        std::string name = member_name(team, *q.agent, "agent");
        if (name != caller.name) {
            require_leader(caller, "read another agent's inbox");
            auto member = find_member(store_, team, name);
            if (!member) member_not_found(store_, team, name);
            recipient_id = member->id;
        }
    }

    std::optional<ChangeWatch> watch;  // set up before the first look, so no commit is missed
    std::chrono::steady_clock::time_point deadline;
    if (q.wait) {
        watch.emplace(store_.home());
        deadline = std::chrono::steady_clock::now() + *q.wait;
    }
    for (;;) {
        auto found = select_inbox(store_, team, recipient_id, q);
        bool unread =
            std::any_of(found.begin(), found.end(), [](const Message& m) { return !m.read_at; });
        if (unread && q.mark_read) {
            // Select again and mark in one transaction: another reader may have taken them.
            found = store_.write([&] {
                auto mine = select_inbox(store_, team, recipient_id, q);
                auto now = clock_.now();
                SQLite::Statement mark(store_.db(),
                                       "UPDATE messages SET read_at = ? WHERE id = ? AND read_at "
                                       "IS NULL");
                for (auto& m : mine) {
                    if (m.read_at) continue;
                    mark.bind(1, now);
                    mark.bind(2, m.id);
                    mark.exec();
                    mark.reset();
                    m.read_at = now;
                }
                return mine;
            });
        }
        if (!found.empty() || !q.wait) return InboxResult{std::move(found), false};
        if (!watch->wait_until(deadline) && std::chrono::steady_clock::now() >= deadline) {
            return InboxResult{{}, true};
        }
    }
}

AckResult Messages::ack(const TeamRecord& team, const Caller& caller,
                        const std::vector<std::int64_t>& ids) {
    if (ids.empty()) throw usage_error("no message id given: team inbox ack ID...");
    return store_.write([&] {
        SQLite::Statement select(store_.db(), R"sql(
            SELECT team_id, recipient_id, recipient, read_at FROM messages WHERE id = ?
        )sql");
        AckResult result;
        for (auto id : ids) {
            select.bind(1, id);
            if (!select.executeStep() || select.getColumn(0).getInt64() != team.id) {
                throw not_found("message " + std::to_string(id) + " not found in team " +
                                quote(team.name) + "; nothing was marked");
            }
            if (select.getColumn(1).getInt64() != caller.member_id && !caller.is_leader) {
                throw refused("message " + std::to_string(id) + " is addressed to " +
                              quote(select.getColumn(2).getString()) + ", not to you (" +
                              caller.id() + "); nothing was marked");
            }
            bool read = !select.getColumn(3).isNull();
            select.reset();
            auto& list = read ? result.already_read : result.acked;
            if (std::find(list.begin(), list.end(), id) == list.end()) list.push_back(id);
        }
        SQLite::Statement mark(store_.db(), "UPDATE messages SET read_at = ? WHERE id = ?");
        auto now = clock_.now();
        for (auto id : result.acked) {
            mark.bind(1, now);
            mark.bind(2, id);
            mark.exec();
            mark.reset();
        }
        return result;
    });
}

std::string notice_line(const Message& m) {
    std::string what = m.type == "message" ? "message" : m.type + " message";
    return "[team] new " + what + " " + std::to_string(m.id) + " from " + m.from +
           ": read it with team inbox --unread";
}

}  // namespace team
