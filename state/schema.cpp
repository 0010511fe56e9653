#include "state/schema.hpp"

#include <SQLiteCpp/SQLiteCpp.h>

#include <string>

#include "base/error.hpp"
#include "state/schema_first.hpp"

namespace team {

namespace {

// Migration N (1-based) brings a database from version N-1 to N; 1 to 10 are
// state/schema_first.cpp's (the schema PostgreSQL starts from), the later ones are here.
const char* const kLaterMigrations[] = {
    // 11: the home each agent and shell lives in (SPEC 16): homes on several machines share a
    // PostgreSQL store, and only the home an agent or a shell runs in can look at its processes
    // and its pane (state/home.hpp's home_id). NULL: a row from before, of this home.
    R"sql(
ALTER TABLE agents ADD COLUMN home_id TEXT;
ALTER TABLE shells ADD COLUMN home_id TEXT;
)sql",
    // 12: hosts (SPEC 16, second half): the machines whose `team` runs agents of the store's
    // teams, reached over ssh, each with a lease its keeper renews by the store's clock; and an
    // epoch on each task, raised when the task is handed back, so a write that carries an older
    // one is refused (a fencing token).
    R"sql(
CREATE TABLE hosts (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    ssh         TEXT NOT NULL,             -- [USER@]HOST, as ssh takes it
    team_path   TEXT NOT NULL,             -- the far team binary
    home_id     TEXT NOT NULL UNIQUE,      -- the far home's id (state/home.hpp)
    version     TEXT NOT NULL,             -- the far team's version when last checked
    lease_ms    INTEGER NOT NULL,
    renewed_at  INTEGER,                   -- by the store's clock; NULL: no keeper holds it
    lost_at     INTEGER,                   -- `team host lost`, or its lease ran out
    rtt_us      INTEGER,                   -- the last check's round trip
    checked_at  INTEGER,
    check_error TEXT,
    added_at    INTEGER NOT NULL
);
ALTER TABLE tasks ADD COLUMN epoch INTEGER NOT NULL DEFAULT 0;
)sql",
    // 13: each live worktree's git state as its agent's watcher (team/worktree_watch.hpp) last
    // saw it, so that a look reads it instead of asking git: the state (JSON: counts,
    // ahead/behind, merge check, the branch's head and changed files, the watcher's pid),
    // when it was seen, and the conflicts with the other agents' branches (JSON), recomputed
    // when a branch moves. NULL: no watcher has recorded one (a look asks git).
    R"sql(
ALTER TABLE worktrees ADD COLUMN git_state TEXT;
ALTER TABLE worktrees ADD COLUMN git_state_at INTEGER;
ALTER TABLE worktrees ADD COLUMN git_conflicts TEXT;
)sql",
    // 14: what each agent is doing (SPEC 17): its activity as its best source last reported it
    // (team/agent_activity.hpp), with what it waits on and when it last took a prompt; and the
    // settings of the home (team_id NULL) and of each team (team/config.hpp).
    R"sql(
CREATE TABLE agent_activity (
    agent_id    INTEGER PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
    state       TEXT NOT NULL CHECK (state IN ('starting', 'working', 'waiting', 'idle')),
    since       INTEGER NOT NULL,
    source      TEXT NOT NULL,             -- hooks, acp, screen: who said so
    waiting_on  TEXT,                      -- JSON, when waiting: {kind, tool, command, file, text}
    reported_at INTEGER NOT NULL,          -- the source's last report
    prompted_at INTEGER                    -- its last report of a submitted prompt
);
CREATE TABLE config (
    team_id INTEGER REFERENCES teams(id) ON DELETE CASCADE,  -- NULL: the home's
    key     TEXT NOT NULL,
    value   TEXT NOT NULL,
    set_at  INTEGER NOT NULL,
    set_by  TEXT NOT NULL
);
CREATE UNIQUE INDEX config_key ON config(COALESCE(team_id, 0), key);
)sql",
    // 15: what each agent spends (SPEC 18), kept after it ends: the agent's own record of its
    // model calls (found through its hooks) and where the next read of it starts; each call
    // read, once (its key), for the windows of `team usage --since`; the tokens summed per
    // model; the agent's own cost figure; its turns; CPU and memory as its supervisor samples
    // them; its limits (set at its spawn) and which of them warned and stopped it
    // (team/usage.hpp).
    R"sql(
CREATE TABLE agent_usage (
    agent_id       INTEGER PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
    records        TEXT,             -- a path: the agent's own record of its calls
    records_kind   TEXT,             -- claude, codex, gemini: how it is read
    cursor         TEXT,             -- JSON: where the next read of it starts
    agent_cost     REAL,             -- USD, the agent's own figure (Claude Code's status line)
    turns          INTEGER NOT NULL DEFAULT 0,
    cpu_ms         INTEGER NOT NULL DEFAULT 0,
    rss            INTEGER,          -- bytes, of the whole tree, at the last sample
    pss            INTEGER,
    peak_rss       INTEGER,
    peak_pss       INTEGER,
    sampled_at     INTEGER,
    max_tokens     INTEGER,
    max_cost       REAL,
    max_memory     INTEGER,
    max_runtime_ms INTEGER,
    limit_grace_ms INTEGER NOT NULL DEFAULT 30000,
    warned         TEXT,             -- JSON array: the limits warned of at 80 %
    stopped        TEXT              -- the limit that stopped it
);
CREATE TABLE usage_calls (
    agent_id    INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    key         TEXT NOT NULL,
    at          INTEGER NOT NULL,
    model       TEXT NOT NULL,
    input       INTEGER NOT NULL,
    output      INTEGER NOT NULL,
    cache_read  INTEGER NOT NULL,
    cache_write INTEGER NOT NULL,
    PRIMARY KEY (agent_id, key)
);
CREATE TABLE usage_models (
    agent_id    INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    model       TEXT NOT NULL,
    calls       INTEGER NOT NULL,
    input       INTEGER NOT NULL,
    output      INTEGER NOT NULL,
    cache_read  INTEGER NOT NULL,
    cache_write INTEGER NOT NULL,
    PRIMARY KEY (agent_id, model)
);
CREATE TABLE team_budget (
    team_id INTEGER PRIMARY KEY REFERENCES teams(id) ON DELETE CASCADE,
    warned  INTEGER NOT NULL DEFAULT 0,  -- its max-cost warned of at 80 %
    stopped INTEGER NOT NULL DEFAULT 0   -- its agents stopped at 100 %
);
)sql",
    // 16: what it takes to bring an agent back after a reboot (SPEC 19, team/resume.hpp): its
    // preset and command as asked (a preset is wired again at each start), and its
    // conversation's id, chosen at spawn or learned from its reports; the tasks an agent held when
    // it ended, so that its resume takes back those nobody claimed since (their epoch unchanged);
    // the ACP session to `session/load` at its host's next start; when its current run began and
    // how long its runs before it lasted (its runtime, a limit's too, leaves out the time it was
    // down). An agent's --env values are
    // never kept: `env` keeps their names (the values reach its supervisor through a private
    // file, team/env_file.hpp), and the values kept before are dropped here.
    R"sql(
CREATE TABLE agent_resume (
    agent_id        INTEGER PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
    preset          TEXT,               -- claude, codex, gemini: wired again at each start
    argv            TEXT NOT NULL,      -- JSON: the command as asked, before a preset's wiring
    conversation    TEXT,               -- claude, codex, gemini, acp: how its conversation resumes
    conversation_id TEXT,               -- chosen at spawn or learned from its reports
    resumes         INTEGER NOT NULL DEFAULT 0,
    resumed_at      INTEGER
);
ALTER TABLE tasks ADD COLUMN handed_back_from TEXT;
ALTER TABLE tasks ADD COLUMN handed_back_status TEXT;
ALTER TABLE tasks ADD COLUMN handed_back_epoch INTEGER;
ALTER TABLE acp_agents ADD COLUMN load_from TEXT;
ALTER TABLE agent_usage ADD COLUMN run_from INTEGER;
ALTER TABLE agent_usage ADD COLUMN run_before_ms INTEGER NOT NULL DEFAULT 0;
UPDATE agents SET env = (
    SELECT COALESCE(json_group_array(CASE WHEN instr(value, '=') > 0
                                          THEN substr(value, 1, instr(value, '=') - 1)
                                          ELSE value END), '[]')
    FROM json_each(agents.env))
WHERE env LIKE '%=%';
)sql",
    // 17: landing agents' work (SPEC 20, team/land.hpp): each `team land` and each branch it
    // takes, written ahead of what git is asked, so that a land killed at any point is finished
    // by the next one: its check ended, its scratch worktree removed, a branch whose target had
    // moved to the landed commit recorded landed (and never landed twice).
    R"sql(
CREATE TABLE lands (
    id          INTEGER PRIMARY KEY,
    team_id     INTEGER NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    started_at  INTEGER NOT NULL,
    ended_at    INTEGER,
    started_by  TEXT NOT NULL,
    pid         INTEGER NOT NULL,
    into_branch TEXT NOT NULL,
    strategy    TEXT NOT NULL,
    check_cmd   TEXT NOT NULL,
    scratch     TEXT,             -- its scratch worktree, until removed
    status      TEXT NOT NULL     -- running | done | stopped | interrupted
);
CREATE INDEX lands_team ON lands(team_id, id);
CREATE TABLE land_items (
    land_id    INTEGER NOT NULL REFERENCES lands(id) ON DELETE CASCADE,
    position   INTEGER NOT NULL,
    agent      TEXT NOT NULL,
    agent_id   INTEGER,
    branch     TEXT NOT NULL,
    tip        TEXT NOT NULL,     -- the branch's commit taken
    state      TEXT NOT NULL,     -- queued | checking | landing, then its outcome
    onto       TEXT,              -- the target's tip it was brought onto
    candidate  TEXT,              -- the commit made there
    shell_id   TEXT,              -- the check's shell
    result     TEXT,              -- JSON: the row as the result shows it
    decided_at INTEGER,
    PRIMARY KEY (land_id, position)
);
CREATE INDEX land_items_landed ON land_items(branch, tip) WHERE state = 'landed';
)sql",
};

static_assert(kFirstMigrations + sizeof(kLaterMigrations) / sizeof(kLaterMigrations[0]) ==
                  kSchemaVersion,
              "kSchemaVersion must equal the number of migrations");

const char* migration(int n) {
    return n <= kFirstMigrations ? first_migration(n) : kLaterMigrations[n - kFirstMigrations - 1];
}

}  // namespace

int schema_version(SQLite::Database& db) {
    return db.execAndGet("PRAGMA user_version").getInt();
}

void migrate(SQLite::Database& db, int target) {
    int version = schema_version(db);
    if (version > kSchemaVersion) {
        throw refused("the database was written by a newer version of team (schema " +
                      std::to_string(version) + ", this program knows up to " +
                      std::to_string(kSchemaVersion) + "); it was left untouched: upgrade team");
    }
    for (int next = version + 1; next <= target; ++next) {
        SQLite::Transaction tx(db, SQLite::TransactionBehavior::EXCLUSIVE);
        // Re-read inside the transaction: another process may have migrated meanwhile.
        if (schema_version(db) >= next) continue;
        db.exec(migration(next));
        db.exec("PRAGMA user_version = " + std::to_string(next));
        tx.commit();
    }
}

}  // namespace team
