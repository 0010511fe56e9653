#include "hosts/link.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <thread>

#include "base/error.hpp"
#include "hosts/link_socket.hpp"
#include "proc/detach.hpp"

namespace team::hosts {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

nlohmann::json call(const fs::path& home, const LinkTarget& target, const std::string& team_binary,
                    nlohmann::json request, std::chrono::milliseconds timeout) {
    auto deadline = SteadyClock::now() + timeout;
    auto sock = socket_path(home, target.name);
    int fd = connect_unix(sock);
    if (fd < 0) {
        // No link runs for this host: start one (two starters at once: one takes the lock, the
        // other answers "ok" and both connect to the first).
        auto answer =
            proc::start_detached(team_binary,
                                 {team_binary, "__link", "--home", home.string(), "--ssh",
                                  target.ssh, "--team-path", target.team_path, target.name},
                                 5s);
        if (answer.rfind("ok", 0) != 0) {
            throw Unreachable("the link to host " + quote(target.name) + " did not start" +
                              (answer.empty() ? std::string() : ": " + answer));
        }
        fd = connect_unix(sock);
        if (fd < 0) {
            throw Unreachable("the link to host " + quote(target.name) + " did not answer on " +
                              sock.string());
        }
    }
    std::string line = request.dump() + "\n";
    proc::write_all(fd, line);
    std::string buffer, reply;
    bool got = read_line(fd, buffer, reply, deadline);
    ::close(fd);
    if (!got) {
        throw Unreachable("host " + quote(target.name) + " (" + target.ssh +
                          ") did not answer within " + std::to_string(timeout.count()) + " ms");
    }
    auto doc = nlohmann::json::parse(reply, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) {
        throw Unreachable("the link to host " + quote(target.name) + " answered garbage");
    }
    if (doc.contains("unreachable")) throw Unreachable(doc["unreachable"].get<std::string>());
    return doc;
}

void stop_link(const fs::path& home, const std::string& name) {
    int fd = connect_unix(socket_path(home, name));
    if (fd < 0) return;
    proc::write_all(fd, "{\"stop\":true}\n");
    std::string buffer, line;
    read_line(fd, buffer, line, SteadyClock::now() + 5s);
    ::close(fd);
    // Until it has ended (its lock released), so that nothing of it is left when this returns.
    int lock_fd = ::open((hosts_dir(home) / (name + ".lock")).c_str(), O_RDWR | O_CLOEXEC);
    if (lock_fd < 0) return;
    auto until = SteadyClock::now() + 5s;
    while (::flock(lock_fd, LOCK_EX | LOCK_NB) != 0 && SteadyClock::now() < until) {
        std::this_thread::sleep_for(5ms);
    }
    ::close(lock_fd);
}

}  // namespace team::hosts
