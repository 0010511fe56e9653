// How a host is reached (SPEC 16): its name, its ssh destination and the far team's path, each
// checked before it is stored or used (no option, no shell syntax), and the ssh command line that
// the link (hosts/link_daemon.hpp) runs with them.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace team::hosts {

// How to reach a host.
struct LinkTarget {
    std::string name;       // the host's name in the store
    std::string ssh;        // [USER@]HOST
    std::string team_path;  // the far team binary
};

// Checks a host's name, its ssh destination and its team path (no option, no shell syntax).
void check_host_name(const std::string& name);
void check_ssh_destination(const std::string& ssh);
void check_team_path(const std::string& path);

// How long ssh may take to connect (ssh_command's ConnectTimeout).
inline constexpr int kSshConnectTimeoutS = 2;

// The ssh command that reaches `target` with the link's options, running `remote` (argv, each
// word quoted for the far shell).
std::vector<std::string> ssh_command(const std::filesystem::path& home, const LinkTarget& target,
                                     const std::vector<std::string>& remote);

}  // namespace team::hosts
