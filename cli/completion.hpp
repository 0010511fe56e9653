// Shell completion: what may come next on a command line being typed, from the command line's
// model (cli/command_model.hpp), and the bash and zsh scripts that ask `team __complete` for it.
// The scripts hold no command or option of their own: each TAB runs
// `team __complete -- WORD... CURRENT`, which prints one candidate a line ("value<TAB>what it
// is"), or one directive (":files", ":dirs", ":programs") that the shell completes itself.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/command_model.hpp"

namespace team::cli {

struct Completion {
    enum class Directive { none, files, dirs, programs };
    Directive directive = Directive::none;
    // Candidates known from the model: commands, options, choices; each with what it is.
    std::vector<std::pair<std::string, std::string>> candidates;
    // Values to read from the home (teams, agents, tasks, shells, sessions); none: nothing.
    ValueKind lookup = ValueKind::none;
    // The word being completed; candidates are those that start with it.
    std::string current;
    // --home and --team as typed earlier on the line, for the lookup.
    std::optional<std::string> home, team;
};

// What may stand at the last of `words` (the words after `team`, the last the one being typed,
// possibly empty). Pure: reads nothing but the model.
Completion complete(const CommandLine& model, const std::vector<std::string>& words);

// The completion script for `shell` ("bash" or "zsh"); throws a usage error for another.
std::string completion_script(const std::string& shell);

}  // namespace team::cli
