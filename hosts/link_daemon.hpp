// The link to a host (hosts/link.hpp describes the wire): `team __link NAME`, a detached process
// of the home that holds one long-lived ssh to the host's `team __channel`, listens on
// <home>/hosts/NAME.sock, and forwards the requests of every command that connects, numbered, over
// that one session. It says hello first, replaces a stale ssh control socket, and ends when idle
// or told to stop.
#pragma once

#include <filesystem>
#include <string>

#include "hosts/ssh_target.hpp"

namespace team::hosts {

// `team __link NAME`: the link's body. `ready_fd` gets "ok" once it listens. `store_url` is what
// the far side is asked to use (its hello). Returns the exit code.
int run_link(const std::filesystem::path& home, const LinkTarget& target,
             const std::string& version, const std::string& store_url, int ready_fd);

}  // namespace team::hosts
