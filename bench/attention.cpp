// Figures of what agents are doing (SPEC 17): a hook's own cost (`team __report`, beside
// /bin/true, a hook that does nothing), and how soon a hook's report shows in `team agents` and
// wakes a `team wait` that was waiting for it.
//
// The agent is a stand-in whose preset wires Claude Code's hooks (its source is "hooks"): a
// script that ignores the preset's flags and sleeps. The reports are what Claude Code's hooks
// send, as their argument rather than on stdin (the same parse and write).

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/harness.hpp"

namespace bench {

namespace {

const std::string kPermission =
    R"({"hook_event_name":"PermissionRequest","session_id":"0b6e5c1c-5a4e-4f4e-9d7a-3f0c1d2e3f40",)"
    R"("transcript_path":"/root/.claude/projects/-work/0b6e5c1c.jsonl","cwd":"/work",)"
    R"("tool_name":"Bash","tool_input":{"command":"npm test -- --runInBand","description":)"
    R"("Run the tests"},"permission_suggestions":[{"type":"addRules","rules":[{"toolName":)"
    R"("Bash","ruleContent":"npm test:*"}],"behavior":"allow","destination":"localSettings"}]})";
const std::string kStop =
    R"({"hook_event_name":"Stop","session_id":"0b6e5c1c","stop_hook_active":false})";

// A team "bench" with agent "w" whose source is its hooks.
void hooked_agent(Env& env) {
    run_checked(env, {env.team, "create", "bench"});
    std::string script = env.dir + "/fake-claude";
    std::ofstream(script) << "#!/bin/sh\nexec sleep 1000\n";
    ::chmod(script.c_str(), 0755);
    run_checked(env,
                {env.team, "--team", "bench", "spawn", "w", "--preset", "claude", "--", script});
}

std::vector<std::string> report(const Env& env, const std::string& event,
                                const std::string& payload) {
    return {env.team, "__report", "w@bench", "claude", event, payload};
}

// One report, alternating a wait and a turn's end, so that each is a change of state (a write,
// an activity entry, and for each wait the leader's needs_input message).
double sample_report(Env& env) {
    bool wait = env.counter++ % 2 == 0;
    return time_run(
        env, wait ? report(env, "PermissionRequest", kPermission) : report(env, "Stop", kStop));
}

// From the start of the report to a `team agents --json` that shows the state it reported.
double sample_report_shown(Env& env) {
    bool wait = env.counter++ % 2 == 0;
    std::string want = wait ? "waiting" : "idle";
    double start = now_ms();
    run_checked(env,
                wait ? report(env, "PermissionRequest", kPermission) : report(env, "Stop", kStop));
    auto doc =
        nlohmann::json::parse(run_checked(env, {env.team, "--team", "bench", "--json", "agents"}));
    double ms = now_ms() - start;
    for (const auto& a : doc) {
        if (a["name"] == "w" && a["activity"]["state"] != want) {
            throw CommandFailed("agents showed " + a["activity"]["state"].dump() + ", not " + want);
        }
    }
    return ms;
}

// A `team wait w --until waiting` asleep in its wait (30 ms, untimed), then the report from
// another process: from the start of the report to the waiter's exit.
double sample_report_wakes(Env& env) {
    run_checked(env, report(env, "Stop", kStop));  // untimed: idle first
    pid_t waiter =
        spawn({env.team, "--team", "bench", "wait", "w", "--until", "waiting", "--timeout", "10s"},
              env, dev_null(), dev_null(), dev_null());
    usleep(30'000);
    double start = now_ms();
    pid_t reporter = spawn(report(env, "PermissionRequest", kPermission), env, dev_null(),
                           dev_null(), dev_null());
    int status = wait_for(waiter);
    double ms = now_ms() - start;
    int reported = wait_for(reporter);
    if (status != 0 || reported != 0) {
        throw CommandFailed("wait sample: waiter exit status " + std::to_string(status) +
                            ", reporter exit status " + std::to_string(reported));
    }
    return ms;
}

}  // namespace

std::vector<Figure> attention_figures(const std::string& team) {
    (void)team;
    std::vector<Figure> list;
    // A hook's own cost: one `team __report` process, a change of state each (its ratio to
    // /bin/true is its cost beside a hook that does nothing). Goal: median <= 50 ms (issue 39:
    // a hook adds less than 50 ms to the agent's step).
    list.push_back({"hook: team __report, a change of state each", 50.0, hooked_agent,
                    sample_report, kill_tmux_server, 200, "attention"});
    // (One home for the three, built by the first's setup and ended by the last's teardown;
    // each declares both, so that --only one of them runs alone.)
    // A hook's report -> `team agents --json` shows it: the report and one look, back to back.
    // Goal: median <= 10 ms.
    list.push_back({"hook: report -> team agents shows it", 10.0, hooked_agent, sample_report_shown,
                    kill_tmux_server, 200, "attention"});
    // A hook's report -> a waiting `team wait --until waiting` returns: from the start of the
    // reporting process to the waiter's exit (the report's whole process included). Goal:
    // median <= 10 ms.
    list.push_back({"hook: report -> waiting team wait returns", 10.0, hooked_agent,
                    sample_report_wakes, kill_tmux_server, 100, "attention"});
    return list;
}

}  // namespace bench
