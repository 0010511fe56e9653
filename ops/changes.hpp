// Waiting for the store to change, a seam of the core: what waits for a commit by any process
// (team serve's event stream, team mcp's inbox push, --follow, the waits of the verbs) asks the
// core for a `Changes` and never learns how the store tells it. The SQLite store's is a
// ChangeWatch (state/change_watch.hpp: a FIFO per waiter, written after each commit); a
// PostgreSQL store's would be LISTEN/NOTIFY on a connection's socket. Race-free when used as
//     auto changes = core.watch_changes();   // 1. watch first
//     while (nothing(look()))                 // 2. then look
//         if (!changes->wait_until(deadline)) break;  // 3. sleep until a commit or the deadline
// A commit between the look and the wait is still seen, because the watch was made first.
#pragma once

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/cancel.hpp"  // IWYU pragma: export; what ends a wait: the thread's cancel descriptor, WaitCancelled

namespace team::ops {

class Changes {
  public:
    virtual ~Changes() = default;

    // True when the store may have changed since the last call (or since this was made), or
    // when one of `others` is readable (a stop descriptor, a pidfd); false at the deadline.
    // Spurious wake-ups are possible: callers look again. Throws WaitCancelled when the
    // thread's cancel descriptor (base/cancel.hpp) is readable.
    virtual bool wait_until(std::chrono::steady_clock::time_point deadline,
                            const std::vector<int>& others) = 0;
    bool wait_until(std::chrono::steady_clock::time_point deadline) {
        return wait_until(deadline, {});
    }

    // A descriptor to poll() beside others, readable when a change is pending (then call
    // wait_until, which consumes it).
    virtual int fd() const = 0;
};

// One entry of the activity log as a stream of every change gives it: its id and type, its
// team (none for an entry of the home), and its JSON (SPEC 10) with the team in it.
struct ActivityRow {
    std::int64_t id = 0;
    std::string type;
    std::optional<std::string> team;
    nlohmann::json row;
};

}  // namespace team::ops
