#include "cli/command_model.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>

#include "cli/app.hpp"
#include "ops/operation.hpp"

namespace team::cli {

namespace {

ValueKind kind_of(ops::Kind kind) {
    switch (kind) {
        case ops::Kind::free:
            return ValueKind::none;
        case ops::Kind::team:
            return ValueKind::team;
        case ops::Kind::agent:
            return ValueKind::agent;
        case ops::Kind::task:
            return ValueKind::task;
        case ops::Kind::shell:
            return ValueKind::shell;
        case ops::Kind::session:
            return ValueKind::session;
        case ops::Kind::file:
            return ValueKind::file;
        case ops::Kind::dir:
            return ValueKind::dir;
    }
    return ValueKind::none;
}

// The options and arguments no operation declares (the global ones, serve's, completion's), with
// the kind of value each takes, declared here; `words` "" for the global ones.
struct OwnOption {
    std::string_view words;
    std::string_view name;  // the long option without "--", or an argument's placeholder
    ValueKind kind;
    std::vector<std::string> choices = {};
};
const std::vector<OwnOption>& own_options() {
    static const std::vector<OwnOption> kOwn{
        {"", "home", ValueKind::dir},
        {"", "team", ValueKind::team},
        {"", "as", ValueKind::agent},
        {"serve", "web-root", ValueKind::dir},
        {"serve", "unix", ValueKind::file},
        {"completion", "SHELL", ValueKind::choice, {"bash", "zsh"}},
    };
    return kOwn;
}

// What kind of value the option or argument `name` of the command `words` takes: its
// operation's parameter's declared kind (ops::Param::kind, choices, a command's type), else
// its line of own_options().
void classify(OptionInfo& o, std::string_view words, const std::string& name,
              const ops::Operation* op) {
    const ops::Param* param = nullptr;
    if (op) {
        bool positional = o.flags.empty();
        for (const auto& p : op->params) {
            std::string flag(p.name);
            std::replace(flag.begin(), flag.end(), '_', '-');
            if (positional ? (p.positional || p.type == ops::Type::command) &&
                                 p.placeholder == o.placeholder
                           : !p.positional && flag == name) {
                param = &p;
            }
        }
    }
    if (param) {
        if (param->type == ops::Type::command) {
            o.kind = ValueKind::program;
        } else if (param->choices) {
            o.kind = ValueKind::choice;
            o.choices = param->choices();
        } else {
            o.kind = kind_of(param->kind);
        }
        return;
    }
    for (const auto& own : own_options()) {
        if (own.words == words && own.name == name) {
            o.kind = own.kind;
            o.choices = own.choices;
        }
    }
}

OptionInfo option_info(const CLI::Option& opt, std::string_view words, const ops::Operation* op) {
    OptionInfo o;
    for (const auto& s : opt.get_snames()) o.flags.push_back("-" + s);
    for (const auto& l : opt.get_lnames()) o.flags.push_back("--" + l);
    o.help = opt.get_description();
    o.takes_value = opt.get_type_size_max() > 0;
    if (o.flags.empty()) {
        o.placeholder = opt.get_name(true);
        o.takes_value = true;
    } else if (o.takes_value) {
        o.placeholder = opt.get_type_name();
    }
    std::string name = opt.get_lnames().empty() ? o.placeholder : opt.get_lnames().front();
    if (o.takes_value) classify(o, words, name, op);
    return o;
}

bool visible(const CLI::App* sub) {
    return !sub->get_group().empty();  // hidden commands have no group
}

void read_command(const CLI::App& app, const std::string& words, CommandLine& out) {
    CommandInfo c;
    c.words = words;
    c.summary = app.get_description();
    c.footer = app.get_footer();
    const ops::Operation* op = ops::find_command(words);
    for (const CLI::Option* opt : app.get_options()) {
        if (opt == app.get_help_ptr() || opt == app.get_help_all_ptr()) continue;
        auto info = option_info(*opt, words, op);
        (info.flags.empty() ? c.arguments : c.options).push_back(std::move(info));
    }
    auto subs = app.get_subcommands(visible);
    for (const auto* sub : subs) c.subcommands.push_back(sub->get_name());
    out.commands.push_back(std::move(c));
    for (const auto* sub : subs) read_command(*sub, words + " " + sub->get_name(), out);
}

CommandLine read_command_line() {
    CLI::App app{"team", "team"};
    app.set_version_flag("--version", version());
    declare_all(app);
    CommandLine out;
    for (const CLI::Option* opt : app.get_options()) {
        if (opt == app.get_help_all_ptr()) continue;
        out.global.push_back(option_info(*opt, "", nullptr));
    }
    for (const auto* sub : app.get_subcommands(visible)) {
        out.top_words.push_back(sub->get_name());
        read_command(*sub, sub->get_name(), out);
    }
    return out;
}

}  // namespace

const CommandInfo* CommandLine::find(std::string_view words) const {
    for (const auto& c : commands) {
        if (c.words == words) return &c;
    }
    return nullptr;
}

const CommandLine& command_line() {
    static const CommandLine model = read_command_line();
    return model;
}

}  // namespace team::cli
