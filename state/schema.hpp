// The schema of team.db and its forward migrations (SPEC 2).
//
// Every change to the schema is a new migration appended to the list in schema.cpp, never an
// edit of an old one; kSchemaVersion (PRAGMA user_version) is the number of migrations.
// A database whose version is higher than kSchemaVersion was written by a newer program and is
// refused untouched. tests/unit/test_schema.cpp migrates from every older version.
#pragma once

namespace SQLite {
class Database;
}

namespace team {

inline constexpr int kSchemaVersion = 17;

// PRAGMA user_version of the open database.
int schema_version(SQLite::Database& db);

// Applies migrations from the database's version up to `target` (default: the latest), each in
// its own transaction together with the version bump. Throws if the database is newer.
void migrate(SQLite::Database& db, int target = kSchemaVersion);

}  // namespace team
