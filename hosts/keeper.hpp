// The host keeper (SPEC 16): on a host, the process that holds the host's lease in the store.
// Started with the host's first agent (by the spawn that made it), one per home (an flock), it
// renews the lease every lease/6 by the store's clock. When it cannot renew for 3/4 of the lease
// (the store cut off, or the machine's network gone) it ends every agent of its home itself,
// whole trees and their supervisors, and the home's tmux server, before any other home can
// take their tasks back (at the lease's end and a grace). When the store says the host is lost
// (its tasks were handed back meanwhile), it does the same at once. It gives the lease up and
// ends once no agent of its home is left.
#pragma once

#include <filesystem>
#include <string>

#include "base/time.hpp"
#include "state/store.hpp"

namespace team::hosts {

// Starts this home's keeper when this home is a host of the store and none runs. Returns "" or
// why it could not (the caller reports it; the agent runs, without a lease).
std::string ensure_keeper(Store& store, const std::string& team_binary);

// `team __keeper`: the keeper's body. `ready_fd` gets "ok" once it holds its lock. Returns the
// exit code.
int run_keeper(const std::filesystem::path& home, const Clock& clock, int ready_fd);

}  // namespace team::hosts
