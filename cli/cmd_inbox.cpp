// team inbox [--agent NAME] [--unread] [--type TYPE] [--since ID] [--limit N] [--mark-read]
//            [--wait DUR]
// team inbox ack ID...
#include <CLI/CLI.hpp>

#include "base/time.hpp"
#include "cli/commands.hpp"
#include "cli/op_command.hpp"
#include "ops/table.hpp"

namespace team::cli {

namespace {

// A message for a person: a header line, then the text line by line, indented, with control
// characters (tabs too) escaped, so a text cannot drive the terminal.
void print_message(const Output& out, const nlohmann::json& m, EpochMs now) {
    std::string type = m["type"], text = m["text"];
    std::string header = out.bold("#" + m["id"].dump()) + "  " + m["from"].get<std::string>() +
                         " -> " + m["to"].get<std::string>() + "  " +
                         relative_time(parse_iso8601(m["createdAt"]), now);
    if (type != "message") header += "  " + out.yellow(type);
    header += m["readAt"].is_string() ? "" : "  " + out.green("unread");
    out.line(header);
    std::string body;
    size_t start = 0;
    while (start <= text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        body += "    " + cell(text.substr(start, end - start), std::string::npos) + "\n";
        start = end + 1;
    }
    if (!m["data"].is_null()) {
        body += "    " +
                out.dim("data: " + cell(m["data"].dump(-1, ' ', false,
                                                       nlohmann::json::error_handler_t::replace),
                                        200)) +
                "\n";
    }
    body.pop_back();
    out.line(body);
}

void print_inbox(Context& ctx, const ops::Result& r) {
    if (r.view["timedOut"] == true) {
        ctx.out().line("no message after " + r.view["wait"].get<std::string>());
    } else if (r.doc.empty()) {
        ctx.out().line(r.view["unread"] == true ? "no unread messages" : "no messages");
    }
    auto now = ctx.clock().now();
    for (const auto& m : r.doc) print_message(ctx.out(), m, now);
}

void add_ack(CLI::App& inbox) {
    auto* cmd = add_operation(inbox, ops::ack_messages_op, [](Context& ctx, const ops::Result& r) {
        auto list = [](const nlohmann::json& v) {
            std::string s;
            for (const auto& id : v) s += (s.empty() ? "" : ", ") + id.dump();
            return s;
        };
        if (!r.doc["acked"].empty()) ctx.out().line("marked read: " + list(r.doc["acked"]));
        if (!r.doc["alreadyRead"].empty()) {
            ctx.out().line("already read: " + list(r.doc["alreadyRead"]));
        }
    });
    cmd->footer(
        "All or nothing: an unknown id (exit 3) or another agent's message (exit 4; the leader\n"
        "may ack any) marks none.\nExample: team inbox ack 12 13");
}

}  // namespace

void add_inbox_command(CLI::App& app) {
    auto* cmd = add_operation(app, ops::read_inbox_op, print_inbox);
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
