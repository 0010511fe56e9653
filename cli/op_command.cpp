#include "cli/op_command.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <map>

#include "cli/input.hpp"

namespace team::cli {

namespace {

// Where CLI11 puts the values of one command's options until its action runs. Map nodes stay
// where they are, so CLI11 can hold references into them.
struct Slots {
    std::map<std::string, bool> flags;
    std::map<std::string, std::optional<std::string>> values;
    std::map<std::string, std::vector<std::string>> lists;
};

nlohmann::json collect(const ops::Operation& op, const Slots& slots) {
    nlohmann::json values = nlohmann::json::object();
    for (const auto& p : op.params) {
        std::string name(p.name);
        switch (p.type) {
            case ops::Type::boolean:
                if (slots.flags.at(name)) values[name] = true;
                break;
            case ops::Type::strings:
            case ops::Type::integers:
            case ops::Type::command:
                if (!slots.lists.at(name).empty()) values[name] = slots.lists.at(name);
                break;
            default:
                if (const auto& v = slots.values.at(name)) {
                    values[name] = p.type == ops::Type::text ? text_argument(*v) : *v;
                }
        }
    }
    return values;
}

}  // namespace

CLI::App* add_operation(CLI::App& parent, const ops::Operation& op, Printer print,
                        ProgressPrinter progress, Adjust adjust) {
    auto slots = std::make_shared<Slots>();
    std::string_view words = op.command;
    auto space = words.rfind(' ');
    std::string word(space == std::string_view::npos ? words : words.substr(space + 1));
    auto action = [&op, slots, print, progress, adjust](Context& ctx) {
        ops::Progress report;
        if (progress) report = [&](const nlohmann::json& event) { progress(ctx, event); };
        nlohmann::json values = collect(op, *slots);
        if (adjust) adjust(ctx, values);
        ops::Result r = ops::invoke(ctx, op, values, ops::Naming::cli, report);
        // What waits for the answer (ops::Result::after_reply) runs once it is out.
        auto answered = [&r] {
            if (!r.after_reply) return;
            std::fflush(stdout);
            r.after_reply();
        };
        if (ctx.out().json()) {
            // A following operation has printed its stream as progress: no document after it.
            if (!r.doc.is_null()) ctx.out().print_json(r.doc);
            answered();
            return r.exit_code;
        }
        if (r.error) throw *r.error;
        print(ctx, r);
        answered();
        return r.exit_code;
    };
    auto* cmd = add_command(parent, word, std::string(op.summary), action);
    for (const auto& p : op.params) {
        std::string name(p.name);
        std::string help = ops::help_of(p);
        std::string flag = "--" + name;
        std::replace(flag.begin(), flag.end(), '_', '-');
        if (!p.alias.empty()) flag = std::string(p.alias) + "," + flag;
        CLI::Option* option = nullptr;
        switch (p.type) {
            case ops::Type::boolean:
                option = cmd->add_flag(flag, slots->flags[name], help);
                break;
            case ops::Type::command:
                command_argument(cmd, slots->lists[name], std::string(p.placeholder), help,
                                 p.required);
                break;
            case ops::Type::strings:
            case ops::Type::integers:
                if (p.positional) {
                    option = cmd->add_option(std::string(p.placeholder), slots->lists[name], help);
                } else {
                    option = verbatim(cmd->add_option(flag, slots->lists[name], help));
                }
                if (p.required) option->required();
                if (p.type == ops::Type::integers) option->check(whole_number(p.min));
                break;
            default:
                // Kept only when given, so that a value given empty is checked like any other.
                option = optional_value(cmd, p.positional ? std::string(p.placeholder) : flag,
                                        slots->values[name], help);
                if (p.required) option->required();
                if (p.type == ops::Type::integer) option->check(whole_number(p.min));
        }
        if (option && !p.positional && !p.placeholder.empty()) {
            option->type_name(std::string(p.placeholder));
        }
    }
    return cmd;
}

}  // namespace team::cli
