// A companion: a child process that lives no longer than its parent (an agent's pane supervisor
// starts its worktree's watcher so). fork and exec, with PR_SET_PDEATHSIG, so that it is sent
// SIGTERM when the parent dies, however the parent dies.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace team::proc {

// Starts the program at `path` with `argv` (argv[0] included) as a child of this process: in a
// process group of its own, stdin, stdout and stderr on /dev/null, no signal blocked or
// ignored, SIGTERM when this process ends. Returns its pid (the caller reaps it, or its
// SIGCHLD handling does). Throws `failed` when the fork fails.
pid_t start_companion(const std::string& path, const std::vector<std::string>& argv);

}  // namespace team::proc
