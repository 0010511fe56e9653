#include "tests/support/marker.hpp"

#include "tests/support/helpers.hpp"

#include <signal.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <thread>

#include "proc/pidfd.hpp"
#include "proc/process_table.hpp"

namespace team::test {

Marker::Marker() {
    unsigned char bytes[8];
    (void)!::getrandom(bytes, sizeof bytes, 0);
    static const char* hex = "0123456789abcdef";
    for (unsigned char b : bytes) {
        value_ += hex[b >> 4];
        value_ += hex[b & 15];
    }
    entry_ = key_ + "=" + value_;
}

Marker::~Marker() {
    for (int round = 0; round < 5; ++round) {
        auto pids = alive();
        if (pids.empty()) return;
        for (pid_t pid : pids) ::kill(pid, SIGKILL);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

std::vector<pid_t> Marker::alive() const {
    std::vector<pid_t> out;
    pid_t self = ::getpid();
    for (const auto& p : proc::scan_processes()) {
        if (p.pid == self || p.is_zombie()) continue;
        if (proc::environ_has(p.pid, entry_)) out.push_back(p.pid);
    }
    return out;
}

bool Marker::none_alive_within(int ms) const {
    ms = bound(ms);  // sanitized processes (supervisors included) take much longer to exit
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    for (;;) {
        auto pids = alive();
        if (pids.empty()) return true;
        if (std::chrono::steady_clock::now() >= deadline) {
            // Say what is left, so a failure can be understood from the log alone.
            for (pid_t pid : pids) {
                std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
                std::string cmdline((std::istreambuf_iterator<char>(in)),
                                    std::istreambuf_iterator<char>());
                std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
                std::fprintf(stderr, "still alive with the marker: %d %s\n", static_cast<int>(pid),
                             cmdline.c_str());
            }
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

bool Marker::kill_all_within(int ms) const {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(bound(ms));
    // Each opened before its kill: its exit is seen even if its number is taken again.
    std::map<pid_t, proc::Pidfd> killed;
    for (;;) {
        auto pids = alive();
        std::erase_if(pids, [&](pid_t pid) { return killed.count(pid) > 0; });
        if (pids.empty()) break;
        for (pid_t pid : pids) {
            if (auto fd = proc::Pidfd::open(pid, 0)) {
                fd->signal(SIGKILL);
                killed.emplace(pid, std::move(*fd));
            }
        }
        if (std::chrono::steady_clock::now() >= deadline) return false;
    }
    std::vector<proc::Pidfd> fds;
    for (auto& [pid, fd] : killed) fds.push_back(std::move(fd));
    return proc::wait_all_exited(fds, deadline) && none_alive_within(0);
}

}  // namespace team::test
