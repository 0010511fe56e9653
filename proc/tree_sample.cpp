#include "proc/tree_sample.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace team::proc {

namespace {

// A small /proc file read whole; "" when it cannot be.
std::string read_proc(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return "";
    std::string out;
    char buf[4096];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n <= 0) break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return out;
}

// utime + stime + cutime + cstime of /proc/PID/stat, in clock ticks; -1 when gone.
long long cpu_ticks(pid_t pid) {
    std::string stat = read_proc("/proc/" + std::to_string(pid) + "/stat");
    auto close = stat.rfind(')');
    if (close == std::string::npos || close + 2 > stat.size()) return -1;
    // After the command: field 3 (the state) first; utime is field 14, then stime, cutime and
    // cstime.
    const char* p = stat.c_str() + close + 2;
    long long total = 0;
    for (int field = 3; field <= 17 && *p; ++field) {
        const char* end = std::strchr(p, ' ');
        if (field >= 14) total += std::strtoll(p, nullptr, 10);
        if (!end) break;
        p = end + 1;
    }
    return total;
}

// "Rss:" and "Pss:" of /proc/PID/smaps_rollup, in bytes.
void memory_of(pid_t pid, std::int64_t& rss, std::int64_t& pss) {
    std::string text = read_proc("/proc/" + std::to_string(pid) + "/smaps_rollup");
    auto field = [&](const char* name) -> std::int64_t {
        auto at = text.find(name);
        if (at == std::string::npos) return 0;
        return std::strtoll(text.c_str() + at + std::strlen(name), nullptr, 10) * 1024;
    };
    rss += field("\nRss:");
    pss += field("\nPss:");
}

void children_of(pid_t pid, std::vector<pid_t>& out) {
    std::string tasks = "/proc/" + std::to_string(pid) + "/task";
    DIR* dir = ::opendir(tasks.c_str());
    if (!dir) return;
    while (auto* e = ::readdir(dir)) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        std::string list = read_proc(tasks + "/" + e->d_name + "/children");
        const char* p = list.c_str();
        while (*p) {
            char* end = nullptr;
            long v = std::strtol(p, &end, 10);
            if (end == p) break;
            if (v > 0) out.push_back(static_cast<pid_t>(v));
            p = end;
            while (*p == ' ' || *p == '\n') ++p;
        }
    }
    ::closedir(dir);
}

}  // namespace

TreeSample sample_tree(pid_t root) {
    TreeSample s;
    static const long ticks = ::sysconf(_SC_CLK_TCK) > 0 ? ::sysconf(_SC_CLK_TCK) : 100;
    std::vector<pid_t> todo{root};
    long long total_ticks = 0;
    while (!todo.empty() && s.processes < 4096) {
        pid_t pid = todo.back();
        todo.pop_back();
        long long t = cpu_ticks(pid);
        if (t < 0) continue;
        ++s.processes;
        total_ticks += t;
        memory_of(pid, s.rss, s.pss);
        children_of(pid, todo);
    }
    s.cpu_ms = total_ticks * 1000 / ticks;
    return s;
}

}  // namespace team::proc
