// The SQLite store of one home (SPEC 2): team.db in WAL mode, created 0600, with a busy
// timeout, foreign keys and full fsync on every connection, migrated to the current schema
// on open. Every read-check-write goes through write(), one BEGIN IMMEDIATE transaction, so
// concurrent processes never interleave a check and its write and never see "database is
// locked" while the busy timeout lasts.
#pragma once

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Exception.h>
#include <SQLiteCpp/Transaction.h>

#include <filesystem>
#include <memory>

#include "state/change_watch.hpp"

namespace team {

class Store {
  public:
    // Opens (creating if needed) <home>/team.db. The home must exist (see ensure_home).
    explicit Store(const std::filesystem::path& home);
    ~Store();
    Store(const Store&) = delete;
    Store& operator=(const Store&) = delete;

    const std::filesystem::path& home() const { return home_; }
    std::filesystem::path db_path() const { return home_ / "team.db"; }
    SQLite::Database& db() { return *db_; }

    // Runs fn() in one BEGIN IMMEDIATE transaction: committed when fn returns, rolled back
    // when it throws. Returns what fn returns. A commit wakes every ChangeWatch of the home.
    // Writers first take their turn (see WriteTurn), then SQLite's write lock.
    template <class Fn>
    auto write(Fn&& fn) -> decltype(fn()) {
        try {
            return write_once(fn);
        } catch (const SQLite::Exception& e) {
            explain_write_error(e);  // busy, a read-only home, a full disk: a clear error
            throw;
        }
    }

    // Waits until the write under way, if any, has ended (committed, rolled back, or its
    // process died): it takes the writers' turn lock shared, for an instant. Whoever holds
    // its turn when it signals another process thus lets that process see its commit, however
    // long the commit takes. False when the turn lock cannot be used here (a read-only home) or
    // a writer held it past the busy timeout: the caller cannot know that the write ended.
    // Never from inside a write() of this store (it shares the turn's descriptor: it would
    // give the turn up).
    bool await_writer();

    // How long a connection waits for another process's write lock before failing.
    static constexpr int kBusyTimeoutMs = 10'000;
    // Frames of WAL after which a commit checkpoints and truncates it (see store.cpp).
    static constexpr int kWalMaxFrames = 64;

  private:
    template <class Fn>
    auto write_once(Fn& fn) -> decltype(fn()) {
        WriteTurn turn(*this);
        SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
        if constexpr (std::is_void_v<decltype(fn())>) {
            fn();
            tx.commit();
            turn.end();
            announce_change(home_);
        } else {
            auto result = fn();
            tx.commit();
            turn.end();
            announce_change(home_);
            return result;
        }
    }

    // Throws a team::Error naming the database for the store's conditions (busy, a read-only
    // home, a full disk, a damaged file); returns for any other error (a constraint, a bug).
    void explain_write_error(const SQLite::Exception& e) const;

    // A writer's turn: an exclusive flock on <home>/team.db.write.lock, held from before BEGIN
    // IMMEDIATE to the commit. SQLite's busy handler sleeps and polls (up to 100 ms between
    // tries), so under many writers a waiter keeps finding the lock taken by newcomers and can
    // starve past the busy timeout (64 processes: a few "store is busy" in 5,000 commands); a
    // blocked flock is woken at every release. The turn only orders writers: SQLite's lock
    // still guards the data, so when the lock file cannot be opened (a read-only or full home)
    // the write goes on without a turn and SQLite reports what is wrong.
    class WriteTurn {
      public:
        explicit WriteTurn(Store& store);
        ~WriteTurn() { end(); }
        WriteTurn(const WriteTurn&) = delete;
        WriteTurn& operator=(const WriteTurn&) = delete;
        void end();

      private:
        int fd_ = -1;
    };

    // The lock file of the writers' turn, opened on first use; -1 when it cannot be.
    int write_lock_fd();

    std::filesystem::path home_;
    std::unique_ptr<SQLite::Database> db_;
    int write_lock_fd_ = -2;  // -2: not opened yet; -1: cannot be opened
};

// Turns SQLite's own exceptions into the project's errors (busy -> a clear message, read-only
// home -> a clear message), leaving team::Error as it is. Call from the top-level handler.
[[noreturn]] void rethrow_store_error(const std::exception& e);

}  // namespace team
