// Where a home's state lives (SPEC 1.1 and 2): the directory that holds team.db, the lock
// files, the tmux socket and the logs of one independent installation of `team`.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace team {

// --home, else $TEAM_HOME, else $XDG_STATE_HOME/team, else ~/.local/state/team.
// An empty value counts as absent. Relative paths are made absolute.
std::filesystem::path resolve_home(const std::optional<std::string>& flag);

// Creates the home (and missing parents) with mode 0700. Throws a failed error that names the
// path when it cannot be created or is not a directory.
void ensure_home(const std::filesystem::path& home);

// The home's id (<home>/id, made on first use: "HOSTNAME:16 hex digits"). Homes on several
// machines that share a store (SPEC 16) record it on the agents and shells they run, so that
// each looks only at its own processes and panes.
std::string home_id(const std::filesystem::path& home);

}  // namespace team
