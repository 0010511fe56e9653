// Test support: conditions read from /proc, so that a test waits for the state it needs rather
// than sleeping and hoping: a process waiting on the store, waiting for a lock, running a given
// program, or not being killed.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "proc/process_table.hpp"

namespace team::test {

// Whether the process is watching the store or a file: a waiter (`inbox --wait`, `activity
// --follow`, `kill-agent --wait`, `teardown`, `shell output --follow`) makes its wake FIFO
// (<home>/wake/w-<pid>-N, see state/change_watch.hpp) or holds an inotify descriptor before it
// first looks, so from then on no change can slip past it.
inline bool watching(pid_t pid) {
    namespace fs = std::filesystem;
    std::error_code ec;
    std::string fifo = "/wake/w-" + std::to_string(pid) + "-";
    for (auto it = fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
         !ec && it != fs::directory_iterator(); it.increment(ec)) {
        std::error_code link_ec;
        auto target = fs::read_symlink(it->path(), link_ec).string();
        if (!link_ec &&
            (target == "anon_inode:inotify" || target.find(fifo) != std::string::npos)) {
            return true;
        }
    }
    return false;
}

// Whether the process is blocked waiting for a lock (an flock or a POSIX lock): /proc/locks
// lists each waiter on a line with "->" before its lock.
inline bool waiting_for_lock(pid_t pid) {
    std::ifstream locks("/proc/locks");
    std::string line;
    while (std::getline(locks, line)) {
        if (line.find("->") == std::string::npos) continue;
        std::istringstream fields(line.substr(line.find("->") + 2));
        std::string kind, advisory, mode, owner;
        fields >> kind >> advisory >> mode >> owner;
        if (owner == std::to_string(pid)) return true;
    }
    return false;
}

// Whether `root` or one of its descendants runs a program named `comm` (/proc/PID/comm).
inline bool runs_program(pid_t root, const std::string& comm) {
    auto all = proc::scan_processes();
    auto tree = proc::descendants(root, all);
    if (auto self = proc::read_process(root)) tree.push_back(*self);
    for (const auto& p : tree) {
        std::ifstream in("/proc/" + std::to_string(p.pid) + "/comm");
        std::string name;
        std::getline(in, name);
        if (name == comm && !p.is_zombie()) return true;
    }
    return false;
}

// Whether the process is alive and nothing has killed it: no SIGKILL pending (a SIGKILL sent by
// a command that has returned is pending until its target takes it) and not exiting (PF_EXITING,
// set as soon as it takes a fatal signal). After the command under test has returned, this tells
// at once, with no sleep, that the command did not kill the process.
inline bool not_killed(pid_t pid) {
    auto p = proc::read_process(pid);
    if (!p || p->is_zombie()) return false;
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    constexpr unsigned long long kKillBit = 1ULL << (9 - 1);  // SIGKILL
    while (std::getline(status, line)) {
        if (line.rfind("SigPnd:", 0) == 0 || line.rfind("ShdPnd:", 0) == 0) {
            if (std::stoull(line.substr(7), nullptr, 16) & kKillBit) return false;
        }
    }
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    auto close = text.rfind(')');
    if (close == std::string::npos) return false;
    // After "pid (comm)": state ppid pgrp session tty_nr tpgid flags.
    std::istringstream after(text.substr(close + 1));
    std::string field;
    unsigned long long flags = 0;
    for (int i = 0; i < 7 && after >> field; ++i) {
        if (i == 6) flags = std::stoull(field);
    }
    constexpr unsigned long long kExiting = 0x4;  // PF_EXITING
    return (flags & kExiting) == 0;
}

}  // namespace team::test
