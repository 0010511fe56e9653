#include "proc/process_table.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <unordered_map>

namespace team::proc {

namespace {

// Reads a small /proc file in one go; empty when it cannot be read.
std::string read_small(const char* path) {
    int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return {};
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
    ::close(fd);
    return out;
}

// /proc/PID/stat: "pid (comm) state ppid pgrp session ... starttime(22) ...". comm may hold
// spaces and parentheses, so parsing starts after the last ')'.
std::optional<ProcessInfo> parse_stat(pid_t pid, const std::string& stat) {
    auto close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size()) return std::nullopt;
    const char* p = stat.c_str() + close + 2;
    ProcessInfo info;
    info.pid = pid;
    info.state = *p;
    // Fields after the state, numbered as in proc(5): 4 ppid, 5 pgrp, 6 session, 22 starttime.
    int field = 3;
    while (*p && field < 22) {
        while (*p && *p != ' ') ++p;
        while (*p == ' ') ++p;
        ++field;
        char* end = nullptr;
        switch (field) {
            case 4:
                info.ppid = static_cast<pid_t>(std::strtol(p, &end, 10));
                break;
            case 5:
                info.pgid = static_cast<pid_t>(std::strtol(p, &end, 10));
                break;
            case 6:
                info.sid = static_cast<pid_t>(std::strtol(p, &end, 10));
                break;
            case 22:
                info.start_time = std::strtoull(p, &end, 10);
                break;
            default:
                break;
        }
    }
    if (field < 22) return std::nullopt;
    return info;
}

}  // namespace

std::optional<ProcessInfo> read_process(pid_t pid) {
    if (pid <= 0) return std::nullopt;
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
    std::string stat = read_small(path);
    if (stat.empty()) return std::nullopt;
    return parse_stat(pid, stat);
}

std::optional<std::uint64_t> start_time_of(pid_t pid) {
    auto info = read_process(pid);
    if (!info) return std::nullopt;
    return info->start_time;
}

std::vector<ProcessInfo> scan_processes() {
    std::vector<ProcessInfo> all;
    DIR* dir = ::opendir("/proc");
    if (dir == nullptr) return all;
    while (dirent* entry = ::readdir(dir)) {
        const char* name = entry->d_name;
        if (*name < '1' || *name > '9') continue;
        pid_t pid = static_cast<pid_t>(std::strtol(name, nullptr, 10));
        if (auto info = read_process(pid)) all.push_back(*info);
    }
    ::closedir(dir);
    return all;
}

std::vector<ProcessInfo> descendants(pid_t root, const std::vector<ProcessInfo>& all) {
    std::unordered_multimap<pid_t, const ProcessInfo*> children;
    for (const auto& p : all) children.emplace(p.ppid, &p);
    std::vector<ProcessInfo> out;
    std::vector<pid_t> frontier{root};
    while (!frontier.empty()) {
        pid_t parent = frontier.back();
        frontier.pop_back();
        auto [begin, end] = children.equal_range(parent);
        for (auto it = begin; it != end; ++it) {
            if (it->second->pid == root) continue;
            out.push_back(*it->second);
            frontier.push_back(it->second->pid);
        }
    }
    return out;
}

std::string environ_of(pid_t pid) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/environ", static_cast<int>(pid));
    return read_small(path);
}

std::string cmdline_of(pid_t pid) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/cmdline", static_cast<int>(pid));
    return read_small(path);
}

bool environ_has(const std::string& env, const std::string& entry) {
    for (size_t start = 0; start < env.size();) {
        size_t end = env.find('\0', start);
        if (end == std::string::npos) end = env.size();
        if (env.compare(start, end - start, entry) == 0) return true;
        start = end + 1;
    }
    return false;
}

bool environ_has(pid_t pid, const std::string& entry) {
    return environ_has(environ_of(pid), entry);
}

}  // namespace team::proc
