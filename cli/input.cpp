#include "cli/input.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "base/error.hpp"

#include <optional>
#include <string>
#include <vector>

namespace team::cli {

std::string text_argument(const std::string& value) {
    if (value != "-") return value;
    // Read up to 2 bytes past 1 MiB: a text of 1 MiB and a newline is 1 MiB; anything longer
    // must reach the core whole enough to be refused, never be cut to fit.
    constexpr size_t kMax = (1 << 20) + 2;
    std::string text;
    char buf[65536];
    while (text.size() < kMax) {
        ssize_t n = ::read(STDIN_FILENO, buf, std::min(sizeof buf, kMax - text.size()));
        if (n == 0) break;
        if (n < 0) {
            if (errno == EINTR) continue;
            throw failed("cannot read standard input");
        }
        text.append(buf, static_cast<size_t>(n));
    }
    if (text.size() < kMax && !text.empty() && text.back() == '\n') text.pop_back();
    return text;
}

CLI::Option* verbatim(CLI::Option* option) {
    return option->allow_extra_args(false);
}

namespace {
std::optional<std::vector<std::string>> g_after_dashes;
std::vector<const CLI::App*> g_command_takers;  // the subcommands that declared a CMD
}  // namespace

std::vector<std::string> split_command_line(const CLI::App& app, int argc, char** argv) {
    std::vector<std::string> head;
    const CLI::App* current = &app;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        bool takes_command = std::find(g_command_takers.begin(), g_command_takers.end(), current) !=
                             g_command_takers.end();
        if (arg == "--" && takes_command) {
            g_after_dashes = std::vector<std::string>(argv + i + 1, argv + argc);
            break;
        }
        if (!arg.empty() && arg[0] != '-') {
            for (const auto* sub : current->get_subcommands([](const CLI::App*) { return true; })) {
                if (sub->get_name() == arg) {
                    current = sub;
                    break;
                }
            }
        }
        head.push_back(arg);
    }
    return head;
}

void command_argument(CLI::App* cmd, std::vector<std::string>& argv, const std::string& name,
                      const std::string& description, bool required) {
    g_command_takers.push_back(cmd);
    cmd->add_option(name, argv,
                    description.empty()
                        ? "the command and its arguments, executed as given (never through a shell)"
                        : description);
    cmd->parse_complete_callback([cmd, &argv, name, required] {
        if (g_after_dashes) argv.insert(argv.end(), g_after_dashes->begin(), g_after_dashes->end());
        if (argv.empty() && required) {
            std::string path = cmd->get_name();
            for (auto* p = cmd->get_parent(); p && p->get_parent(); p = p->get_parent())
                path = p->get_name() + " " + path;
            throw CLI::ValidationError(name, "no command given: put it after --, as in 'team " +
                                                 path + " -- " + name + "'");
        }
    });
}

CLI::Option* optional_value(CLI::App* cmd, const std::string& name,
                            std::optional<std::string>& value, const std::string& description) {
    return cmd->add_option_function<std::string>(
        name, [&value](const std::string& v) { value = v; }, description);
}

CLI::Validator whole_number(long long min) {
    return CLI::Validator(
        [min](std::string& value) -> std::string {
            bool digits = !value.empty() && value.size() <= 18 &&
                          value.find_first_not_of("0123456789") == std::string::npos;
            if (!digits || std::stoll(value) < min) {
                return "must be a whole number of at least " + std::to_string(min) + ", not " +
                       quote(value);
            }
            return {};
        },
        "", "whole_number");
}

}  // namespace team::cli
