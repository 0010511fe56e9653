// team send TO TEXT [--type TYPE] [--data JSON] [--notify]   |   team send --all TEXT ...
#include <CLI/CLI.hpp>

#include "base/error.hpp"
#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "cli/input.hpp"
#include "team/agents.hpp"
#include "team/messages.hpp"

namespace team::cli {

namespace {

struct Options {
    std::optional<std::string> to, text;  // with --all, the one word given is the text
    bool all = false;
    std::string type = "message";
    std::optional<std::string> data;
    bool notify = false;
};

// Types the notice into each recipient's pane. The messages are stored whatever happens here,
// so a failure is reported, never an error (a retry would send the message twice).
nlohmann::json notify(Context& ctx, Agents& agents, const TeamRecord& team, const Message& m) {
    auto member = find_member(ctx.store(), team, m.to);
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

int run(Context& ctx, const Options& o) {
    SendRequest request;
    request.all = o.all;
    if (o.all ? (!o.to || o.text) : (!o.to || !o.text)) {
        throw usage_error(o.all ? "give only the text with --all: team send --all TEXT"
                                : "give a recipient and a text: team send TO TEXT");
    }
    if (!o.all) request.to = o.to;
    request.text = text_argument(o.all ? *o.to : *o.text);
    request.type = o.type;
    request.data = o.data;

    TeamRecord team = ctx.team();
    Caller caller = ctx.caller(team);
    Agents agents(ctx.store(), ctx.clock(), ctx.tmux());
    agents.reconcile(team);  // a recipient whose process has ended is terminated, not written to
    auto sent = Messages(ctx.store(), ctx.clock()).send(team, caller, request);

    nlohmann::json docs = nlohmann::json::array();
    for (const auto& m : sent) {
        nlohmann::json doc = to_json(m);
        if (o.notify) doc.update(notify(ctx, agents, team, m));
        docs.push_back(doc);
    }
    if (ctx.out().json()) {
        ctx.out().print_json(o.all ? docs : docs[0]);
        return 0;
    }
    for (const auto& doc : docs) {
        std::string line = "sent message " + doc["id"].dump() + " to " +
                           doc["to"].get<std::string>() + "@" + team.name;
        if (doc.contains("notified")) {
            line += doc["notified"] == true
                        ? " (notified in its pane)"
                        : " (not notified: " + doc["notifyError"].get<std::string>() + ")";
        }
        ctx.out().line(line);
    }
    return 0;
}

}  // namespace

void add_send_command(CLI::App& app) {
    auto o = std::make_shared<Options>();
    auto* cmd = add_command(app, "send", "store a message in an agent's inbox (or every agent's)",
                            [o](Context& ctx) { return run(ctx, *o); });
    optional_value(cmd, "TO", o->to, "the recipient: an agent name, or the leader's");
    optional_value(cmd, "TEXT", o->text, "the message ('-': read it from stdin; at most 1 MiB)");
    cmd->add_flag("--all", o->all, "send to every live agent instead of one (leader only)");
    cmd->add_option("--type", o->type, "the message type (default: message)")->type_name("TYPE");
    optional_value(cmd, "--data", o->data, "any JSON value to carry with the message")
        ->type_name("JSON");
    cmd->add_flag("--notify", o->notify,
                  "also type a one-line notice into the recipient's pane (never the text itself)");
    cmd->footer(
        "The recipient must be a live member of the team: an unknown one (exit 3) or a\n"
        "terminated one (exit 4) is refused and nothing is stored.\n"
        "Examples:\n"
        "  team send worker-1 'please rebase on main'\n"
        "  team send leader 'done with #3' --type status --data '{\"task\": \"3\"}'\n"
        "  git diff | team send worker-2 -\n"
        "  team send --all 'stand-up in 5 minutes' --notify");
}

}  // namespace team::cli
