// The SQLite store of one home (SPEC 2): team.db in WAL mode, created 0600, with a busy
// timeout, foreign keys and full fsync on every connection, migrated to the current schema
// on open. Every read-check-write goes through write(), one BEGIN IMMEDIATE transaction, so
// concurrent processes never interleave a check and its write and never see "database is
// locked" while the busy timeout lasts.
#pragma once

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Transaction.h>

#include <filesystem>
#include <memory>

#include "state/change_watch.hpp"

namespace team {

class Store {
  public:
    // Opens (creating if needed) <home>/team.db. The home must exist (see ensure_home).
    explicit Store(const std::filesystem::path& home);

    const std::filesystem::path& home() const { return home_; }
    std::filesystem::path db_path() const { return home_ / "team.db"; }
    SQLite::Database& db() { return *db_; }

    // Runs fn() in one BEGIN IMMEDIATE transaction: committed when fn returns, rolled back
    // when it throws. Returns what fn returns. A commit wakes every ChangeWatch of the home.
    template <class Fn>
    auto write(Fn&& fn) -> decltype(fn()) {
        SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
        if constexpr (std::is_void_v<decltype(fn())>) {
            fn();
            tx.commit();
            announce_change(home_);
        } else {
            auto result = fn();
            tx.commit();
            announce_change(home_);
            return result;
        }
    }

    // How long a connection waits for another process's write lock before failing.
    static constexpr int kBusyTimeoutMs = 10'000;
    // Frames of WAL after which a commit checkpoints and truncates it (see store.cpp).
    static constexpr int kWalMaxFrames = 64;

  private:
    std::filesystem::path home_;
    std::unique_ptr<SQLite::Database> db_;
};

// Turns SQLite's own exceptions into the project's errors (busy -> a clear message, read-only
// home -> a clear message), leaving team::Error as it is. Call from the top-level handler.
[[noreturn]] void rethrow_store_error(const std::exception& e);

}  // namespace team
