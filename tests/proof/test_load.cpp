// Issue 8, load: 64 `team` processes at once on one home for 30 s, mixing sends, inbox reads
// (--mark-read), task claims, spawns and force kills (bench/load_mix.hpp says what each does
// and what is checked). Nothing may be lost or done twice, no caller may see "database is
// locked", every exit code must be one SPEC 1.4 allows; the latencies are printed, never
// asserted (the machine is shared and noisy).

#include <catch2/catch.hpp>
#include <iostream>
#include <optional>
#include <random>
#include <vector>

#include "bench/load_mix.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/marker.hpp"
#include "tests/support/pg.hpp"
#include "tests/support/process.hpp"

namespace {

using team::test::kSanitized;

// The load on one home, on its SQLite file or on a database of the tests' PostgreSQL cluster,
// and its checks.
void load_proof(bool on_postgresql) {
    std::optional<team::test::PgDatabase> db;
    if (on_postgresql) db.emplace();
    team::test::TeamEnv env(db ? db->url() : "sqlite");
    team::test::Marker mark;
    team::load::LoadOptions o;
    o.team_binary = team::test::team_binary();
    o.home = env.home().string();
    if (db) o.store = db->url();
    o.workers = 64;
    // Under AddressSanitizer 64 team processes at once on this machine take some 15 s each
    // (p50 of every operation in a trial run), so the operations still running at the end add
    // up to 25 s, and the setup (8 spawns) another 10: 20 s of mix keeps the test near 60 s
    // there, well within ~120 s. The plain build runs the full 30 s, 20 s on PostgreSQL (where
    // each process costs 45-55 ms more, docs/performance.md).
    o.seconds = kSanitized || on_postgresql ? 20 : 30;
    o.extra_env = {mark.entry()};
    o.seed = std::random_device{}();

    team::load::LoadReport rep;
    try {
        rep = team::load::run_load(o);
    } catch (const std::exception& e) {
        FAIL("the load's setup failed: " << e.what());
    }
    std::cout << "load (seed " << o.seed << "):\n"
              << rep.table() << "load json: " << rep.to_json().dump() << std::endl;

    INFO(rep.table());
    // The mix did what it should. Under AddressSanitizer a worker gets through only one or two
    // operations of 15 s each, too few for every kind to come up (a kill needs a spawn first).
    std::vector<const char*> expected{"send", "read", "claim"};
    if (!kSanitized) {
        expected.insert(expected.end(), {"send-leader", "read-agent", "read-leader", "claim-id",
                                         "task-add", "spawn", "kill", "status", "agents"});
    }
    for (const char* op : expected) {
        INFO("operation " << op);
        CHECK(rep.ops[op].count > 0);
    }
    CHECK(rep.sent > 0);
    CHECK(rep.read > 0);
    CHECK(rep.claims > 0);
    if (!kSanitized) {
        CHECK(rep.spawned > 0);
        CHECK(rep.killed > 0);
    }
    // Messages: every reported send stored once; each read by exactly one reader.
    CHECK(rep.lost == 0);
    CHECK(rep.duplicated == 0);
    CHECK(rep.unexpected == 0);
    CHECK(rep.stored_after_failure == 0);
    CHECK(rep.stored == rep.sent);
    CHECK(rep.read_twice == 0);
    CHECK(rep.never_read == 0);
    CHECK(rep.read_unmarked == 0);
    // Tasks: no task in two successful claims, each owned by its claimer.
    CHECK(rep.double_claims == 0);
    CHECK(rep.wrong_owner == 0);
    CHECK(rep.phantom_claims == 0);
    // Agents: a force-killed one is gone, the others live.
    CHECK(rep.kill_survivors == 0);
    CHECK(rep.extras_wrong_state == 0);
    // Every process: no lock error seen by a caller, no signal, only allowed exit codes.
    CHECK(rep.locked == 0);
    CHECK(rep.signaled == 0);
    CHECK(rep.bad_exits == 0);
    CHECK(rep.bad_outputs == 0);
    CHECK(rep.ok());

    // Nothing of the test is left: the home's server goes with every pane, `team` records the
    // ends, and no process carrying the marker survives.
    env.tmux({"kill-server"});
    env.run({"agents", "--all", "--json"}, {{mark.key(), mark.value()}, {"TEAM_NAME", o.team}});
    CHECK(mark.none_alive_within(5000));
}

TEST_CASE("load: 64 processes for 30 s mixing sends reads claims spawns and kills lose nothing",
          "[load][serial]") {
    load_proof(false);
}

// The same load on a PostgreSQL store (the `pg` label, on the tests' cluster, scripts/pg-rig),
// the same checks.
TEST_CASE(
    "load on PostgreSQL: 64 processes mixing sends reads claims spawns and kills lose nothing",
    "[load][serial][pg-only]") {
    load_proof(true);
}

}  // namespace
