// Ending a whole process tree, leaving nothing behind (FIELD-NOTES "Killing", SPEC 7.2 and 8).
//
// The tree is everything below a root process (typically a supervisor that is a child
// subreaper, so descendants that escaped with setsid or a double fork are reparented to it and
// stay below it), plus every member of a process group, plus, when a marker is given, every
// process whose environment carries it (the last resort when the root itself is gone).
// Each process is signalled through a pidfd opened against its start time, so a pid that was
// reused by someone else is never signalled.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "proc/process_table.hpp"

namespace team::proc {

struct TreeTarget {
    pid_t root = 0;                // descendants of this process...
    std::uint64_t root_start = 0;  // ...if it is still the process that started then
    bool include_root = false;     // and the root itself
    pid_t pgid = 0;                // and the members of this process group (0: none)
    // and processes whose environment has every one of these "K=V" entries (none: no scan).
    // Several entries make a marker unique across homes (TEAM_HOME and an id).
    std::vector<std::string> marker;
};

// The tree of a record as the store keeps it (nullable pids and start times): below its
// supervisor `root` while that is the process recorded; the process group of `leader` while
// that process is the one recorded (alive, or a zombie that still holds the group's id); and
// the processes carrying `marker`.
TreeTarget tree_of_record(std::optional<std::int64_t> root, std::optional<std::int64_t> root_start,
                          std::optional<std::int64_t> leader,
                          std::optional<std::int64_t> leader_start, std::vector<std::string> marker,
                          bool include_root = false);

// The live (not zombie) processes of the tree, now. Never includes the calling process.
std::vector<ProcessInfo> find_tree(const TreeTarget& target);
// The same for several trees at once (one scan of /proc): their union.
std::vector<ProcessInfo> find_trees(const std::vector<TreeTarget>& targets);

struct TerminateOutcome {
    int signalled = 0;          // processes the first signal reached
    bool force_killed = false;  // SIGKILL was needed for some
    int survivors = 0;          // processes still alive at the end (only without force)
};

// Sends `sig` (with SIGCONT, so stopped processes can act on it) to the whole tree, waits up to
// `grace` for it to end, and then, when `force` is set, SIGKILLs whatever is left, including
// processes forked meanwhile, until nothing of the tree is alive. Returns as soon as the tree is
// gone. Processes that end by themselves meanwhile are not errors.
TerminateOutcome terminate_tree(const TreeTarget& target, int sig, std::chrono::milliseconds grace,
                                bool force);
// The same for several trees at once, all of them within the one grace (a teardown).
TerminateOutcome terminate_trees(const std::vector<TreeTarget>& targets, int sig,
                                 std::chrono::milliseconds grace, bool force);

}  // namespace team::proc
