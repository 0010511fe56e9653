#include "cli/command_model.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>

#include "base/states.hpp"
#include "cli/app.hpp"
#include "ops/names_in_home.hpp"
#include "ops/operation.hpp"

namespace team::cli {

namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
    return text.substr(0, prefix.size()) == prefix;
}

template <class E>
std::vector<std::string> state_names() {
    return {StateNames<E>::names.begin(), StateNames<E>::names.end()};
}

// What kind of value the parameter `name` of the command `words` takes: read from the
// operation's parameter where there is one (its type, its name, its placeholder), by the same
// names elsewhere (the global options, serve's).
void classify(OptionInfo& o, std::string_view words, std::string name, const ops::Operation* op) {
    std::replace(name.begin(), name.end(), '-', '_');
    const ops::Param* param = nullptr;
    if (op) {
        for (const auto& p : op->params) {
            bool positional = o.flags.empty();
            if (positional ? (p.positional || p.type == ops::Type::command) &&
                                 p.placeholder == o.placeholder
                           : !p.positional && p.name == name) {
                param = &p;
                name = std::string(p.name);
            }
        }
    }
    auto& k = o.kind;
    if (param && param->type == ops::Type::command) {
        k = ValueKind::program;
    } else if (name == "team" || (op && op->team_param == name)) {
        k = ValueKind::team;
    } else if (name == "agent" || name == "owner" || name == "reassign_to" || name == "to" ||
               name == "as") {
        k = ValueKind::agent;
    } else if (name == "name") {
        if (starts_with(words, "session "))
            k = ValueKind::session;
        else if (words != "create" && words != "spawn")
            k = ValueKind::agent;
    } else if (name == "blocked_by" ||
               ((name == "id" || name == "ids") && starts_with(words, "task "))) {
        k = ValueKind::task;
    } else if (name == "id" && starts_with(words, "shell ")) {
        k = ValueKind::shell;
    } else if (name == "cwd" || name == "web_root" || o.placeholder == "DIR") {
        k = ValueKind::dir;
    } else if (name == "unix" || o.placeholder == "PATH" || o.placeholder == "FILE") {
        k = ValueKind::file;
    } else if (name == "status" && starts_with(words, "task ")) {
        k = ValueKind::choice;
        o.choices = state_names<TaskStatus>();
    } else if (name == "signal") {
        k = ValueKind::choice;
        o.choices = {"SIGTERM", "SIGINT", "SIGKILL"};
    } else if (name == "preset") {
        k = ValueKind::choice;
        o.choices = ops::preset_choices();
    } else if (name == "color") {
        k = ValueKind::choice;
        o.choices = ops::color_choices();
    } else if (words == "completion") {
        k = ValueKind::choice;
        o.choices = {"bash", "zsh"};
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
