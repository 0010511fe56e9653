// The SQLite backend of the store (SPEC 2): <home>/team.db in WAL mode, created 0600, with a busy
// timeout, foreign keys and full fsync, migrated to the current schema on open. Its write path is
// the writers' turn (an flock, see below) and BEGIN IMMEDIATE; its wake-ups are the home's FIFOs
// (state/change_watch.hpp).
#pragma once

#include <filesystem>
#include <memory>

#include "state/db.hpp"

namespace team {

// Opens (creating if needed) <home>/team.db. The home must exist (see ensure_home).
std::unique_ptr<Db> open_sqlite(const std::filesystem::path& home);

// How long a connection waits for another process's write lock before failing.
inline constexpr int kSqliteBusyTimeoutMs = 10'000;
// Frames of WAL after which a commit checkpoints and truncates it (see sqlite_db.cpp).
inline constexpr int kSqliteWalMaxFrames = 64;

// Waits until the write under way in the home, if any, has ended (committed, rolled back, or its
// process died): it takes the writers' turn lock shared, for an instant. Whoever holds its turn
// when it signals another process thus lets that process see its commit, however long the
// commit takes. False when the turn lock cannot be used here (a read-only home) or a writer held
// it past the busy timeout: the caller cannot know that the write ended. Never from inside a
// write of the same process's store on the same descriptor (see Store::await_writer).
bool sqlite_await_writer(Db& db);

}  // namespace team
