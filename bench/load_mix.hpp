// The mixed load of issue 8: many `team` processes at once on one home, for a fixed time, then
// a check of what they left in the store against what each of them reported.
//
// run_load() sets up a team in the home (`team create`, a few long-lived agents spawned with
// `team spawn NAME -- sleep 1000`, a few thousand pending tasks), then runs `workers` threads
// for `seconds`. Each thread loops: it picks an operation by weight and runs the real `team`
// binary for it as a whole process (posix_spawn, stdout and stderr captured, timed with
// CLOCK_MONOTONIC from the spawn to the reap), so at most `workers` team processes run at once.
// The operations (their names in the report):
//   send          the leader or an agent sends a unique text to a long-lived agent
//   send-leader   an agent sends a unique text to the leader
//   send-extra    the leader sends to a short-lived agent (which may be being killed: exit 4)
//   read          an agent reads its inbox: --unread --mark-read (some with --limit)
//   read-wait     the same with --wait 200ms (exit 124 when nothing came)
//   read-agent    the leader reads an agent's inbox: --agent NAME --unread --mark-read
//   read-leader   the leader reads its own inbox: --unread --mark-read
//   claim         an agent (or the leader) claims the lowest available task
//   claim-id      an agent claims a given task near the front (contended: exit 4 if taken)
//   task-add      the leader adds a task
//   spawn         the leader spawns a short-lived agent (`sleep 1000`)
//   kill          the leader force-kills one of those (`kill-agent --force`)
//   status        `team status`
//   agents        `team agents`
// After the time is up, every long-lived inbox and the leader's are drained once more (op
// `drain`: reported on a row of its own, left out of `all`), and the store is read (read-only) to
// check:
//   - every send that exited 0 with its JSON is stored exactly once (by its unique text), as
//     reported; none that failed is stored; no message of type `message` is stored that no send
//     reported (`lost`, `duplicated`, `unexpected`);
//   - every message a --mark-read reader got was returned to exactly one reader and is marked
//     read; every message of a drained inbox was returned to some reader (`read_twice`,
//     `never_read`). Several readers of one inbox run at once on purpose: the guide promises
//     that each message reaches exactly one of them;
//   - no task id is in two successful claims, each claimed task is in_progress and owned by its
//     claimer in the store, and every in_progress task was reported by a claim
//     (`double_claims`, `wrong_owner`, `phantom_claims`). Only members that live through the
//     whole run claim, so no claimed task is ever handed back and claimed again legitimately;
//   - every force-killed agent is terminated (force_killed) and its process is gone
//     (`kill_survivors`); every spawned one not killed is still active;
//   - no stdout or stderr says "database is locked" or "busy" (`locked`), no process died by a
//     signal (`signaled`), every exit code is one SPEC 1.4 allows for that operation
//     (`bad_exits`: claim 0 or 3 when nothing is available, claim-id also 4, send-extra 0 or 4,
//     read-wait 0 or 124, all others 0), and every output is the JSON it should be, errors
//     SPEC 1.4's `{"success": false, "error", "code"}` with the code of the exit
//     (`bad_outputs`).
// The home's tmux server (and with it every agent) is left running: the caller ends it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace team::load {

struct LoadOptions {
    std::string team_binary;             // path of the `team` binary under test
    std::string home;                    // TEAM_HOME; created (0700) when missing
    int workers = 64;                    // threads, each running one team process at a time
    double seconds = 30;                 // how long the mix runs
    std::vector<std::string> extra_env;  // "K=V" given to every process (and every agent)
    std::string store;  // the store's URL, given as TEAM_STORE to every process ("": SQLite)
    unsigned seed = 1;  // of the operation mix and the message texts
    std::string team = "load";  // the team created in the home
    int agents = 8;             // long-lived agents (a0, a1, ...)
    int tasks = 5000;           // pending tasks at the start
    int max_extras = 6;         // short-lived agents alive (or starting) at once
};

// Latencies and exit codes of one operation.
struct OpStats {
    int count = 0;
    std::map<int, int> exits;  // exit code (128+n: killed by signal n) -> how many
    double p50_ms = 0, p99_ms = 0, max_ms = 0;
};

struct LoadReport {
    double seconds = 0;  // how long the mix ran, until its last process ended
    int workers = 0;
    std::map<std::string, OpStats> ops;  // per operation (names above)
    OpStats all;                         // every operation of the mix together
    std::map<int, int> errors_by_exit;   // non-zero exit codes over the mix
    // Messages.
    int sent = 0, stored = 0, lost = 0, duplicated = 0, unexpected = 0, stored_after_failure = 0;
    int read = 0, read_twice = 0, never_read = 0, read_unmarked = 0;
    // Tasks.
    int claims = 0, double_claims = 0, wrong_owner = 0, phantom_claims = 0;
    // Agents.
    int spawned = 0, killed = 0, kill_survivors = 0, extras_wrong_state = 0;
    // Every process.
    int locked = 0, signaled = 0, bad_exits = 0;
    int bad_outputs = 0;  // exit 0 without the JSON it should print, or an error without SPEC 1.4's
    std::vector<std::string> problems;  // what went wrong, the first few of each kind in words

    // No lost or duplicated message, no double claim, no lock error, no bad exit...
    bool ok() const;
    nlohmann::json to_json() const;
    // A table of the operations: count, p50, p99, max (ms), exit codes; then the checks.
    std::string table() const;
};

// Runs the mix; throws std::runtime_error when the setup fails (the mix itself never throws
// for what a team process does: that is in the report).
LoadReport run_load(const LoadOptions& options);

}  // namespace team::load
