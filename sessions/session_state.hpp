// What a session keeps between its commands (SPEC 9), and how bash gives it and takes it back.
//
// A session command runs in a fresh `bash --noprofile --norc`, handed a script that restores
// the session's state (variables, functions, aliases, options; the cwd is the command's working
// directory), takes a snapshot, runs the command string (the end of the script itself), and
// takes a second snapshot when the shell exits, from an EXIT trap (so `exit 3`, `set -e` and
// syntax errors are covered too; a command that replaces that trap keeps nothing).
// A snapshot is what bash itself prints (`declare -p`, `declare -f`, $SHELLOPTS, $BASHOPTS,
// BASH_ALIASES), NUL-separated; nothing forks. What the command changed is the difference
// between the two snapshots, and only that is written over the session's state, so two
// commands that run at once each keep what they changed (see docs/guide.md "Sessions").
//
// Everything here is pure: building the script and reading the snapshots, no processes.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace team::sessions {

struct ShellVariable {
    std::string attrs;  // declare's flags without the dash: "x", "ai", "" ...
    std::string decl;   // `declare -x NAME="value"`, as bash prints it: eval gives it back
    bool operator==(const ShellVariable&) const = default;
};

struct ShellFunction {
    std::string text;  // `declare -f NAME`
    bool exported = false;
    bool operator==(const ShellFunction&) const = default;
};

// A session's state, as stored.
struct SessionState {
    std::string cwd;  // the logical working directory ($PWD)
    std::map<std::string, ShellVariable> vars;
    std::set<std::string> unset;  // variables a command unset (they may be in a caller's env)
    std::map<std::string, ShellFunction> functions;
    std::map<std::string, std::string> aliases;
    std::map<std::string, bool> options;  // `set -o NAME` of those that matter
    std::map<std::string, bool> shopt;    // `shopt NAME` of those that matter
    std::string umask;                    // "0027"; empty: the caller's
    bool operator==(const SessionState&) const = default;
};

nlohmann::json to_json(const SessionState& state);
SessionState session_state_from_json(const nlohmann::json& json);

// What a person wants to see of a state: exported variables with their values, other
// variables (scalars as values, arrays as bash prints them), functions, aliases, the options
// that are on. For `team session show`.
nlohmann::json describe(const SessionState& state);

// One snapshot taken inside the session's bash.
struct ShellSnapshot {
    int status = 0;  // $? when it was taken
    std::string cwd;
    std::set<std::string> options_on;  // from $SHELLOPTS
    std::set<std::string> shopt_on;    // from $BASHOPTS
    std::string umask;
    std::map<std::string, ShellVariable> vars;
    std::map<std::string, ShellFunction> functions;
    std::map<std::string, std::string> aliases;
};

struct ShellCapture {
    std::optional<ShellSnapshot> before;  // taken after the restore, before the command
    std::optional<ShellSnapshot> after;   // taken when the shell exited; none: it never did
};

// Reads what the snapshots wrote. A snapshot cut short (the shell was killed while writing)
// is left out.
ShellCapture parse_capture(std::string_view bytes);

// Splits `declare -p` output into its declarations: name -> variable.
std::map<std::string, ShellVariable> parse_declarations(std::string_view dump);

// The value of a scalar declaration (`declare -- x="a b"` -> `a b`); none for arrays and
// for a variable declared without a value.
std::optional<std::string> declared_value(const ShellVariable& var);

// What one command changed: the difference between its two snapshots.
struct StateChanges {
    std::optional<std::string> cwd;
    std::map<std::string, ShellVariable> set_vars;
    std::set<std::string> unset_vars;
    std::map<std::string, ShellFunction> set_functions;
    std::set<std::string> unset_functions;
    std::map<std::string, std::string> set_aliases;
    std::set<std::string> unset_aliases;
    std::map<std::string, bool> options;
    std::map<std::string, bool> shopt;
    std::optional<std::string> umask;
    bool empty() const;
};

// `restored` is the state the command started from: its options are those the script set
// (the before-snapshot is taken before they are switched on, so that xtrace does not trace the
// script).
StateChanges diff(const ShellSnapshot& before, const ShellSnapshot& after,
                  const SessionState& restored);
void apply(SessionState& state, const StateChanges& changes);

// Variables never kept: bash's own (dynamic or read-only) and team's identity, which belongs
// to whoever runs each command.
bool is_untracked_variable(const std::string& name);

struct RestoreScript {
    std::string command;  // the command string, the last part of the script
    // Where the snapshots go and a scratch file (both paths bash can open), or empty: no
    // snapshots (a background command's state is not kept).
    std::string snapshot_path, scratch_path;
    bool close_fd3 = true;  // the script arrives on fd 3, which the command must not inherit
};

// The bash script that restores `state` and runs the command. Its working directory is set
// by the caller (and $PWD in its environment, which bash keeps when it names that directory).
std::string restore_script(const SessionState& state, const RestoreScript& how);

// `text` as one single-quoted bash word.
std::string bash_quote(std::string_view text);

}  // namespace team::sessions
