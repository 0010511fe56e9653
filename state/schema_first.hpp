// The first ten migrations of team.db (state/schema.hpp): the schema as it stood at version 10,
// which a PostgreSQL store is created at (state/pg_schema.cpp), migration by migration. Never
// edited: a change of the schema is a new migration in state/schema.cpp.
#pragma once

namespace team {

inline constexpr int kFirstMigrations = 10;

// Migration `n` (1 to kFirstMigrations): its SQL.
const char* first_migration(int n);

}  // namespace team
