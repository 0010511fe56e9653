// team cancel NAME; team permission list | allow | deny | answer   (SPEC 15: ACP agents)
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/op_command.hpp"
#include "cli/output.hpp"
#include "ops/table.hpp"

namespace team::cli {

namespace {

void print_answer(Context& ctx, const ops::Result& r) {
    ctx.out().line("answered request " + r.doc["id"].dump() + " of " +
                   r.doc["agentId"].get<std::string>() + ": " + r.doc["answer"].get<std::string>());
}

std::string text_of(const nlohmann::json& j) {
    return j.is_string() ? j.get<std::string>() : std::string();
}

}  // namespace

void add_cancel_command(CLI::App& app) {
    auto* cmd = add_operation(app, ops::cancel_turn_op, [](Context& ctx, const ops::Result& r) {
        ctx.out().line(r.doc["cancelled"] == true
                           ? "cancelling the turn of " + r.doc["agentId"].get<std::string>()
                           : r.doc["agentId"].get<std::string>() + " has no turn under way");
    });
    cmd->footer(
        "The agent ends its turn with the stop reason `cancelled`; one that has not within\n"
        "10 s is ended, its whole tree. Example: team cancel w1");
}

void add_permission_command(CLI::App& app) {
    auto* p = app.add_subcommand("permission",
                                 "ACP agents' permission requests: list, allow, deny, answer");
    p->require_subcommand(1);
    add_operation(*p, ops::list_permissions_op, [](Context& ctx, const ops::Result& r) {
        if (r.doc.empty()) {
            ctx.out().line("no permission request waits");
            return;
        }
        Table table({"ID", "AGENT", "STATE", "TOOL", "OPTIONS"});
        for (const auto& q : r.doc) {
            const auto& tool = q["toolCall"];
            std::string what = text_of(tool.value("title", nlohmann::json()));
            if (what.empty()) what = text_of(tool.value("toolCallId", nlohmann::json()));
            std::string kind = text_of(tool.value("kind", nlohmann::json()));
            if (!kind.empty()) what = "[" + kind + "] " + what;
            std::string options;
            for (const auto& o : q["options"])
                options += (options.empty() ? "" : ", ") + o.value("optionId", std::string()) +
                           " (" + o.value("kind", std::string()) + ")";
            std::string state = q["state"];
            if (q["answer"].is_string()) state += ": " + q["answer"].get<std::string>();
            table.add({q["id"].dump(), q["agent"].get<std::string>(), state, what, options});
        }
        table.print(ctx.out());
    });
    add_operation(*p, ops::allow_permission_op, print_answer);
    add_operation(*p, ops::deny_permission_op, print_answer);
    add_operation(*p, ops::answer_permission_op, print_answer);
    p->footer(
        "A deny picks the agent's reject option; only a cancel of the turn answers `cancelled`.\n"
        "Examples:\n  team permission list\n  team permission allow 3\n"
        "  team permission deny 4 --always\n  team permission answer 5 allow_always");
}

}  // namespace team::cli
