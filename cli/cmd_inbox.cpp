// team inbox [--agent NAME] [--unread] [--type TYPE] [--since ID] [--limit N] [--mark-read]
//            [--wait DUR]
// team inbox ack ID...
#include <CLI/CLI.hpp>

#include "base/duration.hpp"
#include "base/error.hpp"
#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "cli/input.hpp"
#include "team/messages.hpp"

namespace team::cli {

namespace {

struct Options {
    std::string agent, type;
    bool unread = false, mark_read = false;
    std::int64_t since = 0, limit = 0;
    std::optional<std::string> wait;
};

// A message for a person: a header line, then the text line by line, indented, with control
// characters (tabs too) escaped, so a text cannot drive the terminal.
void print_message(const Output& out, const Message& m, EpochMs now) {
    std::string header = out.bold("#" + std::to_string(m.id)) + "  " + m.from + " -> " + m.to +
                         "  " + relative_time(m.created_at, now);
    if (m.type != "message") header += "  " + out.yellow(m.type);
    header += m.read_at ? "" : "  " + out.green("unread");
    out.line(header);
    std::string body;
    size_t start = 0;
    while (start <= m.text.size()) {
        size_t end = m.text.find('\n', start);
        if (end == std::string::npos) end = m.text.size();
        body += "    " + cell(m.text.substr(start, end - start), std::string::npos) + "\n";
        start = end + 1;
    }
    if (!m.data.is_null()) {
        body += "    " +
                out.dim("data: " +
                        cell(m.data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                             200)) +
                "\n";
    }
    body.pop_back();
    out.line(body);
}

int run(Context& ctx, const Options& o) {
    InboxQuery q;
    if (!o.agent.empty()) q.agent = o.agent;
    if (!o.type.empty()) q.type = o.type;
    q.unread = o.unread;
    q.since = o.since;
    if (o.limit > 0) q.limit = o.limit;
    q.mark_read = o.mark_read;
    if (o.wait) q.wait = parse_duration(*o.wait, "--wait");

    TeamRecord team = ctx.team();
    Caller caller = ctx.caller(team);
    auto result = Messages(ctx.store(), ctx.clock()).inbox(team, caller, q);
    int code = result.timed_out ? exit_code(ErrorCode::timeout) : 0;
    if (ctx.out().json()) {
        nlohmann::json doc = nlohmann::json::array();
        for (const auto& m : result.messages) doc.push_back(to_json(m));
        ctx.out().print_json(doc);
        return code;
    }
    if (result.timed_out) {
        ctx.out().line("no message after " + *o.wait);
    } else if (result.messages.empty()) {
        ctx.out().line(o.unread ? "no unread messages" : "no messages");
    }
    auto now = ctx.clock().now();
    for (const auto& m : result.messages) print_message(ctx.out(), m, now);
    return code;
}

void add_ack(CLI::App& inbox) {
    auto ids = std::make_shared<std::vector<std::string>>();
    auto* cmd = add_command(inbox, "ack", "mark messages read", [ids](Context& ctx) {
        std::vector<std::int64_t> numbers;
        for (const auto& id : *ids) numbers.push_back(std::stoll(id));
        TeamRecord team = ctx.team();
        auto result = Messages(ctx.store(), ctx.clock()).ack(team, ctx.caller(team), numbers);
        if (ctx.out().json()) {
            ctx.out().print_json(
                {{"success", true}, {"acked", result.acked}, {"alreadyRead", result.already_read}});
            return 0;
        }
        auto list = [](const std::vector<std::int64_t>& v) {
            std::string s;
            for (auto id : v) s += (s.empty() ? "" : ", ") + std::to_string(id);
            return s;
        };
        if (!result.acked.empty()) ctx.out().line("marked read: " + list(result.acked));
        if (!result.already_read.empty()) {
            ctx.out().line("already read: " + list(result.already_read));
        }
        return 0;
    });
    cmd->add_option("ID", *ids, "message ids")->required()->check(whole_number(1));
    cmd->footer(
        "All or nothing: an unknown id (exit 3) or another agent's message (exit 4; the leader\n"
        "may ack any) marks none.\nExample: team inbox ack 12 13");
}

}  // namespace

void add_inbox_command(CLI::App& app) {
    auto o = std::make_shared<Options>();
    auto* cmd = add_command(app, "inbox", "the caller's messages, oldest first",
                            [o](Context& ctx) { return run(ctx, *o); });
    cmd->add_option("--agent", o->agent, "read this agent's inbox instead (leader only)")
        ->type_name("NAME");
    cmd->add_flag("--unread", o->unread, "only messages not yet read");
    cmd->add_option("--type", o->type, "only messages of this type (e.g. shutdown_request)")
        ->type_name("TYPE");
    cmd->add_option("--since", o->since, "only messages after this id (a cursor)")
        ->type_name("ID")
        ->check(whole_number(0));
    cmd->add_option("--limit", o->limit, "at most N messages")
        ->type_name("N")
        ->check(whole_number(1));
    cmd->add_flag("--mark-read", o->mark_read,
                  "mark what is shown as read, in the same transaction as the read");
    optional_value(cmd, "--wait", o->wait,
                   "block until at least one message matches; exit 124 with an empty list "
                   "when DUR runs out")
        ->type_name("DUR");
    add_ack(*cmd);
    cmd->footer(
        "Several readers of one inbox with --unread --mark-read each get different messages:\n"
        "every message reaches exactly one of them.\n"
        "Examples:\n"
        "  team inbox --unread --mark-read\n"
        "  team inbox --type shutdown_request --unread --wait 30s --json\n"
        "  team inbox --agent worker-1 --limit 20      (leader)\n"
        "  team inbox ack 12 13");
}

}  // namespace team::cli
