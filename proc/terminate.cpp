#include "proc/terminate.hpp"

#include <signal.h>
#include <unistd.h>

#include <set>

#include "proc/pidfd.hpp"

namespace team::proc {

namespace {

using Clock = std::chrono::steady_clock;

// Opens a verified handle on each process not already handled; returns the new ones.
std::vector<Pidfd> open_new(const std::vector<ProcessInfo>& procs, std::set<pid_t>& seen) {
    std::vector<Pidfd> out;
    for (const auto& p : procs) {
        if (!seen.insert(p.pid).second) continue;
        if (auto fd = Pidfd::open(p.pid, p.start_time)) out.push_back(std::move(*fd));
    }
    return out;
}

}  // namespace

std::vector<ProcessInfo> find_trees(const std::vector<TreeTarget>& targets) {
    auto all = scan_processes();
    pid_t self = ::getpid();
    std::set<pid_t> picked;
    std::vector<ProcessInfo> tree;
    auto add = [&](const ProcessInfo& p) {
        if (p.pid == self || p.is_zombie() || !picked.insert(p.pid).second) return;
        tree.push_back(p);
    };
    bool any_marker = false;
    for (const auto& target : targets) {
        any_marker = any_marker || !target.marker.empty();
        if (target.root > 0) {
            bool root_alive = false;
            for (const auto& p : all) {
                if (p.pid == target.root &&
                    (target.root_start == 0 || p.start_time == target.root_start)) {
                    root_alive = true;
                    if (target.include_root) add(p);
                }
            }
            if (root_alive) {
                for (const auto& p : descendants(target.root, all)) add(p);
            }
        }
        if (target.pgid > 0) {
            for (const auto& p : all) {
                if (p.pgid == target.pgid) add(p);
            }
        }
    }
    if (any_marker) {
        // Each environment is read once, whatever the number of targets.
        for (const auto& p : all) {
            if (picked.count(p.pid) || p.pid == self || p.is_zombie()) continue;
            std::string env = environ_of(p.pid);
            if (env.empty()) continue;
            for (const auto& target : targets) {
                if (target.marker.empty()) continue;
                bool every = true;
                for (const auto& entry : target.marker) every = every && environ_has(env, entry);
                if (every) {
                    add(p);
                    break;
                }
            }
        }
    }
    // A member of a group or a marked process may have descendants of its own.
    size_t direct = tree.size();
    for (size_t i = 0; i < direct; ++i) {
        for (const auto& p : descendants(tree[i].pid, all)) add(p);
    }
    return tree;
}

TreeTarget tree_of_record(std::optional<std::int64_t> root, std::optional<std::int64_t> root_start,
                          std::optional<std::int64_t> leader,
                          std::optional<std::int64_t> leader_start, std::vector<std::string> marker,
                          bool include_root) {
    TreeTarget target;
    if (root) {
        target.root = static_cast<pid_t>(*root);
        target.root_start = static_cast<std::uint64_t>(root_start.value_or(0));
        target.include_root = include_root;
    }
    // The group only when its leader is provably the process recorded: a pid without its start
    // time could name a stranger's group.
    if (leader && leader_start &&
        Pidfd::open(static_cast<pid_t>(*leader), static_cast<std::uint64_t>(*leader_start))) {
        target.pgid = static_cast<pid_t>(*leader);
    }
    target.marker = std::move(marker);
    return target;
}

std::vector<ProcessInfo> find_tree(const TreeTarget& target) {
    return find_trees({target});
}

TerminateOutcome terminate_tree(const TreeTarget& target, int sig, std::chrono::milliseconds grace,
                                bool force) {
    return terminate_trees({target}, sig, grace, force);
}

TerminateOutcome terminate_trees(const std::vector<TreeTarget>& targets, int sig,
                                 std::chrono::milliseconds grace, bool force) {
    TerminateOutcome outcome;
    std::set<pid_t> seen;
    std::vector<Pidfd> handles;
    auto deadline = Clock::now() + grace;

    // Signal the tree; then, until it is gone or the grace is over, signal whatever appeared
    // meanwhile (a process forking while it is being killed) and wait on exits.
    for (int round = 0;; ++round) {
        auto fresh = open_new(find_trees(targets), seen);
        for (const auto& h : fresh) {
            if (h.signal(sig)) ++outcome.signalled;
            h.signal(SIGCONT);
        }
        for (auto& h : fresh) handles.push_back(std::move(h));
        // Poll in short slices so late-forked processes are found without waiting long.
        auto slice =
            std::min(deadline, Clock::now() + std::chrono::milliseconds(round < 5 ? 5 : 50));
        bool all_gone = wait_all_exited(handles, slice);
        if (all_gone && find_trees(targets).empty()) return outcome;
        if (Clock::now() >= deadline) break;
    }

    // Grace is over: whatever is left of the tree, and whatever it forks, gets SIGKILL.
    if (!force) {
        outcome.survivors = static_cast<int>(find_trees(targets).size());
        return outcome;
    }
    auto kill_deadline = Clock::now() + std::chrono::seconds(5);
    for (;;) {
        std::set<pid_t> none;
        std::vector<Pidfd> now;
        for (auto& h : open_new(find_trees(targets), none)) now.push_back(std::move(h));
        if (now.empty()) break;
        outcome.force_killed = true;
        for (const auto& h : now) h.signal(SIGKILL);
        wait_all_exited(now,
                        std::min(kill_deadline, Clock::now() + std::chrono::milliseconds(100)));
        if (Clock::now() >= kill_deadline) {
            outcome.survivors = static_cast<int>(find_trees(targets).size());
            break;
        }
    }
    return outcome;
}

}  // namespace team::proc
