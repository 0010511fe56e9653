// A PostgreSQL store's schema as it is made (state/pg_schema.hpp): SQLite's schema at version
// 10, the first ten migrations of state/schema_first.cpp, at once, in PostgreSQL's types. Never
// edited: a change of the schema is a migration of both engines.
#pragma once

namespace team {

// The SQL that makes the store at version 10 (kPgFirstVersion), its team_schema table with it.
const char* pg_first_schema();

}  // namespace team
