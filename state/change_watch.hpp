// Wakes a waiting reader the moment any process commits to the store, without polling.
//
// A reader of the store (ChangeWatch(home)) makes a FIFO of its own in <home>/wake; every
// Store::write(), once its commit is durable and visible, writes a byte into each FIFO there
// (announce_change). The reader polls its FIFO and wakes within microseconds. FIFOs rather than
// inotify: closing an inotify descriptor that has a watch waits for an SRCU grace period in the
// kernel, 10-15 ms here, which every waiting command paid on its way out (a spawn, a kill, an
// `inbox --wait`). A FIFO left by a reader that died is removed by the next writer (opening it
// finds no reader). Where no FIFO can be made, the reader falls back to inotify on the marker
// <home>/team.db.changed, which every commit also touches. (Watching team.db-wal itself is not
// enough: SQLite writes the WAL frames before it publishes the commit in the shared-memory
// index, so a reader woken by the WAL write can look too early and then sleep through the
// commit.) Usage, race-free:
//     ChangeWatch watch(home);          // 1. watch first
//     while (!(rows = query()).size())  // 2. then look
//         if (!watch.wait_until(deadline)) break;  // 3. sleep until a commit or the deadline
// A commit between the query and the wait is still seen, because the watch was set up first.
//
// ChangeWatch(dir, name) watches one file (a log being followed) with inotify.
//
// A home whose store is PostgreSQL (SPEC 16) is woken by the store instead: the watch LISTENs on
// a connection of its own (state/pg_listen.hpp), every write NOTIFYs in its transaction, and a
// listener that lost its connection and got it back wakes its reader to re-read. fd() is then an
// epoll descriptor holding the connection's socket, so that it stays the same across reconnects.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "base/cancel.hpp"  // IWYU pragma: export; the thread's cancel descriptor, WaitCancelled

namespace team {

class PgListener;
class Store;

// Tells every ChangeWatch of `home` that the store changed: a byte into each waiting reader's
// FIFO (removing those whose reader died) and a touch of the marker. Never throws.
void announce_change(const std::filesystem::path& home);

class ChangeWatch {
  public:
    // What wakes it: any commit, or (a reader of inboxes) a commit that stored a message. Only a
    // PostgreSQL store tells them apart (a channel of their own, state/pg_db.hpp); on SQLite
    // every commit wakes every watch, and the reader looks again.
    enum class Wake { any, messages };

    // Watches the store of `home`.
    explicit ChangeWatch(const std::filesystem::path& home, Wake wake = Wake::any);
    // Watches `store`, open in this process: on PostgreSQL it LISTENs on the store's own
    // connection (no second one to make), so the store must outlive the watch and be used by
    // this thread alone meanwhile.
    explicit ChangeWatch(Store& store, Wake wake = Wake::any);
    // Watches one file, `dir`/`name`, for writes, creation and removal.
    ChangeWatch(const std::filesystem::path& dir, const std::string& name);
    ~ChangeWatch();
    ChangeWatch(const ChangeWatch&) = delete;
    ChangeWatch& operator=(const ChangeWatch&) = delete;

    // Returns true when the store may have changed since the last call (or since construction),
    // false when the deadline passed first. Spurious wake-ups are possible; callers re-query.
    // Throws WaitCancelled when the thread's cancel descriptor, or in an AskedWait its wind-down
    // descriptor (base/cancel.hpp), is readable.
    bool wait_until(std::chrono::steady_clock::time_point deadline);

    // The same, also returning when any of `others` is readable (a pidfd that ends, another
    // watch). Returns true for a change or a readable other, false at the deadline.
    bool wait_until(std::chrono::steady_clock::time_point deadline, const std::vector<int>& others);

    // The descriptor to poll() alongside others (readable when a change is pending).
    int fd() const { return fd_; }

  private:
    // Drains pending events; true when one of them concerns the watched name.
    bool drain();
    // The PostgreSQL listener's socket into fd_ (an epoll set), after a (re)connect.
    void watch_listener_socket();

    std::unique_ptr<PgListener> pg_;
    int pg_socket_ = -1;          // the socket fd_ holds
    unsigned pg_generation_ = 0;  // the listener's connection it belongs to
    int fd_ = -1;
    std::string name_;
    std::filesystem::path fifo_;  // the wake FIFO, when this watches the store that way
};

}  // namespace team
