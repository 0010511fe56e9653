// Cancelling the waits of one thread. Two descriptors, each ending waits once readable:
// - the cancel descriptor ends every wait the thread makes (the store's change waits, and any
//   other wait that polls it too): the request was withdrawn (MCP's notifications/cancelled), or
//   the server gives up on what still runs;
// - the wind-down descriptor ends only the waits the caller asked for (a read's waitMs, a waited
//   prompt, wait_shell, kill-agent --wait), each marked by an AskedWait while it waits: the
//   server stops taking requests (team mcp's input ended, team serve's SIGTERM). Work under way
//   (a kill's grace, a spawn's start, a command's run) goes on, so its answer is written.
// Whatever the store behind the waits (SQLite's FIFOs, PostgreSQL's NOTIFY), the faces cancel
// through these alone.
#pragma once

#include <stdexcept>

namespace team {

// Sets the descriptor that ends every wait of this thread when it becomes readable; -1 (the
// default): waits are not cancellable. Returns the previous one.
int set_thread_cancel_fd(int fd);

// This thread's cancel descriptor, -1 when none: a wait polls it beside what it waits for.
int thread_cancel_fd();

// Sets the descriptor that ends this thread's asked waits when it becomes readable; -1 (the
// default): none. Returns the previous one.
int set_thread_wind_down_fd(int fd);

// The descriptor a wait polls to be ended early: the wind-down descriptor inside an AskedWait,
// else -1.
int thread_asked_wait_fd();

// Marks the waits of its lifetime, on this thread, as asked for by the caller.
class AskedWait {
  public:
    AskedWait();
    ~AskedWait();
    AskedWait(const AskedWait&) = delete;
    AskedWait& operator=(const AskedWait&) = delete;

  private:
    bool previous_;
};

// What a wait throws when one of the thread's descriptors became readable. `wound_down`: the
// server stopped taking requests and ended a wait the caller asked for (its answer is still
// written, as a timeout); otherwise the request was cancelled, and nobody reads its answer.
class WaitCancelled : public std::runtime_error {
  public:
    explicit WaitCancelled(bool wound_down = false)
        : std::runtime_error(wound_down ? "the wait was ended early: the server is stopping"
                                        : "the request was cancelled"),
          wound_down_(wound_down) {}
    bool wound_down() const { return wound_down_; }

  private:
    bool wound_down_;
};

}  // namespace team
