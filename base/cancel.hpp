// Cancelling the waits of one thread: a descriptor that, once readable, ends every wait the
// thread makes (the store's change waits, and any other wait that polls it too). The MCP server
// sets an eventfd per request, written when the request is cancelled or stdin closes; team serve
// sets its stop descriptor, written at SIGTERM. Whatever the store behind the waits (state/'s
// SQLite FIFOs today), the faces cancel through this alone.
#pragma once

#include <stdexcept>

namespace team {

// Sets the descriptor that ends every wait of this thread when it becomes readable; -1 (the
// default): waits are not cancellable. Returns the previous one.
int set_thread_cancel_fd(int fd);

// This thread's cancel descriptor, -1 when none: a wait polls it beside what it waits for.
int thread_cancel_fd();

// What a wait throws when the thread's cancel descriptor became readable: the request that
// waited was withdrawn, and nobody reads its answer.
class WaitCancelled : public std::runtime_error {
  public:
    WaitCancelled() : std::runtime_error("the request was cancelled") {}
};

}  // namespace team
