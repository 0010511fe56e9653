// The link's files in the home and the line exchange over its socket (see link_socket.hpp).
#include "hosts/link_socket.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/error.hpp"

namespace team::hosts {

namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;

fs::path hosts_dir(const fs::path& home) {
    return home / "hosts";
}
fs::path socket_path(const fs::path& home, const std::string& name) {
    return hosts_dir(home) / (name + ".sock");
}

int connect_unix(const fs::path& path) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    auto text = path.string();
    if (text.size() >= sizeof addr.sun_path) {
        throw failed("the link's socket path " + quote(text) + " is longer than " +
                     std::to_string(sizeof addr.sun_path - 1) + " bytes: use a shorter TEAM_HOME");
    }
    std::memcpy(addr.sun_path, text.c_str(), text.size() + 1);
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw failed(std::string("socket: ") + std::strerror(errno));
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

bool read_line(int fd, std::string& buffer, std::string& line, SteadyClock::time_point deadline) {
    for (;;) {
        if (auto nl = buffer.find('\n'); nl != std::string::npos) {
            line = buffer.substr(0, nl);
            buffer.erase(0, nl + 1);
            return true;
        }
        if (buffer.size() > kMaxLinkLine) return false;
        auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
        if (left.count() <= 0) return false;
        pollfd p{fd, POLLIN, 0};
        int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1 << 30)));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        char buf[65536];
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        buffer.append(buf, static_cast<size_t>(n));
    }
}

}  // namespace team::hosts
