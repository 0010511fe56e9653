// The schema of a PostgreSQL store and its forward migrations (SPEC 2 and 16).
//
// The tables, columns (in the same order), constraints and indexes are those of the SQLite
// schema (state/schema.cpp) at the same version, in PostgreSQL's types: a PostgreSQL store is
// created directly at kPgFirstVersion, and each later SQLite migration gets its PostgreSQL twin,
// appended to the table in pg_schema.cpp, so that the two engines always share kSchemaVersion.
// The version is the one row of the table team_schema.
#pragma once

#include "state/db.hpp"

namespace team {

// The version a new PostgreSQL store starts at: the SQLite schema when PostgreSQL came.
inline constexpr int kPgFirstVersion = 10;

// The store's schema version: 0 when it has no team_schema (an empty database).
int pg_schema_version(Db& db);

// Brings the store to kSchemaVersion in one transaction, under an advisory lock (so that two
// programs starting on a new store do not both create it), the version re-read inside. Throws
// StoreError(schema) when the store is newer than this program, untouched.
void pg_migrate(Db& db);

}  // namespace team
