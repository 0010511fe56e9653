// Test support: PostgreSQL for the tests labelled `pg` (docs/testing.md). ctest starts one
// throw-away cluster per run with scripts/pg-rig (a unix socket in its directory, no TCP) and
// names that directory in TEAM_TEST_PG; every TeamEnv then makes a database of its own on it.
// Databases are made and dropped through psql: the tests do not link libpq (team_core opens it
// at run time, for a PostgreSQL store alone).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "tests/support/process.hpp"

namespace team::test {

// The rig's socket directory ($TEAM_TEST_PG), or nothing when the tests run on SQLite.
std::optional<std::filesystem::path> test_pg_dir();

// The store URL of database `name` on the cluster whose socket is in `socket_dir`:
// postgresql://team@/NAME?host=DIR (DIR percent-encoded where a URL needs it).
std::string pg_store_url(const std::filesystem::path& socket_dir, const std::string& name);

// Runs `sql` with psql as the superuser `team` on database `db` (no psqlrc, stops at the first
// error, rows printed unaligned without headers: one value a line, `|` between columns).
RunResult psql(const std::filesystem::path& socket_dir, const std::string& db,
               const std::string& sql);

// The same, in the background: a session the test holds open (e.g. holding a lock) until the SQL
// ends or the server ends it.
Child psql_start(const std::filesystem::path& socket_dir, const std::string& db,
                 const std::string& sql);

// A database of its own, t_<16 hex digits>, made when constructed and dropped WITH (FORCE) (its
// sessions ended) when it goes. Its url() is a store that several homes can share: give it to
// TeamEnv(url) for each. Declare it before those homes, so that it outlives them.
class PgDatabase {
  public:
    // On the rig's cluster ($TEAM_TEST_PG; fails the test when that is not set).
    PgDatabase();
    // On the cluster whose socket is in `socket_dir` (e.g. a PgCluster's).
    explicit PgDatabase(std::filesystem::path socket_dir);
    ~PgDatabase();  // says on stderr, and goes on, when the drop fails; skipped when the server is
                    // down
    PgDatabase(const PgDatabase&) = delete;
    PgDatabase& operator=(const PgDatabase&) = delete;

    const std::string& name() const { return name_; }
    const std::filesystem::path& socket_dir() const { return socket_dir_; }
    std::string url() const { return pg_store_url(socket_dir_, name_); }
    // Runs `sql` on this database (see psql above).
    RunResult sql(const std::string& sql) const { return psql(socket_dir_, name_, sql); }
    // Ends every session on this database (pg_terminate_backend), as a failing server or an
    // administrator would; returns how many there were.
    int terminate_sessions() const;

  private:
    std::filesystem::path socket_dir_;
    std::string name_;
};

// A cluster of the test's own (scripts/pg-rig in a temporary directory, about 2-3 s to start),
// for fault tests that stop and start the server: never the rig's, which other tests use at the
// same time. Stopped and removed when it goes, whatever state it was left in.
class PgCluster {
  public:
    PgCluster();
    ~PgCluster();
    PgCluster(const PgCluster&) = delete;
    PgCluster& operator=(const PgCluster&) = delete;

    const std::filesystem::path& socket_dir() const { return dir_; }
    // Stops the server and keeps its data: `mode` is pg_ctl's, "fast" (sessions ended, a
    // checkpoint), "immediate" (as a crash: no checkpoint) or "smart" (waits for the sessions).
    void down(const std::string& mode = "fast") const;
    // Starts the stopped server again, on the same data and socket.
    void up() const;

  private:
    TempDir tmp_;
    std::filesystem::path dir_;
};

}  // namespace team::test
