// The PostgreSQL backend of the store (SPEC 2 and 16): one libpq connection to a server that
// many homes and hosts share. Its write path is a transaction-level advisory lock taken right
// after BEGIN (all writers of a store take turns, as SQLite's do); its wake-up is a NOTIFY on
// kPgChangeChannel sent inside the writing transaction, so listeners hear of a change exactly
// when it commits. Its errors become StoreError kinds in one place (pg_db.cpp).
//
// The repositories' SQL reaches the server translated once per statement (`?` and `?N` become
// `$N`); parameters and results travel as text. SQL that a connection runs a second time is
// prepared on the server then and reused after (a per-connection cache by SQL text): a command
// that runs each statement once pays no extra round trip, a server's repeated reads run faster.
// A statement's binding and reading is its own room (state/pg_statement.hpp).
//
// A lost connection (the server restarted, the network cut) fails the statement that found it
// with Kind::unreachable; the next statement outside a write reconnects first (once), so that a
// long-lived process carries on when the store is back.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "state/db.hpp"
#include "state/pg_text.hpp"  // IWYU pragma: export; redact_store_url

struct pg_conn;  // libpq's PGconn

namespace team {

// The advisory lock key every writer of a store holds for its transaction (Db::begin_write).
inline constexpr std::int64_t kPgWriteLockKey = 7472601;
// The advisory lock key a migration holds (pg_schema.hpp); apart from the writers' key.
inline constexpr std::int64_t kPgMigrateLockKey = 7472602;
// The advisory lock key a shared write (Db::Turn::shared) takes from its first row of a log read
// by cursor (Db::Change) to its commit, so that appended rows commit in the order of their ids.
inline constexpr std::int64_t kPgAppendLockKey = 7472603;
// The channel commit_write notifies and a ChangeWatch listens on.
inline constexpr const char* kPgChangeChannel = "team_changes";
// The channel a write that stored a message (Db::Change::messages) also notifies: a reader that
// waits for messages alone (ChangeWatch::Wake::messages) listens there, so the server hands it
// nothing else.
inline constexpr const char* kPgMessageChannel = "team_messages";
// The channel on which a command rings the supervisor of an agent of another home (its id as
// the payload), where a signal cannot reach it (team/shutdown_parts.hpp wake_supervisor).
inline constexpr const char* kPgSupervisorChannel = "team_supervisors";
// How long a writer waits for the writers' lock (and any row lock in its write) before the
// store is reported busy, as SQLite's busy timeout.
inline constexpr int kPgLockTimeoutMs = 10'000;

// Connects to the store at `url` (a postgresql:// URI or a libpq key=value string). Unless the
// URL sets them: connect_timeout=5, TCP keepalives (5 s idle, 2 s apart, 3 probes),
// tcp_user_timeout=10000, application_name=team, client_encoding=UTF8. The session then has
// client_min_messages = warning, and the server's notices never reach stderr.
// Throws StoreError(cannot_open) with libpq's reason when it cannot connect.
std::unique_ptr<Db> open_postgresql(const std::string& url);

// A bare libpq connection to `url` with the settings above (for a listener, state/pg_listen.hpp);
// nullptr when it cannot connect, and then `reason` (if given) says why, one line, without the
// password. The caller PQfinish-es it.
pg_conn* connect_postgresql(const std::string& url, std::string* reason = nullptr);

// The connection of `db` (which must come from open_postgresql), for the listener that shares it
// (state/pg_listen.hpp); lost, it is made again first. nullptr when the store cannot be reached.
pg_conn* pg_connection(Db& db);
// One listener at a time shares a connection (a second, nested one would take the first's
// notifications and end its LISTEN): true when this one may, until pg_unshare.
bool pg_share(Db& db);
void pg_unshare(Db& db);
// How many times `db` has made its connection again (each time, what LISTENed on it stopped).
unsigned pg_resets(const Db& db);
// The connection string `db` was opened with.
const std::string& pg_url(const Db& db);

// The store for messages, its URL redacted: "the store 'postgresql://team:***@db/team'".
// `db` must come from open_postgresql.
std::string pg_store_name(const Db& db);

}  // namespace team
