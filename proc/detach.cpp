#include "proc/detach.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/error.hpp"
#include "base/umask.hpp"

namespace team::proc {

using SteadyClock = std::chrono::steady_clock;

void write_all(int fd, std::string_view data) {
    while (!data.empty()) {
        ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        data.remove_prefix(static_cast<size_t>(n));
    }
}

void answer_starter(int& fd, std::string_view line) {
    if (fd < 0) return;
    write_all(fd, std::string(line) + "\n");
    ::close(fd);
    fd = -1;
}

std::string start_detached(const std::string& path, const std::vector<std::string>& argv,
                           std::chrono::milliseconds timeout) {
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    int ready[2];
    if (::pipe2(ready, O_CLOEXEC) != 0) throw failed(std::string("pipe: ") + std::strerror(errno));
    pid_t pid = ::fork();
    if (pid < 0) throw failed(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
        ::setsid();
        ::umask(command_umask());  // the child keeps it for the command
        ::dup2(ready[1], 3);       // dup2 clears close-on-exec
        int null_fd = ::open("/dev/null", O_RDWR);
        ::dup2(null_fd, 0);
        ::dup2(null_fd, 1);
        ::dup2(null_fd, 2);
        // Nothing else of ours (or of whoever started us) stays open in the child: a pipe kept
        // open there could make a caller wait for an EOF that never comes.
        ::syscall(SYS_close_range, 4U, ~0U, 0);
        ::execv(path.c_str(), args.data());
        ::_exit(127);
    }
    ::close(ready[1]);
    std::string reply;
    char buf[4096];
    pollfd p{ready[0], POLLIN, 0};
    auto deadline = SteadyClock::now() + timeout;
    while (SteadyClock::now() < deadline) {
        int left = static_cast<int>(
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now())
                .count());
        if (::poll(&p, 1, left + 1) <= 0) continue;
        ssize_t n = ::read(ready[0], buf, sizeof buf);
        if (n > 0) {
            reply.append(buf, static_cast<size_t>(n));
            if (reply.find('\n') != std::string::npos) break;  // one line is the whole answer
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        break;
    }
    ::close(ready[0]);
    auto end = reply.find('\n');
    return end == std::string::npos ? reply : reply.substr(0, end);
}

}  // namespace team::proc
