// The script that restores a session's state in a fresh bash and runs the command
// (sessions/session_state.hpp).
#include "sessions/session_state.hpp"

namespace team::sessions {

std::string restore_script(const SessionState& state, const RestoreScript& how) {
    std::string script;
    if (how.close_fd3) script += "builtin exec 3<&-\n";
    bool snapshots = !how.snapshot_path.empty();
    if (snapshots) {
        // Both snapshots are written by this function; nothing in it forks. `local -` gives
        // the options back when it returns; errexit, nounset and xtrace are off inside it.
        std::string scratch = bash_quote(how.scratch_path);
        script += R"sh(__team_snap() {
    builtin local __team_st=$? __team_so=$SHELLOPTS __team_bo=$BASHOPTS
    builtin local -
    builtin set +o errexit +o nounset +o xtrace +o verbose +o noglob
    if [[ $1 == after ]]; then
        [[ -n ${__team_done-} ]] && builtin return "$__team_st"
        __team_done=1
    fi
    builtin printf 'snap\0%s\0status\0%s\0cwd\0%s\0opts\0%s\0shopt\0%s\0vars\0' \
        "$1" "$__team_st" "$PWD" "$__team_so" "$__team_bo"
    builtin declare -p
    builtin printf '\0umask\0'
    builtin umask
    builtin printf '\0'
    builtin local __team_l __team_n
    builtin local -a __team_fl
    builtin declare -F >|)sh" +
                  scratch + R"sh(
    builtin mapfile -t __team_fl <)sh" +
                  scratch + R"sh(
    for __team_l in "${__team_fl[@]}"; do
        __team_l=${__team_l#declare }
        __team_n=${__team_l#* }
        [[ $__team_n == __team_* ]] && continue
        builtin printf 'fn\0%s\0%s\0' "$__team_n" "${__team_l%% *}"
        builtin declare -f -- "$__team_n"
        builtin printf '\0'
    done
    for __team_n in "${!BASH_ALIASES[@]}"; do
        builtin printf 'alias\0%s\0%s\0' "$__team_n" "${BASH_ALIASES[$__team_n]}"
    done
    builtin printf 'end\0'
    builtin return "$__team_st"
} >>)sh" + bash_quote(how.snapshot_path) +
                  " 2>/dev/null\n";
    }
    script += "builtin shopt -s expand_aliases\n";
    for (const auto& [name, var] : state.vars) script += var.decl + "\n";
    for (const auto& name : state.unset) script += "builtin unset -v -- " + bash_quote(name) + "\n";
    for (const auto& [name, fn] : state.functions) {
        script += fn.text + "\n";
        if (fn.exported) script += "builtin export -f -- " + bash_quote(name) + "\n";
    }
    std::string on, off;
    for (const auto& [name, enabled] : state.shopt) (enabled ? on : off) += " " + name;
    if (!on.empty()) script += "builtin shopt -s" + on + "\n";
    // An octal mask as umask printed it; anything else was not written by bash: left out.
    if (!state.umask.empty() && state.umask.find_first_not_of("01234567") == std::string::npos &&
        state.umask.size() <= 4)
        script += "builtin umask " + state.umask + "\n";
    if (!off.empty()) script += "builtin shopt -u" + off + "\n";
    // Aliases last, and the words after them quoted, so that no alias can change this script.
    for (const auto& [name, value] : state.aliases)
        script += "builtin alias -- " + bash_quote(name + "=" + value) + "\n";
    // The snapshots run with stderr to /dev/null: under xtrace, their own trace lines go there
    // too, and the user's stderr shows the command's trace only.
    if (snapshots) {
        script +=
            "{ \\__team_snap before; } 2>/dev/null\n"
            "\\builtin trap -- '{ \\__team_snap after; } 2>/dev/null' EXIT\n";
    }
    // $0 as in `bash -c`, so that messages read "bash: ...".
    script += "BASH_ARGV0=bash\n";
    // The command is the end of the script itself (bash reads it as it runs, like any script):
    // no eval and no `source`, so xtrace shows it with one '+', and a syntax error, an
    // unterminated here-document or a trailing `&&` are bash's own, as with `bash -c`. Nothing
    // of ours follows it: the after-snapshot is the EXIT trap's. The `set -o` options go on its
    // first line, so that xtrace traces the command and not this script, and errexit and
    // nounset apply to the command only.
    std::string options;
    for (const auto& [name, enabled] : state.options)
        options += std::string(enabled ? " -o " : " +o ") + name;
    if (!options.empty()) script += "builtin set" + options + "; ";
    script += how.command + "\n";
    return script;
}

}  // namespace team::sessions
