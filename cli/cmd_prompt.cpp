// team prompt NAME TEXT
#include <CLI/CLI.hpp>

#include "base/error.hpp"
#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "cli/input.hpp"
#include "team/agents.hpp"

namespace team::cli {

void add_prompt_command(CLI::App& app) {
    struct Options {
        std::string name, text;
        bool no_enter = false;
    };
    auto o = std::make_shared<Options>();
    auto* cmd = add_command(
        app, "prompt", "type TEXT into the agent's pane and press Enter, as a person would",
        [o](Context& ctx) {
            std::string text = text_argument(o->text);
            if (text.size() > (1u << 20)) throw usage_error("the text is longer than 1 MiB");
            for (unsigned char c : text) {
                if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
                    throw usage_error("the text holds a control character (" +
                                      quote(std::string(1, static_cast<char>(c))) +
                                      "): it would act as a key (Ctrl-C, Escape...) in the pane");
                }
            }
            TeamRecord team = ctx.team();
            Agents agents(ctx.store(), ctx.clock(), ctx.tmux());
            agents.reconcile(team);
            AgentRecord agent = agents.find(team, o->name, true);
            if (!agent.live()) {
                throw refused("agent " + quote(agent.name) + " is terminated (" +
                              agent.exit_reason.value_or("ended") +
                              "); there is no pane to type into");
            }
            if (!agent.pane_id) throw refused("agent " + quote(agent.name) + " has no pane yet");
            agents.server().type_text(*agent.pane_id, text, !o->no_enter);
            if (ctx.out().json()) {
                ctx.out().print_json({{"success", true},
                                      {"agentId", agent.id_string()},
                                      {"paneId", *agent.pane_id},
                                      {"bytes", text.size()}});
            } else {
                ctx.out().line("typed " + std::to_string(text.size()) + " bytes into " +
                               agent.id_string() + " (" + *agent.pane_id + ")");
            }
            return 0;
        });
    cmd->add_option("NAME", o->name, "the agent")->required();
    cmd->add_option("TEXT", o->text,
                    "what to type ('-': read it from stdin); several lines are pasted at once")
        ->required();
    cmd->add_flag("--no-enter", o->no_enter, "type the text without pressing Enter");
    cmd->footer(
        "A terminal in line mode takes at most 4095 characters per line.\n"
        "Example: team prompt worker-1 'run the tests; then fix what fails'");
}

}  // namespace team::cli
