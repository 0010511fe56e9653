// The threads of `team serve` that run operations, so that its loop never blocks: a few workers
// for the calls that answer at once (each keeps its cores between calls, http/api.hpp), and at
// most `waiters` threads for the calls that may wait (a --wait, a kill's grace, a terminate's
// 5 s), each such call on one of them while it runs. Past that bound a waiting call is refused at
// once (the server answers 503) rather than queued behind waits of minutes. Every thread has the
// server's wind-down descriptor (base/cancel.hpp), so the waits the callers asked for end when
// the server stops, and its stop descriptor as its cancel descriptor, so every wait ends when it
// is told twice. No Beast here (tests/unit/test_http_gate.cpp).
#pragma once

#include <functional>
#include <memory>

namespace team::http {

class Pool {
  public:
    using Job = std::function<void()>;

    Pool(int workers, int waiters, int stop_fd, int wind_down_fd);
    ~Pool();  // stop()
    Pool(const Pool&) = delete;
    Pool& operator=(const Pool&) = delete;

    // Queues a call that answers at once for the workers.
    void post(Job job);
    // Runs a call that may wait on a waiting thread (an idle one, else a new one); false, and
    // nothing done, when `waiters` calls are waiting already.
    bool post_waiting(Job job);
    int waiters() const;

    // Joins the workers (their queue is dropped: the server stops once every call taken has
    // been answered). The waiting threads are let go, not joined: after a second signal a
    // kill's grace may still run; they keep the pool's state alive until they end.
    void stop();

  private:
    struct State;
    std::shared_ptr<State> state_;
};

}  // namespace team::http
