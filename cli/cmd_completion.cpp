// team completion bash|zsh: the completion script, for those who install by hand (the package
// installs both). The hidden `team __complete -- WORD... CURRENT` is what the scripts run at
// each TAB: the candidates from the command line's model (cli/completion.hpp), and the teams,
// agents, tasks, shells and sessions of the home, read from the store without a change and
// without creating a home that is not there.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.hpp"
#include "cli/completion.hpp"
#include "cli/context.hpp"
#include "cli/input.hpp"
#include "cli/tool_commands.hpp"
#include "ops/names_in_home.hpp"

namespace team::cli {

namespace {

using Candidates = std::vector<std::pair<std::string, std::string>>;

// The values of `kind` in the home, as the line names it (--home, --team) or the environment.
Candidates lookup(const Context& ctx, const Completion& c) {
    ops::Identity id = ctx.identity();
    if (c.home) id.home = c.home;
    if (c.team) id.team = c.team;
    ops::Core core(id);
    switch (c.lookup) {
        case ValueKind::team:
            return ops::names_in_home(core, ops::HomeNames::team);
        case ValueKind::agent:
            return ops::names_in_home(core, ops::HomeNames::agent);
        case ValueKind::task:
            return ops::names_in_home(core, ops::HomeNames::task);
        case ValueKind::shell:
            return ops::names_in_home(core, ops::HomeNames::shell);
        case ValueKind::session:
            return ops::names_in_home(core, ops::HomeNames::session);
        default:
            return {};
    }
}

int complete_command(const Context& ctx, const std::vector<std::string>& words) {
    Completion c = complete(command_line(), words);
    std::string text;
    switch (c.directive) {
        case Completion::Directive::files:
            text = ":files\n";
            break;
        case Completion::Directive::dirs:
            text = ":dirs\n";
            break;
        case Completion::Directive::programs:
            text = ":programs\n";
            break;
        case Completion::Directive::none:
            break;
    }
    if (c.lookup != ValueKind::none) {
        try {
            for (auto& v : lookup(ctx, c)) {
                if (v.first.compare(0, c.current.size(), c.current) == 0) c.candidates.push_back(v);
            }
        } catch (const std::exception&) {
            // No team to name, a store that cannot be read: nothing to offer, and no message
            // in the middle of the line being typed.
        }
    }
    for (const auto& [value, what] : c.candidates) {
        text += value;
        if (!what.empty()) text += "\t" + what.substr(0, what.find('\n'));
        text += "\n";
    }
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
}

}  // namespace

void add_completion_command(CLI::App& app) {
    auto shell = std::make_shared<std::string>();
    auto* cmd = add_command(app, "completion",
                            "print the completion script of bash or zsh, for installing by hand",
                            [shell](Context&) {
                                std::string script = completion_script(*shell);
                                std::fwrite(script.data(), 1, script.size(), stdout);
                                return 0;
                            });
    cmd->add_option("SHELL", *shell, "bash or zsh")->required();
    cmd->footer(
        "The package installs both (bash-completion and zsh find them). By hand:\n"
        "  team completion bash > ~/.local/share/bash-completion/completions/team\n"
        "  team completion zsh > \"${fpath[1]}/_team\"    # or: source <(team completion zsh)");

    auto words = std::make_shared<std::vector<std::string>>();
    auto* hidden = add_command(app, "__complete", "",
                               [words](Context& ctx) { return complete_command(ctx, *words); });
    hidden->group("");
    command_argument(hidden, *words, "WORDS", "the words typed so far, the last being completed",
                     false);
}

}  // namespace team::cli
