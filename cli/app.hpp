// The top of the command line: global options, the commands, and the one error policy that
// turns every failure into the message, the JSON and the exit code of SPEC 1.4.
#pragma once

namespace CLI {
class App;
}

namespace team::cli {

int run(int argc, char** argv);

// Declares every command on `app` (the hidden supervisors' too): what `team --help` lists, and
// what the unit tests walk to find each operation's command words.
void add_all_commands(CLI::App& app);

}  // namespace team::cli
