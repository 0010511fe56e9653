// The PostgreSQL backend's text work, without a server (state/pg_text.hpp): the common dialect's
// parameters and SQLite's index hints translated, and passwords never shown.
#include <catch2/catch.hpp>

#include "state/pg_text.hpp"

using team::pg_translate_parameters;
using team::redact_store_url;

TEST_CASE("? and ?N become $N, outside strings, identifiers and comments", "[pg]") {
    int n = 0;
    CHECK(pg_translate_parameters("SELECT a FROM t WHERE x = ? AND y = ?", &n) ==
          "SELECT a FROM t WHERE x = $1 AND y = $2");
    CHECK(n == 2);
    CHECK(pg_translate_parameters("UPDATE t SET a = ?2 WHERE id = ?1 AND b = ?1", &n) ==
          "UPDATE t SET a = $2 WHERE id = $1 AND b = $1");
    CHECK(n == 2);
    CHECK(pg_translate_parameters("SELECT '?', \"a?\" FROM t -- ?\nWHERE x = ?") ==
          "SELECT '?', \"a?\" FROM t -- ?\nWHERE x = $1");
    CHECK(pg_translate_parameters("SELECT 'it''s ?' WHERE x = ? /* ? */") ==
          "SELECT 'it''s ?' WHERE x = $1 /* ? */");
}

TEST_CASE("SQLite's INDEXED BY hints are dropped (the space before them stays) and nothing else",
          "[pg]") {
    CHECK(pg_translate_parameters("SELECT id FROM tasks t INDEXED BY tasks_status WHERE a = ?") ==
          "SELECT id FROM tasks t  WHERE a = $1");
    CHECK(pg_translate_parameters("UPDATE tasks indexed\n by tasks_owner SET x = 1") ==
          "UPDATE tasks  SET x = 1");
    CHECK(pg_translate_parameters("SELECT reindexed, 'INDEXED BY x' FROM t") ==
          "SELECT reindexed, 'INDEXED BY x' FROM t");
}

TEST_CASE("a store URL is shown without its password", "[pg]") {
    CHECK(redact_store_url("postgresql://team:s3cret@db.example/team") ==
          "postgresql://team:***@db.example/team");
    CHECK(redact_store_url("postgresql://team@/t?host=/tmp&password=s3cret") ==
          "postgresql://team@/t?host=/tmp&password=***");
    CHECK(redact_store_url("host=db user=team password=s3cret dbname=team").find("s3cret") ==
          std::string::npos);
    CHECK(redact_store_url("postgresql://team@db/team") == "postgresql://team@db/team");
}
