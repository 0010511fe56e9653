// team resume [NAME...] [--all] [--dry-run]      (SPEC 19)
#include <CLI/CLI.hpp>

#include "base/error.hpp"
#include "cli/commands.hpp"
#include "cli/op_command.hpp"
#include "ops/table.hpp"

namespace team::cli {

namespace {

std::string text_or(const nlohmann::json& v, const std::string& none) {
    return v.is_string() ? v.get<std::string>() : none;
}

void print_human(Context& ctx, const ops::Result& r) {
    const auto& doc = r.doc;
    bool dry = doc.value("dryRun", false);
    auto& out = ctx.out();
    if (doc["agents"].empty()) {
        out.line("no agent to resume");
    } else {
        Table table({"AGENT", dry ? "WOULD BE" : "OUTCOME", "CONVERSATION", "TASKS", "WHERE"});
        for (const auto& a : doc["agents"]) {
            std::string outcome = a["outcome"];
            std::string shown = outcome == "failed"    ? out.red(outcome)
                                : outcome == "skipped" ? out.yellow(outcome)
                                                       : outcome;
            std::string conversation = text_or(a["conversation"], "-");
            if (a["conversationId"].is_string())
                conversation += " " + a["conversationId"].get<std::string>();
            std::string tasks;
            for (const auto& t : a["tasks"])
                tasks += (tasks.empty() ? "" : ",") + t.get<std::string>();
            std::string where = text_or(a["worktree"], "");
            if (a["host"].is_string()) where = "host " + a["host"].get<std::string>();
            table.add({a["name"].get<std::string>() + "@" + a["team"].get<std::string>(), shown,
                       conversation, tasks.empty() ? "-" : tasks, where.empty() ? "-" : where});
        }
        table.print(out);
        for (const auto& a : doc["agents"]) {
            if (a["why"].is_string()) {
                out.line(a["name"].get<std::string>() + ": " +
                         out.dim(a["why"].get<std::string>()));
            }
        }
    }
    if (doc.value("success", true) == false) throw failed(doc["error"].get<std::string>());
}

}  // namespace

void add_resume_command(CLI::App& app) {
    auto* cmd = add_operation(app, ops::resume_op, print_human);
    cmd->footer(
        "An agent starts again under its own name, in its own worktree (or cwd), with its\n"
        "conversation where its kind can resume one (the claude, codex and gemini presets; an\n"
        "ACP agent that offers session/load), its inbox as it was, and the tasks it held that\n"
        "nobody took meanwhile. Any other starts fresh, and the outcome says why. --env values\n"
        "are never stored: each --env name must be set in the environment that resumes.\n"
        "Examples:\n"
        "  team resume --all --dry-run\n"
        "  team resume --all\n"
        "  team resume w1 w2 --json");
}

}  // namespace team::cli
