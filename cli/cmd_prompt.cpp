// team prompt NAME TEXT [--no-enter]
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/op_command.hpp"
#include "ops/table.hpp"

namespace team::cli {

void add_prompt_command(CLI::App& app) {
    auto* cmd = add_operation(app, ops::prompt_agent_op, [](Context& ctx, const ops::Result& r) {
        const auto& d = r.doc;
        std::string agent = d["agentId"].get<std::string>();
        if (!d.contains("turn")) {
            if (d["success"] == false) {
                // Typed, not taken: why, and what the screen showed (SPEC 17).
                std::cerr << "team: error: " << d["error"].get<std::string>() << "\n";
                return;
            }
            std::string how = d.value("how", "");
            ctx.out().line((d["taken"] == true
                                ? agent + " took the text"
                                : "typed " + d["bytes"].dump() + " bytes into " + agent) +
                           " (" + d["paneId"].get<std::string>() +
                           (how == "report" ? ", by its report" : "") + ")");
            return;
        }
        // An ACP agent: its turn, queued, or how it ended.
        std::string turn = "turn " + d["turn"].dump() + " of " + agent;
        if (d["error"].is_string()) {
            ctx.out().line(turn + ": " + d["error"].get<std::string>());
        } else if (d["stopReason"].is_string()) {
            ctx.out().line(turn + " ended: " + d["stopReason"].get<std::string>());
        } else {
            ctx.out().line(turn + " " + d["state"].get<std::string>() + " (team logs " +
                           d["agentId"].get<std::string>().substr(0, agent.find('@')) +
                           " --follow)");
        }
    });
    cmd->footer(
        "It returns once the agent took the text: its report of a submitted prompt (a preset's\n"
        "hooks), or its terminal's input read, the cursor's line cleared and output following.\n"
        "Text left unread or sitting in an input box fails at --timeout (exit 1), with the "
        "screen.\n"
        "To a preset agent waiting on its dialog, TEXT is the answer, a choice's key (1, y):\n"
        "typed as keys once the dialog shows, without Enter (only for text left in a field),\n"
        "taken when the agent reports its wait over or the dialog is gone from the screen.\n"
        "A terminal in line mode takes at most 4095 characters per line.\n"
        "An ACP agent (spawn --acp) gets TEXT as a prompt turn, queued after the others;\n"
        "--wait returns when it ends, its exit code saying the stop reason: end_turn 0,\n"
        "cancelled 130, another 5 (refusal, max_tokens, max_turn_requests), failed 1.\n"
        "Example: team prompt worker-1 'run the tests; then fix what fails'");
}

}  // namespace team::cli
