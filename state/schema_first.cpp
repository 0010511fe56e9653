#include "state/schema_first.hpp"

namespace team {

namespace {

const char* const kFirst[] = {
    // 1: teams, their members (the leader is one) and the activity log.
    R"sql(
CREATE TABLE teams (
    id           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL,
    description  TEXT NOT NULL DEFAULT '',
    cwd          TEXT NOT NULL,
    leader       TEXT NOT NULL,
    status       TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'dissolved')),
    created_at   INTEGER NOT NULL,
    dissolved_at INTEGER
);
-- One live team per name; a dissolved team's name can be taken again.
CREATE UNIQUE INDEX teams_live_name ON teams(name) WHERE status = 'active';

CREATE TABLE agents (
    id             INTEGER PRIMARY KEY,
    team_id        INTEGER NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    name           TEXT NOT NULL,
    role           TEXT NOT NULL DEFAULT '',
    is_leader      INTEGER NOT NULL DEFAULT 0,
    status         TEXT NOT NULL
                   CHECK (status IN ('spawning', 'active', 'shutting_down', 'terminated')),
    pane_id        TEXT,
    pid            INTEGER,
    pid_start_time INTEGER,
    color          TEXT,
    command        TEXT NOT NULL DEFAULT '[]',
    cwd            TEXT,
    created_at     INTEGER NOT NULL,
    terminated_at  INTEGER,
    exit_code      INTEGER,
    signal         TEXT,
    exit_reason    TEXT CHECK (exit_reason IN ('confirmed', 'force_killed', 'exited', 'lost'))
);
-- A name can be reused once its agent is terminated; history stays.
CREATE UNIQUE INDEX agents_live_name ON agents(team_id, name) WHERE status <> 'terminated';
CREATE INDEX agents_team ON agents(team_id, status);

CREATE TABLE activity (
    id       INTEGER PRIMARY KEY,
    team_id  INTEGER NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    at       INTEGER NOT NULL,
    actor    TEXT NOT NULL,
    type     TEXT NOT NULL,
    details  TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX activity_team ON activity(team_id, id);
)sql",

    // 2: background shells; activity entries may belong to the home rather than a team (a shell
    // started outside any team).
    R"sql(
CREATE TABLE activity_v2 (
    id       INTEGER PRIMARY KEY,
    team_id  INTEGER REFERENCES teams(id) ON DELETE CASCADE,
    at       INTEGER NOT NULL,
    actor    TEXT NOT NULL,
    type     TEXT NOT NULL,
    details  TEXT NOT NULL DEFAULT '{}'
);
INSERT INTO activity_v2 (id, team_id, at, actor, type, details)
    SELECT id, team_id, at, actor, type, details FROM activity;
DROP TABLE activity;
ALTER TABLE activity_v2 RENAME TO activity;
CREATE INDEX activity_team ON activity(team_id, id);

CREATE TABLE shells (
    id                TEXT PRIMARY KEY,          -- bg-1a2b3c
    team_id           INTEGER REFERENCES teams(id) ON DELETE SET NULL,
    agent             TEXT,                      -- name@team it is attributed to
    command           TEXT NOT NULL,             -- JSON argv
    cwd               TEXT NOT NULL,
    env               TEXT NOT NULL DEFAULT '[]',-- JSON ["K=V", ...] given with --env
    status            TEXT NOT NULL CHECK (status IN
                          ('starting', 'running', 'completed', 'killed', 'timed_out', 'failed')),
    pid               INTEGER,
    pid_start         INTEGER,                   -- start time, to recognise pid reuse
    supervisor_pid    INTEGER,
    supervisor_start  INTEGER,
    timeout_ms        INTEGER,
    output_limit      INTEGER,
    output_file       TEXT NOT NULL,
    output_truncated  INTEGER NOT NULL DEFAULT 0,
    kill_requested_by TEXT,
    started_at        INTEGER NOT NULL,
    ended_at          INTEGER,
    exit_code         INTEGER,
    signal            TEXT,
    error             TEXT
);
CREATE INDEX shells_status ON shells(status, started_at);
)sql",

    // 3: what an agent's pane supervisor needs and records.
    R"sql(
ALTER TABLE agents ADD COLUMN env TEXT NOT NULL DEFAULT '[]';  -- JSON ["K=V", ...] from --env
ALTER TABLE agents ADD COLUMN supervisor_pid INTEGER;
ALTER TABLE agents ADD COLUMN supervisor_start INTEGER;
ALTER TABLE agents ADD COLUMN log_file TEXT;
ALTER TABLE agents ADD COLUMN spawn_error TEXT;
)sql",

    // 4: inboxes and the task list. A message is addressed to one member record (not a name,
    // which a later agent may reuse); the indexes keep an inbox read at a few index steps with a
    // million messages in the home.
    R"sql(
CREATE TABLE messages (
    id           INTEGER PRIMARY KEY,
    team_id      INTEGER NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    sender       TEXT NOT NULL,                 -- member name
    recipient_id INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    recipient    TEXT NOT NULL,                 -- member name, as it was
    type         TEXT NOT NULL DEFAULT 'message',
    text         TEXT NOT NULL,
    data         TEXT,                          -- JSON, or NULL
    created_at   INTEGER NOT NULL,
    read_at      INTEGER
);
CREATE INDEX messages_inbox ON messages(recipient_id, id);
CREATE INDEX messages_unread ON messages(recipient_id, id) WHERE read_at IS NULL;
CREATE INDEX messages_type ON messages(recipient_id, type, id);

CREATE TABLE tasks (
    team_id     INTEGER NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    id          INTEGER NOT NULL,               -- per team: 1, 2, ...
    subject     TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    status      TEXT NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'in_progress', 'completed', 'deleted')),
    owner       TEXT,                           -- member name
    claimed_at  INTEGER,
    warning     TEXT,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    PRIMARY KEY (team_id, id)
) WITHOUT ROWID;
CREATE INDEX tasks_owner ON tasks(team_id, owner, status);
CREATE INDEX tasks_status ON tasks(team_id, status, id);

-- task_id cannot be claimed while blocker is pending or in_progress.
CREATE TABLE task_blockers (
    team_id INTEGER NOT NULL,
    task_id INTEGER NOT NULL,
    blocker INTEGER NOT NULL,
    PRIMARY KEY (team_id, task_id, blocker),
    FOREIGN KEY (team_id, task_id) REFERENCES tasks(team_id, id) ON DELETE CASCADE,
    FOREIGN KEY (team_id, blocker) REFERENCES tasks(team_id, id) ON DELETE CASCADE
) WITHOUT ROWID;
CREATE INDEX task_blockers_blocker ON task_blockers(team_id, blocker);

-- Tasks per team and status, kept by triggers, so that list and status count a team of 100,000
-- tasks without walking them.
CREATE TABLE task_counts (
    team_id INTEGER NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    status  TEXT NOT NULL,
    n       INTEGER NOT NULL,
    PRIMARY KEY (team_id, status)
) WITHOUT ROWID;
CREATE TRIGGER task_counts_insert AFTER INSERT ON tasks BEGIN
    INSERT INTO task_counts (team_id, status, n) VALUES (NEW.team_id, NEW.status, 1)
        ON CONFLICT (team_id, status) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER task_counts_delete AFTER DELETE ON tasks BEGIN
    UPDATE task_counts SET n = n - 1 WHERE team_id = OLD.team_id AND status = OLD.status;
END;
CREATE TRIGGER task_counts_update AFTER UPDATE OF status ON tasks
WHEN OLD.status <> NEW.status BEGIN
    UPDATE task_counts SET n = n - 1 WHERE team_id = OLD.team_id AND status = OLD.status;
    INSERT INTO task_counts (team_id, status, n) VALUES (NEW.team_id, NEW.status, 1)
        ON CONFLICT (team_id, status) DO UPDATE SET n = n + 1;
END;
)sql",

    // 5: shutdown requests (SPEC 7). One row per kill-agent (graceful or force) and per agent of
    // a teardown; open while closed_at is NULL (the agent ends, or rejects, and it closes).
    R"sql(
CREATE TABLE shutdown_requests (
    id            INTEGER PRIMARY KEY,
    team_id       INTEGER NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    agent_id      INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    method        TEXT NOT NULL CHECK (method IN ('graceful', 'force')),
    phase         TEXT NOT NULL CHECK (phase IN ('requested', 'approved', 'rejected',
                                                 'confirmed', 'force_killed')),
    reason        TEXT NOT NULL DEFAULT '',
    reject_reason TEXT,
    requested_by  TEXT NOT NULL,                -- member name@team, or "team"
    requested_at  INTEGER NOT NULL,
    responded_at  INTEGER,                      -- approved or rejected
    confirmed_at  INTEGER,                      -- confirm run, or the process ended after approval
    force_at      INTEGER,                      -- --force-after: the deadline (ms since epoch)
    forced_at     INTEGER,                      -- when force began (kill-agent --force, deadline)
    grace_ms      INTEGER NOT NULL,             -- SIGTERM to SIGKILL when its tree is ended
    reassign_to   TEXT,                         -- --reassign-to: a member name
    reassigned    TEXT,                         -- JSON ["3", "7"]: the tasks handed back
    closed_at     INTEGER
);
CREATE INDEX shutdown_requests_agent ON shutdown_requests(agent_id, id);
CREATE INDEX shutdown_requests_open ON shutdown_requests(team_id, id) WHERE closed_at IS NULL;
)sql",

    // 6: sessions (SPEC 9): state that lasts between commands, the session commands running in
    // the foreground (`session exec`), and background shells started from a session.
    R"sql(
CREATE TABLE sessions (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    state       TEXT NOT NULL,                 -- JSON, proc/session_state.hpp
    team_id     INTEGER REFERENCES teams(id) ON DELETE SET NULL,
    created_by  TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    commands    INTEGER NOT NULL DEFAULT 0     -- exec and start, counted when they begin
);
CREATE TABLE session_execs (
    id               INTEGER PRIMARY KEY,
    session_id       INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    command          TEXT NOT NULL,
    actor            TEXT NOT NULL,
    supervisor_pid   INTEGER NOT NULL,        -- the `team session exec` process
    supervisor_start INTEGER NOT NULL,
    started_at       INTEGER NOT NULL
);
CREATE INDEX session_execs_session ON session_execs(session_id);
ALTER TABLE shells ADD COLUMN session TEXT;  -- the session's name
ALTER TABLE shells ADD COLUMN script TEXT;   -- the bash script it starts from (until it runs)
CREATE INDEX shells_session ON shells(session) WHERE session IS NOT NULL;
)sql",

    // 7: clocks that do not jump. The process making an agent (`team spawn`), so that a look
    // can tell at once whether a `spawning` record is still being made or its maker is gone; and
    // a --force-after deadline on CLOCK_BOOTTIME (ms), the clock every process of the machine
    // shares and no one sets, beside force_at (the wall-clock time shown as forceAt).
    R"sql(
ALTER TABLE agents ADD COLUMN spawner_pid INTEGER;
ALTER TABLE agents ADD COLUMN spawner_start INTEGER;
ALTER TABLE shutdown_requests ADD COLUMN force_at_boot INTEGER;
)sql",

    // 8: an agent that is told of a shutdown request in its pane too (a notice typed as `send
    // --notify` types one): 1 for the agents of a preset, which do not read their inbox unasked.
    R"sql(
ALTER TABLE agents ADD COLUMN notify INTEGER NOT NULL DEFAULT 0;
)sql",

    // 9: worktrees (SPEC 14). A team's repository and base, recorded at its creation; and each
    // worktree made for an agent: written `creating` before git is asked, `present` once git has
    // made it, `removed` or `discarded` when `team worktree rm` took it away. A snapshot is owed
    // from the moment its agent's end is recorded until one is taken (state/worktree_rows.hpp).
    R"sql(
CREATE TABLE team_repos (
    team_id    INTEGER PRIMARY KEY REFERENCES teams(id) ON DELETE CASCADE,
    repo       TEXT NOT NULL,             -- the repository's main checkout (its top)
    base       TEXT NOT NULL,             -- a commit id
    base_name  TEXT NOT NULL DEFAULT ''   -- the branch or ref it was named by
);
CREATE TABLE worktrees (
    id            INTEGER PRIMARY KEY,
    team_id       INTEGER NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    agent_id      INTEGER,                -- the agent record it was made for
    agent         TEXT NOT NULL,          -- that agent's name
    repo          TEXT NOT NULL,          -- the repository's main checkout
    path          TEXT NOT NULL,
    branch        TEXT NOT NULL,
    base          TEXT NOT NULL,          -- the commit the branch started from
    base_name     TEXT NOT NULL DEFAULT '',
    state         TEXT NOT NULL CHECK (state IN ('creating', 'present', 'removed', 'discarded')),
    created_at    INTEGER NOT NULL,
    snapshot_owed INTEGER NOT NULL DEFAULT 0,
    snapshot      TEXT,                   -- JSON: the last snapshot taken
    removed_at    INTEGER,
    trash_path    TEXT
);
CREATE INDEX worktrees_team ON worktrees(team_id, state);
CREATE INDEX worktrees_agent ON worktrees(agent_id);
CREATE INDEX worktrees_owed ON worktrees(team_id) WHERE snapshot_owed = 1;
)sql",
    // 10: agents hosted over the Agent Client Protocol (SPEC 15). `acp_agents` is the session
    // of an agent spawned with --acp (its host, `team __acp ID`, keeps it up to date); its
    // prompt turns queue in `acp_turns`, its permission requests wait in `acp_permissions`
    // (answered by writing `answer`, which the host hands to the agent), and its transcript is
    // one row per entry in `acp_transcript` (state/acp_rows.hpp).
    R"sql(
CREATE TABLE acp_agents (
    agent_id     INTEGER PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
    team_id      INTEGER NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    policy       TEXT NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('starting', 'ready', 'needs_auth', 'ended')),
    session_id   TEXT,
    agent_info   TEXT,                     -- JSON: initialize's agentInfo and capabilities
    auth_methods TEXT,                     -- JSON, when it asked for authentication
    end_reason   TEXT,
    stderr_tail  TEXT,
    cancels      INTEGER NOT NULL DEFAULT 0  -- cancel requests made; the host acts on new ones
);
CREATE TABLE acp_turns (
    id          INTEGER PRIMARY KEY,
    agent_id    INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    text        TEXT NOT NULL,
    source      TEXT NOT NULL,             -- who asked: a member id, or "message N"
    state       TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
    stop_reason TEXT,
    error       TEXT,
    created_at  INTEGER NOT NULL,
    ended_at    INTEGER
);
CREATE INDEX acp_turns_open ON acp_turns(agent_id, id) WHERE state IN ('queued', 'running');
CREATE TABLE acp_permissions (
    id          INTEGER PRIMARY KEY,
    team_id     INTEGER NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    agent_id    INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    number      INTEGER NOT NULL,          -- the host's number for it
    tool_call   TEXT NOT NULL,             -- JSON
    options     TEXT NOT NULL,             -- JSON [{optionId, name, kind}]
    state       TEXT NOT NULL
                CHECK (state IN ('open', 'answering', 'answered', 'cancelled', 'expired')),
    answer      TEXT,                      -- the optionId chosen
    answered_by TEXT,
    created_at  INTEGER NOT NULL,
    closed_at   INTEGER
);
CREATE INDEX acp_permissions_team ON acp_permissions(team_id, state);
CREATE INDEX acp_permissions_agent ON acp_permissions(agent_id, state);
CREATE TABLE acp_transcript (
    agent_id INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    seq      INTEGER NOT NULL,             -- the entry's place, from 0
    record   TEXT NOT NULL,                -- JSON: acp/transcript's entry record
    PRIMARY KEY (agent_id, seq)
) WITHOUT ROWID;
)sql",
};

static_assert(sizeof(kFirst) / sizeof(kFirst[0]) == kFirstMigrations,
              "kFirstMigrations must equal the number of the first migrations");

}  // namespace

const char* first_migration(int n) {
    return kFirst[n - 1];
}

}  // namespace team
