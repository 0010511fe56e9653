// The migration harness: a database of every older schema version, with data in it, is brought
// to the current version by opening a Store, and keeps its data. A newer one is refused untouched.
#include <SQLiteCpp/SQLiteCpp.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "base/error.hpp"
#include "state/schema.hpp"
#include "state/store.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/process.hpp"

using namespace team;
using team::test::TempDir;

namespace {

std::string file_bytes(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// Puts rows into a database of schema `version` that every later version must keep.
void seed(SQLite::Database& db, int version) {
    if (version >= 1) {
        db.exec(R"sql(
            INSERT INTO teams (id, name, cwd, leader, created_at) VALUES (1, 'web', '/', 'lead', 5);
            INSERT INTO agents (team_id, name, is_leader, status, created_at)
                VALUES (1, 'lead', 1, 'active', 5);
            INSERT INTO activity (team_id, at, actor, type) VALUES (1, 5, 'lead@web', 'team_created');
        )sql");
    }
    if (version >= 2) {
        db.exec(R"sql(
            INSERT INTO shells (id, team_id, command, cwd, status, output_file, started_at)
                VALUES ('bg-000001', 1, '["true"]', '/', 'completed', '/x', 5);
            INSERT INTO activity (team_id, at, actor, type) VALUES (NULL, 6, 'user', 'shell_started');
        )sql");
    }
    if (version >= 3) {
        db.exec("UPDATE agents SET env = '[\"A=1\"]', log_file = '/l' WHERE name = 'lead'");
    }
    if (version >= 4) {
        db.exec(R"sql(
            INSERT INTO messages (team_id, sender, recipient_id, recipient, text, created_at)
                VALUES (1, 'lead', 1, 'lead', 'hi', 7);
            INSERT INTO tasks (team_id, id, subject, created_at, updated_at)
                VALUES (1, 1, 'a', 7, 7), (1, 2, 'b', 7, 7);
            INSERT INTO task_blockers (team_id, task_id, blocker) VALUES (1, 2, 1);
        )sql");
    }
    if (version >= 5) {
        db.exec(R"sql(
            INSERT INTO agents (id, team_id, name, status, created_at)
                VALUES (2, 1, 'w', 'terminated', 8);
            INSERT INTO shutdown_requests (team_id, agent_id, method, phase, requested_by,
                                           requested_at, grace_ms, closed_at)
                VALUES (1, 2, 'graceful', 'confirmed', 'lead@web', 8, 5000, 9);
        )sql");
    }
    if (version >= 6) {
        db.exec(R"sql(
            INSERT INTO sessions (id, name, state, team_id, created_by, created_at, updated_at)
                VALUES (1, 'app', '{"cwd": "/srv"}', 1, 'lead@web', 10, 10);
            INSERT INTO session_execs (session_id, command, actor, supervisor_pid,
                                       supervisor_start, started_at)
                VALUES (1, 'make', 'lead@web', 1, 1, 10);
            UPDATE shells SET session = 'app' WHERE id = 'bg-000001';
        )sql");
    }
    if (version >= 7) {
        db.exec(R"sql(
            UPDATE agents SET spawner_pid = 42, spawner_start = 43 WHERE id = 2;
            UPDATE shutdown_requests SET force_at = 11, force_at_boot = 12;
        )sql");
    }
}

template <class Database>
void check_seed_kept(Database& db, int version) {
    if (version >= 1) {
        CHECK(team::test::exec_and_get(db, "SELECT name FROM teams WHERE id = 1").getString() ==
              "web");
        CHECK(team::test::exec_and_get(db, "SELECT count(*) FROM agents WHERE id = 1").getInt() ==
              1);
        CHECK(team::test::exec_and_get(db, "SELECT type FROM activity WHERE id = 1").getString() ==
              "team_created");
    }
    if (version >= 2) {
        CHECK(team::test::exec_and_get(db, "SELECT status FROM shells").getString() == "completed");
        CHECK(team::test::exec_and_get(db, "SELECT count(*) FROM activity WHERE team_id IS NULL")
                  .getInt() == 1);
    }
    if (version >= 3) {
        // An --env value kept before schema 16 is dropped by it (SPEC 19): its name only.
        CHECK(team::test::exec_and_get(db, "SELECT env || log_file FROM agents").getString() ==
              (version < 16 ? "[\"A\"]/l" : "[\"A=1\"]/l"));
    }
    if (version >= 4) {
        CHECK(team::test::exec_and_get(db, "SELECT text FROM messages").getString() == "hi");
        CHECK(team::test::exec_and_get(db, "SELECT blocker FROM task_blockers WHERE task_id = 2")
                  .getInt() == 1);
    }
    if (version >= 5) {
        CHECK(team::test::exec_and_get(db, "SELECT phase FROM shutdown_requests").getString() ==
              "confirmed");
    }
    if (version >= 6) {
        CHECK(team::test::exec_and_get(db, "SELECT state FROM sessions").getString() ==
              R"({"cwd": "/srv"})");
        CHECK(team::test::exec_and_get(db, "SELECT command FROM session_execs").getString() ==
              "make");
        CHECK(team::test::exec_and_get(db, "SELECT session FROM shells").getString() == "app");
    }
    if (version >= 7) {
        CHECK(team::test::exec_and_get(
                  db, "SELECT spawner_pid || ' ' || spawner_start FROM agents WHERE id = 2")
                  .getString() == "42 43");
        CHECK(
            team::test::exec_and_get(db, "SELECT force_at_boot FROM shutdown_requests").getInt() ==
            12);
    }
}

}  // namespace

TEST_CASE("every older schema version migrates to the current one, data kept", "[schema]") {
    for (int from = 0; from <= kSchemaVersion; ++from) {
        DYNAMIC_SECTION("from version " << from) {
            TempDir tmp;
            {
                SQLite::Database db((tmp.path() / "team.db").string(),
                                    SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
                db.exec("PRAGMA journal_mode = WAL");
                migrate(db, from);
                REQUIRE(schema_version(db) == from);
                seed(db, from);
            }
            Store store(tmp.path());
            CHECK(team::test::exec_and_get(store.db(), "PRAGMA user_version").getInt() ==
                  kSchemaVersion);
            CHECK(team::test::exec_and_get(store.db(), "PRAGMA integrity_check").getString() ==
                  "ok");
            team::Statement fk(store.db(), "PRAGMA foreign_key_check");
            CHECK_FALSE(fk.executeStep());
            check_seed_kept(store.db(), from);
        }
    }
}

TEST_CASE("migrating twice changes nothing", "[schema]") {
    TempDir tmp;
    { Store store(tmp.path()); }
    { Store again(tmp.path()); }
    Store third(tmp.path());
    CHECK(team::test::exec_and_get(third.db(), "PRAGMA user_version").getInt() == kSchemaVersion);
}

TEST_CASE("a database newer than the program is refused and left untouched", "[schema]") {
    TempDir tmp;
    auto path = tmp.path() / "team.db";
    {
        Store store(tmp.path());
        store.db().exec("PRAGMA user_version = " + std::to_string(kSchemaVersion + 1));
        store.db().exec("PRAGMA wal_checkpoint(TRUNCATE)");
    }
    std::string before = file_bytes(path);
    try {
        Store store(tmp.path());
        FAIL("opened");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::refused);
        CHECK_THAT(e.what(), Catch::Contains("newer version of team"));
    }
    CHECK(file_bytes(path) == before);
}
