// The top of the command line: global options, the commands, and the one error policy that
// turns every failure into the message, the JSON and the exit code of SPEC 1.4.
#pragma once

namespace CLI {
class App;
}

namespace team::cli {

int run(int argc, char** argv);

// Declares the global options and every command a person can type on `app`, as `team --help`
// lists them: what the completions and the man page are read from (cli/command_model.hpp).
void declare_all(CLI::App& app);

// The version of team, from the project's version in CMakeLists.txt (cli/version.cpp): what
// `team --version`, the man page and the package say.
const char* version();

// Declares every command on `app` (without the global options): what `team --help` lists, and
// what the unit tests walk to find each operation's command words.
void add_all_commands(CLI::App& app);

}  // namespace team::cli
