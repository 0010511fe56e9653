// Figures of inboxes and tasks (SPEC 5 and 6): reading an inbox in a home of a million
// messages, the send round trip, how soon a waiting reader has a message, claims under
// contention and the available tasks among 100,000.
//
// Large homes are filled with SQL straight into team.db (after `team create` has made it), then
// checkpointed, so that setup takes seconds rather than a million `team send` runs; the rows
// are the ones `team send` and `team task add` write.

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "bench/harness.hpp"

namespace bench {

namespace {

// A team "bench" whose leader's inbox holds `count` messages, all read but 10 spread over it.
std::function<void(Env&)> inbox_of(int count) {
    return [count](Env& env) {
        run_checked(env, {env.team, "create", "bench"});
        int every = count / 10;
        run_sql(env, R"sql(
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < )sql" +
                         std::to_string(count) + R"sql()
            INSERT INTO messages (team_id, sender, recipient_id, recipient, type, text, data,
                                  created_at, read_at)
            SELECT a.team_id, 'leader', a.id, 'leader', 'message',
                   'message number ' || i || ': please look at the failing test in src/parser',
                   NULL, 1790000000000 + i,
                   CASE WHEN i % )sql" +
                         std::to_string(every) + R"sql( = 0 THEN NULL ELSE 1790000000000 + i END
            FROM n, agents a WHERE a.is_leader
        )sql");
    };
}

// A team "bench" with `count` tasks: `available` pending ones at the end, the rest half
// completed, half in progress (the leader's).
std::function<void(Env&)> tasks_of(int count, int available) {
    return [count, available](Env& env) {
        run_checked(env, {env.team, "create", "bench"});
        int done = count - available;
        run_sql(env, R"sql(
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < )sql" +
                         std::to_string(count) + R"sql()
            INSERT INTO tasks (team_id, id, subject, description, status, owner, claimed_at,
                               created_at, updated_at)
            SELECT t.id, i, 'task ' || i, 'fix what fails in module ' || i,
                   CASE WHEN i > )sql" +
                         std::to_string(done) + R"sql( THEN 'pending'
                        WHEN i % 2 = 0 THEN 'completed' ELSE 'in_progress' END,
                   CASE WHEN i > )sql" +
                         std::to_string(done) + R"sql( THEN NULL ELSE 'leader' END,
                   NULL, 1790000000000, 1790000000000
            FROM n, teams t WHERE t.name = 'bench'
        )sql");
    };
}

// One sample of the wake-up: a reader waits on the leader's inbox, then a send from another
// process; timed from the start of the send to the reader's exit with the message. The reader
// is given 30 ms (untimed) to be asleep in its wait first. `mark_read`: the reader also marks
// what it read, a write transaction with an fsync of its own, before it prints.
double sample_wake(Env& env, bool mark_read) {
    std::vector<std::string> argv{env.team,   "--team", "bench", "inbox",
                                  "--unread", "--wait", "10s",   "--json"};
    if (mark_read) argv.push_back("--mark-read");
    pid_t reader = spawn(argv, env, dev_null(), dev_null(), dev_null());
    usleep(30'000);
    double start = now_ms();
    pid_t sender = spawn({env.team, "--team", "bench", "send", "leader", "wake up"}, env,
                         dev_null(), dev_null(), dev_null());
    int status = wait_for(reader);
    double ms = now_ms() - start;
    int sent = wait_for(sender);
    if (status != 0 || sent != 0) {
        throw CommandFailed("wake-up sample: reader exit status " + std::to_string(status) +
                            ", sender exit status " + std::to_string(sent));
    }
    if (!mark_read) {  // untimed: the next reader must find nothing unread
        run_checked(env, {env.team, "--team", "bench", "inbox", "--unread", "--mark-read"});
    }
    return ms;
}

// One sample of contention: 16 `team task claim` processes started together, each timed from
// its own start to its own exit; the sample is their median.
double sample_claims(Env& env) {
    constexpr int kClaimers = 16;
    std::map<pid_t, double> started;
    for (int i = 0; i < kClaimers; ++i) {
        double start = now_ms();
        pid_t pid = spawn({env.team, "--team", "bench", "task", "claim", "--json"}, env, dev_null(),
                          dev_null(), dev_null());
        started[pid] = start;
    }
    std::vector<double> times;
    std::string failure;
    while (!started.empty()) {
        int status = 0;
        pid_t pid = waitpid(-1, &status, 0);
        if (pid < 0) break;
        auto it = started.find(pid);
        if (it == started.end()) continue;
        times.push_back(now_ms() - it->second);
        if (status != 0) failure = "a claim exited with status " + std::to_string(status);
        started.erase(it);
    }
    if (!failure.empty()) throw CommandFailed(failure);
    std::sort(times.begin(), times.end());
    return (times[kClaimers / 2 - 1] + times[kClaimers / 2]) / 2;
}

}  // namespace

std::vector<Figure> inbox_figures(const std::string& team) {
    std::vector<Figure> list;
    // `team inbox --unread --json` when the caller's own inbox holds 1,000,000 messages (the
    // whole home), 10 of them unread. Goal: median <= 3 ms.
    list.push_back({"inbox --unread --json, 1M messages", 3.0, inbox_of(1'000'000),
                    sample_argv({team, "--team", "bench", "inbox", "--unread", "--json"}),
                    nullptr});
    // `team send` to a live agent (in its tmux pane): checks every agent of the team, then one
    // write transaction with fsync. Goal: median <= 3 ms.
    list.push_back({"send", 3.0,
                    [](Env& env) {
                        run_checked(env, {env.team, "create", "bench"});
                        spawn_agent(env, "worker");
                    },
                    sample_argv({team, "--team", "bench", "send", "worker", "please rebase"}),
                    kill_tmux_server});
    // A reader blocked in `team inbox --wait` has a message sent by another process: from the
    // start of the `team send` process to the reader's exit with the message printed (so it
    // includes the whole send, ~2.5 ms of it). Goal: median <= 10 ms.
    auto bench_team = [](Env& env) { run_checked(env, {env.team, "create", "bench"}); };
    list.push_back({"send -> waiting reader has it", 10.0, bench_team,
                    [](Env& env) { return sample_wake(env, false); }, nullptr, 100});
    // The same with `--mark-read`: the reader marks the message read, durably, before it prints
    // it (a second commit with fsync after the sender's). Goal: median <= 10 ms, as without.
    list.push_back({"send -> waiting reader has it, --mark-read", 10.0, bench_team,
                    [](Env& env) { return sample_wake(env, true); }, nullptr, 100});
    // 16 `team task claim` processes at once on one team, each taking the lowest available
    // task: the median round trip of the 16. Goal: median <= 30 ms (each claim is a write
    // transaction with fsync, and 16 of them queue on one database on 2 cores).
    list.push_back({"task claim, 16 concurrent claimers", 30.0, tasks_of(5000, 5000), sample_claims,
                    nullptr, 100});
    // `team status bench --json` on a team of 100,000 tasks: counts by status (kept by triggers,
    // never counted). Goal: median <= 3 ms.
    list.push_back({"status --json, 100k tasks", 3.0, tasks_of(100'000, 10),
                    sample_argv({team, "status", "bench", "--json"}), nullptr});
    // `team task list --available --json` on a team of 100,000 tasks, 10 of them available.
    // Goal: median <= 3 ms.
    list.push_back({"task list --available, 100k tasks", 3.0, tasks_of(100'000, 10),
                    sample_argv({team, "--team", "bench", "task", "list", "--available", "--json"}),
                    nullptr});
    return list;
}

}  // namespace bench
