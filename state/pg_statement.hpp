// A statement of the PostgreSQL backend (state/pg_db.hpp): the common dialect's SQL translated
// once (`?N` to `$N`), its parameters bound as text, and its rows read back as the repositories
// read SQLite's (NULL as 0 or "", a boolean as 1 or 0). It runs through its connection
// (PgConnection, which PgDb in pg_db.cpp is); not for use outside state/.
#pragma once

#include <libpq-fe.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "state/db.hpp"

namespace team {

using PgResult = std::unique_ptr<PGresult, decltype(&PQclear)>;

// What a statement asks of its connection.
class PgConnection {
  public:
    virtual ~PgConnection() = default;
    // Runs translated `sql` with `values` (text, nullptr for NULL); throws StoreError.
    virtual PgResult run(const std::string& sql, const std::vector<const char*>& values) = 0;
    // The number of columns sql's rows have, asked of the server before it runs.
    virtual int columns(const std::string& sql, int parameters) = 0;
    // The store, quoted and redacted, for messages.
    virtual const std::string& name() const = 0;
};

// A statement of `connection`, which must outlive it.
std::unique_ptr<StatementImpl> make_pg_statement(PgConnection& connection, std::string_view sql);

}  // namespace team
