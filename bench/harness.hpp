// The harness of team_bench: what a figure is, and the helpers figures are written with
// (bench.cpp defines them). Figures of one area live in a file of their own (inbox.cpp).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace bench {

// A command exited non-zero (or could not be started); the message says which and how.
struct CommandFailed : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// What a figure's setup, samples and teardown share.
struct Env {
    std::string team;                 // path of the team binary under test
    std::string dir;                  // the figure's temporary directory
    std::string home;                 // dir + "/home": TEAM_HOME of every spawned process
    std::vector<std::string> vars;    // environment of every spawned process
    int counter = 0;                  // free for samples that need unique names
    std::shared_ptr<void> held = {};  // what a figure keeps between samples (an MCP client)
};

struct Figure {
    std::string name;
    double goal_ms;                      // the median must not exceed this; 0: a reference, no goal
    std::function<void(Env&)> setup;     // untimed; may be empty
    std::function<double(Env&)> sample;  // one timing, in milliseconds
    std::function<void(Env&)> teardown;  // may be empty; runs even when the figure failed
    int max_runs = 0;                    // a cap on runs (and warm-up) for slow figures; 0: no cap
    // Figures with the same non-empty shared_home, listed one after the other, are timed in one
    // home: the first one's setup builds it, the last one's teardown ends it (for homes that
    // take long to build, such as the scale home).
    std::string shared_home = {};
    // Empty: a time in ms. Otherwise the unit of a figure that is not a time (MiB of memory, a
    // ratio): its samples and its goal, if it has one, are in that unit, and it has no ratio to
    // /bin/true.
    std::string unit = {};
};

struct Captured {
    int status = 0;
    std::string out, err;
};

double now_ms();
// Starts argv (PATH searched when argv[0] has no slash) with fds 0, 1, 2 set to the given fds.
pid_t spawn(const std::vector<std::string>& argv, const Env& env, int in, int out, int err);
int wait_for(pid_t pid);
int dev_null();
// Runs argv to its end, stdout and stderr captured; never throws on a non-zero exit.
Captured run_capture(const Env& env, const std::vector<std::string>& argv);
// Runs argv (untimed, output captured) and throws CommandFailed unless it exits 0.
std::string run_checked(const Env& env, const std::vector<std::string>& argv);
// One timed run of argv, output to /dev/null; throws CommandFailed on a non-zero exit.
double time_run(const Env& env, const std::vector<std::string>& argv);
// Runs SQL on the figure's team.db as one transaction, then empties the WAL (so that timed
// processes do not pay for a WAL that `team` itself would never have let grow). Large homes are
// filled this way: seconds, not a million `team send` runs.
void run_sql(const Env& env, const std::string& statements);
// The default sample: one run of this argv.
std::function<double(Env&)> sample_argv(std::vector<std::string> argv);
// Spawns agent NAME running `sleep 1000` into team "bench" (untimed); returns its pane id.
std::string spawn_agent(const Env& env, const std::string& name);
// Teardown: the home's tmux server goes, and with it every pane and agent.
void kill_tmux_server(Env& env);

// The figures of inboxes and tasks (inbox.cpp).
std::vector<Figure> inbox_figures(const std::string& team);
// The figures of stopping agents: kill-agent and teardown (shutdown.cpp).
std::vector<Figure> shutdown_figures(const std::string& team);
// The figures of sessions, with bash alone as their reference (session.cpp).
std::vector<Figure> session_figures(const std::string& team);
// The shared store (store.cpp): with a PostgreSQL `url`, its figures beside SQLite's; none
// without one.
std::vector<Figure> store_figures(const std::string& team, const std::string& url);
// The MCP server through held sessions: read tool calls, a wake-up, 16 clients (mcp.cpp).
std::vector<Figure> mcp_figures(const std::string& team);
// Every listing on one home of 10 teams, 200 agents, 1M messages, 100k tasks (scale.cpp).
std::vector<Figure> scale_figures(const std::string& team);
// git/ on a 10k-file repository: worktree add, a snapshot, a merge check, a status (git.cpp).
std::vector<Figure> git_figures(const std::string& team);
// The repository of the git figures: 10,000 files of some 200 bytes in 100 directories
// (repo_10k_file(0..9999)), one commit on main, made in `dir` (git.cpp).
void make_repo_10k(const Env& env, const std::filesystem::path& dir);
std::string repo_10k_file(int i);
// team land on that repository: a hand-run merge and check per branch beside it (land.cpp).
std::vector<Figure> land_figures(const std::string& team);
// team serve: a read with 50 event streams open, a commit's event at a stream (serve.cpp).
std::vector<Figure> serve_figures(const std::string& team);
// ACP agents: a prompt, a permission request and its answer, a terminal, a cancel crossing
// between team processes and a hosted agent; the host's memory (acp.cpp).
std::vector<Figure> acp_figures(const std::string& team);
// The figures of agents' activity: a hook's cost, its report shown and waking a wait
// (attention.cpp).
std::vector<Figure> attention_figures(const std::string& team);
// usage.cpp: what agents spend (SPEC 18).
std::vector<Figure> usage_figures(const std::string& team);

}  // namespace bench
