// The commands of team as an installed tool, declared like those of cli/commands.hpp: the
// doctor, the shell completions and the man page.
#pragma once

namespace CLI {
class App;
}

namespace team::cli {

void add_doctor_command(CLI::App& app);
void add_store_command(CLI::App& app);
void add_completion_command(CLI::App& app);  // completion bash|zsh, and the hidden __complete
void add_man_command(CLI::App& app);         // the hidden __man

}  // namespace team::cli
