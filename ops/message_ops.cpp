// The operations of inboxes (SPEC 5): send, read (and wait), ack.
#include "ops/operation.hpp"
#include "ops/table.hpp"
#include "state/members.hpp"
#include "team/agents.hpp"
#include "team/messages.hpp"

namespace team::ops {

namespace {

// Types the notice into each recipient's pane. The messages are stored whatever happens here,
// so a failure is reported, never an error (a retry would send the message twice).
nlohmann::json notify(Request& r, Agents& agents, const Message& m) {
    auto member = find_member(r.core.store(), *r.team, m.to);
    if (!member || !member->pane_id || member->id != m.recipient_id) {
        return {{"notified", false}, {"notifyError", m.to + " has no pane to type into"}};
    }
    try {
        agents.server().type_text(*member->pane_id, notice_line(m), true);
        return {{"notified", true}};
    } catch (const std::exception& e) {
        return {{"notified", false}, {"notifyError", e.what()}};
    }
}

Result send(Request& r) {
    const auto& a = r.args;
    SendRequest request;
    request.all = a.flag("all");
    bool has_to = a.has("to"), has_text = a.has("text");
    if (request.all ? (has_to || !has_text) : (!has_to || !has_text)) {
        throw usage_error(request.all ? "give only the text with --all: team send --all TEXT"
                                      : "give a recipient and a text: team send TO TEXT");
    } else {
        request.text = a.string("text");
        if (!request.all) request.to = a.string("to");
    }
    request.type = a.string("type");
    request.data = a.optional_string("data");

    Caller caller = r.caller();
    Agents agents(r.core.store(), r.core.clock(), r.core.tmux());
    agents.reconcile(*r.team);  // a recipient whose process has ended is terminated, not written to
    auto sent = Messages(r.core.store(), r.core.clock()).send(*r.team, caller, request);
    nlohmann::json docs = nlohmann::json::array();
    for (const auto& m : sent) {
        nlohmann::json doc = to_json(m);
        if (a.flag("notify")) doc.update(notify(r, agents, m));
        docs.push_back(doc);
    }
    Result result(request.all ? docs : docs[0]);
    result.view = {{"messages", docs}, {"team", r.team->name}};
    return result;
}

Result read_inbox(Request& r) {
    const auto& a = r.args;
    InboxQuery q;
    if (auto agent = a.string("agent"); !agent.empty()) q.agent = agent;
    if (auto type = a.string("type"); !type.empty()) q.type = type;
    q.unread = a.flag("unread");
    q.since = a.integer("since").value_or(0);
    q.limit = a.integer("limit");
    q.mark_read = a.flag("mark_read");
    q.wait = a.duration("wait");
    auto result = Messages(r.core.store(), r.core.clock()).inbox(*r.team, r.caller(), q);
    nlohmann::json doc = nlohmann::json::array();
    for (const auto& m : result.messages) doc.push_back(to_json(m));
    Result out(doc, result.timed_out ? exit_code(ErrorCode::timeout) : 0);
    out.view = {{"timedOut", result.timed_out}, {"wait", a.string("wait")}, {"unread", q.unread}};
    return out;
}

Result ack(Request& r) {
    auto result =
        Messages(r.core.store(), r.core.clock()).ack(*r.team, r.caller(), r.args.integers("ids"));
    return {{{"success", true}, {"acked", result.acked}, {"alreadyRead", result.already_read}}};
}

}  // namespace

const Operation send_message_op{
    .name = "send_message",
    .command = "send",
    .tool = "message_send",
    .routes = {{"POST", "/api/teams/{team}/messages"}},
    .summary = "store a message in an agent's inbox (or every agent's)",
    .params = {{.name = "to",
                .help = "the recipient: an agent name, or the leader's",
                .placeholder = "TO",
                .positional = true,
                .kind = Kind::agent},
               {.name = "text",
                .type = Type::text,
                .help = "the message ('-': read it from stdin; at most 1 MiB)",
                .placeholder = "TEXT",
                .positional = true},
               {.name = "all",
                .type = Type::boolean,
                .help = "send to every live agent instead of one (leader only)"},
               {.name = "type",
                .help = "the message type",
                .placeholder = "TYPE",
                .default_text = "message"},
               {.name = "data",
                .help = "any JSON value to carry with the message",
                .placeholder = "JSON"},
               {.name = "notify",
                .type = Type::boolean,
                .help = "also type a one-line notice into the recipient's pane (never the text "
                        "itself)"}},
    .access = Access::write,
    .body = send,
};

const Operation read_inbox_op{
    .name = "read_inbox",
    .command = "inbox",
    .tool = "inbox_read",
    .routes = {{"GET", "/api/teams/{team}/messages"}},
    .summary = "the caller's messages, oldest first",
    .params = {{.name = "agent",
                .help = "read this agent's inbox instead (leader only)",
                .placeholder = "NAME",
                .kind = Kind::agent},
               {.name = "unread", .type = Type::boolean, .help = "only messages not yet read"},
               {.name = "type",
                .help = "only messages of this type (e.g. shutdown_request)",
                .placeholder = "TYPE"},
               {.name = "since",
                .type = Type::integer,
                .help = "only messages after this id (a cursor)",
                .placeholder = "ID",
                .min = 0},
               {.name = "limit",
                .type = Type::integer,
                .help = "at most N messages",
                .placeholder = "N",
                .min = 1},
               {.name = "mark_read",
                .type = Type::boolean,
                .help = "mark what is shown as read, in the same transaction as the read"},
               {.name = "wait",
                .type = Type::duration,
                .help = "block until at least one message matches; exit 124 with an empty list "
                        "when DUR runs out",
                .placeholder = "DUR"}},
    .access = Access::write,  // --mark-read
    .waits = true,
    .body = read_inbox,
};

const Operation ack_messages_op{
    .name = "ack_messages",
    .command = "inbox ack",
    .tool = "inbox_ack",
    .no_route = "not in SPEC 13: the dashboard reads inboxes, it does not mark them",
    .summary = "mark messages read",
    .params = {{.name = "ids",
                .type = Type::integers,
                .help = "message ids",
                .placeholder = "ID",
                .required = true,
                .positional = true,
                .min = 1}},
    .access = Access::write,
    .body = ack,
};

}  // namespace team::ops
