#include "cli/completion.hpp"

#include <algorithm>

#include "base/error.hpp"

namespace team::cli {

namespace {

bool starts_with(const std::string& text, const std::string& prefix) {
    return text.compare(0, prefix.size(), prefix) == 0;
}

// The first line of a help text, short enough for a completion menu.
std::string brief(const std::string& help) {
    std::string line = help.substr(0, help.find('\n'));
    if (line.size() > 72) line = line.substr(0, 69) + "...";
    return line;
}

const OptionInfo* find_option(const CommandLine& model, const CommandInfo* cmd,
                              const std::string& flag) {
    auto has = [&](const OptionInfo& o) {
        return std::find(o.flags.begin(), o.flags.end(), flag) != o.flags.end();
    };
    if (cmd) {
        for (const auto& o : cmd->options) {
            if (has(o)) return &o;
        }
    }
    for (const auto& o : model.global) {
        if (has(o)) return &o;
    }
    return nullptr;
}

void remember(Completion& c, const OptionInfo& o, const std::string& value) {
    if (std::find(o.flags.begin(), o.flags.end(), "--home") != o.flags.end()) c.home = value;
    if (std::find(o.flags.begin(), o.flags.end(), "--team") != o.flags.end()) c.team = value;
}

// The values of an option or argument of kind `o.kind`.
void values_of(Completion& c, const OptionInfo& o) {
    switch (o.kind) {
        case ValueKind::file:
            c.directive = Completion::Directive::files;
            break;
        case ValueKind::dir:
            c.directive = Completion::Directive::dirs;
            break;
        case ValueKind::program:
            c.directive = Completion::Directive::programs;
            break;
        case ValueKind::choice:
            for (const auto& v : o.choices) c.candidates.emplace_back(v, "");
            break;
        case ValueKind::none:
            break;
        default:
            c.lookup = o.kind;
    }
}

}  // namespace

Completion complete(const CommandLine& model, const std::vector<std::string>& words) {
    Completion c;
    if (words.empty()) return complete(model, {""});
    const CommandInfo* cmd = nullptr;     // none yet: the first word is still to come
    const OptionInfo* pending = nullptr;  // an option whose value comes next
    std::size_t arguments = 0;            // arguments of `cmd` given so far
    std::size_t after_dashes = 0;
    bool dashes = false;
    for (std::size_t i = 0; i + 1 < words.size(); ++i) {
        const std::string& w = words[i];
        if (dashes) {
            ++after_dashes;
        } else if (w == "=") {
            // bash splits --team=web at the '=': the value still comes.
        } else if (pending) {
            remember(c, *pending, w);
            pending = nullptr;
        } else if (w == "--") {
            dashes = true;
        } else if (w.size() > 1 && w[0] == '-') {
            auto eq = w.find('=');
            const OptionInfo* o = find_option(model, cmd, w.substr(0, eq));
            if (o && o->takes_value) {
                if (eq == std::string::npos)
                    pending = o;
                else
                    remember(c, *o, w.substr(eq + 1));
            }
        } else if (!cmd) {
            cmd = model.find(w);
            if (!cmd) return c;  // an unknown command: nothing to offer
        } else if (std::find(cmd->subcommands.begin(), cmd->subcommands.end(), w) !=
                   cmd->subcommands.end()) {
            cmd = model.find(cmd->words + " " + w);
            arguments = 0;
        } else {
            ++arguments;
        }
    }
    c.current = words.back() == "=" ? "" : words.back();
    const std::string& cur = c.current;

    if (dashes) {
        // CMD [ARGS...] of spawn, run, shell start: a program, then its arguments.
        c.directive = after_dashes == 0 && cmd && !cmd->arguments.empty() &&
                              cmd->arguments.back().kind == ValueKind::program
                          ? Completion::Directive::programs
                          : Completion::Directive::files;
    } else if (pending) {
        values_of(c, *pending);
    } else if (starts_with(cur, "-")) {
        auto add = [&](const std::vector<OptionInfo>& options) {
            for (const auto& o : options) {
                for (const auto& f : o.flags) {
                    if (starts_with(f, "--") || cur.size() <= 2)
                        c.candidates.emplace_back(f, brief(o.help));
                }
            }
        };
        if (cmd) add(cmd->options);
        add(model.global);
    } else if (!cmd) {
        for (const auto& w : model.top_words) {
            c.candidates.emplace_back(w, brief(model.find(w)->summary));
        }
    } else {
        for (const auto& w : cmd->subcommands) {
            c.candidates.emplace_back(w, brief(model.find(cmd->words + " " + w)->summary));
        }
        if (arguments < cmd->arguments.size()) {
            values_of(c, cmd->arguments[arguments]);
        } else if (cmd->subcommands.empty()) {
            // Nothing more to give but options: offer them without waiting for a '-'.
            for (const auto& o : cmd->options)
                c.candidates.emplace_back(o.flags.back(), brief(o.help));
        }
    }
    std::erase_if(c.candidates, [&](const auto& x) { return !starts_with(x.first, cur); });
    return c;
}

std::string completion_script(const std::string& shell) {
    if (shell == "bash") {
        return R"(# bash completion for team (`team completion bash`). Candidates come from
# `team __complete`, which reads the command line's table and the home as you type.
_team() {
    local cur=${COMP_WORDS[COMP_CWORD]} prog=${COMP_WORDS[0]} line
    local IFS=$'\n'
    local -a out
    command -v "$prog" >/dev/null 2>&1 || prog=team
    out=($("$prog" __complete -- "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
    COMPREPLY=()
    [ "$cur" = "=" ] && cur=
    case ${out[0]-} in
    :files) COMPREPLY=($(compgen -f -- "$cur")); compopt -o filenames 2>/dev/null; return 0 ;;
    :dirs) COMPREPLY=($(compgen -d -- "$cur")); compopt -o filenames 2>/dev/null; return 0 ;;
    :programs) COMPREPLY=($(compgen -c -- "$cur")); return 0 ;;
    esac
    for line in "${out[@]}"; do COMPREPLY+=("${line%%$'\t'*}"); done
    return 0
}
complete -F _team team
)";
    }
    if (shell == "zsh") {
        return R"(#compdef team
# zsh completion for team (`team completion zsh`). Candidates come from `team __complete`,
# which reads the command line's table and the home as you type.
_team() {
    local -a lines described
    local line value what
    lines=("${(@f)$(${words[1]} __complete -- "${(@)words[2,CURRENT]}" 2>/dev/null)}")
    case ${lines[1]} in
    :files) _files; return ;;
    :dirs) _files -/; return ;;
    :programs) _command_names -e; return ;;
    esac
    for line in $lines; do
        [[ -z $line ]] && continue
        value=${line%%$'\t'*}
        what=${line#*$'\t'}
        [[ $what == $line ]] && what=
        value=${value//:/\\:}
        if [[ -n $what ]]; then described+=("$value:$what"); else described+=("$value"); fi
    done
    _describe -t values 'team' described
}
if [ "$funcstack[1]" = "_team" ]; then
    _team "$@"
else
    compdef _team team
fi
)";
    }
    throw usage_error("no completion for the shell " + quote(shell) + " (bash or zsh)");
}

}  // namespace team::cli
