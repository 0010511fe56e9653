// What a process tree uses, from /proc (SPEC 18): CPU time, and memory as RSS and PSS summed
// over the tree. The tree is walked from its root through each thread's `children` list
// (/proc/PID/task/TID/children), without scanning every process of the machine; a process that
// left the tree (daemonised, reparented away) is not in it.
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace team::proc {

struct TreeSample {
    std::int64_t cpu_ms = 0;  // user and system time of the live processes and of the children
                              // they have waited for (whose time the kernel adds to theirs)
    std::int64_t rss = 0;     // bytes, summed (pages shared between them counted in each)
    std::int64_t pss = 0;     // bytes: each shared page split between its sharers
    int processes = 0;        // 0: the root is gone
};

TreeSample sample_tree(pid_t root);

}  // namespace team::proc
