#include "team/messages.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>

#include "base/error.hpp"
#include "base/names.hpp"
#include "base/text.hpp"
#include "state/activity.hpp"
#include "state/change_watch.hpp"
#include "state/members.hpp"
#include "state/messages.hpp"

namespace team {

namespace {

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

// The inbox query of SPEC 5, from the repository.
std::vector<Message> select_inbox(Store& store, const TeamRecord& team, std::int64_t recipient_id,
                                  const InboxQuery& q) {
    return inbox_of(store, team, recipient_id, {q.unread, q.type, q.since, q.limit});
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

Message post_message(Db& db, const TeamRecord& team, const std::string& from,
                     const AgentRecord& recipient, const std::string& type, const std::string& text,
                     const nlohmann::json& data, EpochMs at) {
    Message m;
    m.from = from;
    m.to = recipient.name;
    m.type = type;
    m.text = text;
    m.data = data;
    m.created_at = at;
    m.recipient_id = recipient.id;
    return insert_message(db, team, std::move(m));
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
            for (auto& m : live_member_panes(store_, team)) {
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
        // One entry per send, so a live view (team serve's event stream) learns of new
        // messages; the text stays in the inbox.
        nlohmann::json ids = nlohmann::json::array(), to = nlohmann::json::array();
        for (const auto& m : sent) {
            ids.push_back(m.id);
            to.push_back(m.to);
        }
        append_activity(store_.db(), team.id, now, caller.id(), "message_sent",
                        {{"ids", ids}, {"to", to}, {"type", request.type}});
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
        watch.emplace(store_.home(), ChangeWatch::Wake::messages);
        deadline = clock_.steady() + *q.wait;
    }
    bool timed_out = false;
    AskedWait asked;  // a wait the caller asked for: a stopping server ends it (base/cancel.hpp)
    for (;;) {
        auto found = select_inbox(store_, team, recipient_id, q);
        bool unread =
            std::any_of(found.begin(), found.end(), [](const Message& m) { return !m.read_at; });
        if (unread && q.mark_read) {
            // Select again and mark in one transaction: another reader may have taken them.
            found = store_.write([&] {
                auto mine = select_inbox(store_, team, recipient_id, q);
                mark_unread_read(store_, mine, clock_.now());
                return mine;
            });
        }
        if (!found.empty() || !q.wait) return InboxResult{std::move(found), false};
        if (timed_out) return InboxResult{{}, true};
        // At the deadline, one look more: what came at the last moment is returned, and a store
        // that cannot be reached (its listener lost) fails the look with its own error rather
        // than passing for an empty inbox.
        if (!watch->wait_until(deadline) && clock_.steady() >= deadline) timed_out = true;
    }
}

AckResult Messages::ack(const TeamRecord& team, const Caller& caller,
                        const std::vector<std::int64_t>& ids) {
    if (ids.empty()) throw usage_error("no message id given: team inbox ack ID...");
    return store_.write([&] {
        AckResult result;
        for (auto id : ids) {
            auto address = message_address(store_, id);
            if (!address || address->team_id != team.id) {
                throw not_found("message " + std::to_string(id) + " not found in team " +
                                quote(team.name) + "; nothing was marked");
            }
            if (address->recipient_id != caller.member_id && !caller.is_leader) {
                throw refused("message " + std::to_string(id) + " is addressed to " +
                              quote(address->recipient) + ", not to you (" + caller.id() +
                              "); nothing was marked");
            }
            auto& list = address->read ? result.already_read : result.acked;
            if (std::find(list.begin(), list.end(), id) == list.end()) list.push_back(id);
        }
        mark_read(store_, result.acked, clock_.now());
        return result;
    });
}

std::string notice_line(const Message& m) {
    std::string what = m.type == "message" ? "message" : m.type + " message";
    return "[team] new " + what + " " + std::to_string(m.id) + " from " + m.from +
           ": read it with team inbox --unread";
}

}  // namespace team
