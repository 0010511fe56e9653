// The link's files in the home and its wire: where a host's link listens (<home>/hosts/NAME.sock)
// and keeps its lock, log and ssh control socket, and the one-JSON-line-at-a-time exchange over
// a unix socket. Shared by the client side (link_client.cpp) and the link itself
// (link_daemon.cpp); not for use outside hosts/.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <string>

namespace team::hosts {

// The longest line either side reads: a reply may carry a log's tail.
inline constexpr std::size_t kMaxLinkLine = 16u << 20;

// <home>/hosts, which holds every link's files.
std::filesystem::path hosts_dir(const std::filesystem::path& home);
// The socket on which the link to host `name` listens.
std::filesystem::path socket_path(const std::filesystem::path& home, const std::string& name);

// A connection to the unix socket at `path`; -1 when nothing listens there. Throws when the path
// is too long for a socket.
int connect_unix(const std::filesystem::path& path);

// Reads one line from `fd` (without its newline) until `deadline`; false at EOF, an error, a
// line over kMaxLinkLine or the deadline. `buffer` keeps what came after the line.
bool read_line(int fd, std::string& buffer, std::string& line,
               std::chrono::steady_clock::time_point deadline);

}  // namespace team::hosts
