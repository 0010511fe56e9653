// team runs with umask 077, so that everything it creates (home, database, logs, locks) is
// private to the user; the commands it starts (background shells, `team run`, sessions, agents
// through tmux) get the umask team was started with, as they would from the user's shell.
#pragma once

#include <sys/types.h>

namespace team {

// Sets this process's umask to 077 and remembers the one it had, for the commands it starts.
void make_files_private();
// The umask team was started with (077 before make_files_private()).
mode_t command_umask();

}  // namespace team
