// The command line as data: every command a person can type, with its arguments and options,
// their help, and what kind of value each takes. It is read from the declared command line
// (cli/app.cpp's declare_all, itself declared from the operations table, ops/), so the shell
// completions (cli/cmd_completion.cpp) and the man page (cli/man_page.cpp) have no list of
// their own to keep up to date.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace team::cli {

// What a value is, so a completion can offer the right candidates.
enum class ValueKind {
    none,     // free text, a number, a duration
    team,     // a team of the home
    agent,    // an agent of the team
    task,     // a task id of the team
    shell,    // a background shell id of the home
    session,  // a session name of the home
    file,     // a path
    dir,      // a directory
    program,  // CMD [ARGS...]: a program, then its arguments
    choice,   // one of `choices`
};

struct OptionInfo {
    std::vector<std::string> flags;  // "-n", "--lines"; empty for an argument
    std::string placeholder;         // NAME, DUR; "" for a flag
    std::string help;
    bool takes_value = false;
    ValueKind kind = ValueKind::none;
    std::vector<std::string> choices;  // kind choice
};

struct CommandInfo {
    std::string words;  // "shell kill"
    std::string summary;
    std::string footer;                    // the command's notes and examples, as --help has them
    std::vector<OptionInfo> arguments;     // positional, in order
    std::vector<OptionInfo> options;       // its own options, -h/--help left out
    std::vector<std::string> subcommands;  // the words that may follow ("ack" after "inbox")
};

struct CommandLine {
    std::vector<OptionInfo> global;      // SPEC 1.1's options, and --version
    std::vector<CommandInfo> commands;   // depth first, in the order of `team --help`
    std::vector<std::string> top_words;  // the first words of commands
    // The command named by its words; null when there is none.
    const CommandInfo* find(std::string_view words) const;
};

// The whole command line (hidden commands left out), read once.
const CommandLine& command_line();

}  // namespace team::cli
