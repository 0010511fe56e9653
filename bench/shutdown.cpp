// Figures of stopping agents (SPEC 7 and 3): the graceful round trip with the example agent
// (request, approve, confirm, the tree ended, the pane closed), kill-agent --force of an agent
// that obeys SIGTERM and of one that ignores it, and the teardown of 16 cooperative agents.
//
// Each sample spawns its agents untimed and waits until they are ready; only the stopping
// command is timed, from its start to its exit.

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/harness.hpp"

namespace bench {

namespace {

const std::string kExampleAgent = std::string(TEAM_SOURCE_DIR) + "/examples/agent";

// Spawns the example agent NAME into `team` (untimed) and waits until it has said it is ready
// and is waiting on its inbox.
void spawn_example(const Env& env, const std::string& team, const std::string& name) {
    auto doc = nlohmann::json::parse(
        run_checked(env, {env.team, "--json", "--team", team, "spawn", name, "--env",
                          "TEAM_BIN=" + env.team, "--env", "AGENT_POLL=30", "--", kExampleAgent}));
    std::string agent_id = doc.at("agentId").get<std::string>();
    // Its pane log says "ready" once it has looked up its leader; it then tries one claim and
    // waits on its inbox.
    std::string log;
    for (int i = 0; i < 500; ++i) {
        std::string dir = env.home + "/logs/" + team;
        for (const auto& entry : std::filesystem::directory_iterator(dir)) {
            if (entry.path().filename().string().rfind(name + "-", 0) != 0) continue;
            std::ifstream in(entry.path());
            std::stringstream s;
            s << in.rdbuf();
            log = s.str();
        }
        if (log.find("ready") != std::string::npos) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (log.find("ready") == std::string::npos) {
        throw CommandFailed("example agent " + agent_id + " did not get ready: " + log);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

std::vector<std::string> kill_args(const Env& env, const std::string& name,
                                   std::vector<std::string> more) {
    std::vector<std::string> argv{env.team, "--team", "bench", "kill-agent", name};
    argv.insert(argv.end(), more.begin(), more.end());
    return argv;
}

void create_bench(Env& env) {
    run_checked(env, {env.team, "create", "bench"});
}

void end_all(Env& env) {
    std::vector<std::string> argv{"tmux", "-S", env.home + "/tmux.sock", "kill-server"};
    run_capture(env, argv);
    run_capture(env, {env.team, "--team", "bench", "agents"});
}

}  // namespace

std::vector<Figure> shutdown_figures(const std::string& team) {
    (void)team;
    std::vector<Figure> list;
    // The whole graceful handshake: `kill-agent --wait` until the example agent (waiting on its
    // inbox) has approved, confirmed, and its supervisor has ended it and closed its pane.
    // Goal: median <= 100 ms.
    list.push_back({"kill-agent graceful round trip", 100.0, create_bench,
                    [](Env& env) {
                        std::string name = "g-" + std::to_string(env.counter++);
                        spawn_example(env, "bench", name);
                        return time_run(env, kill_args(env, name, {"--wait", "--timeout", "10s"}));
                    },
                    end_all, 30});
    // kill-agent --force of `sleep 1000` (obeys SIGTERM): the tree ended, the end recorded, the
    // pane closed. Goal: median <= 50 ms.
    list.push_back(
        {"kill-agent --force (obeys TERM)", 50.0, create_bench,
         [](Env& env) {
             std::string name = "f-" + std::to_string(env.counter++);
             run_checked(env, {env.team, "--team", "bench", "spawn", name, "--", "sleep", "1000"});
             return time_run(env, kill_args(env, name, {"--force"}));
         },
         end_all, 60});
    // The same for an agent that ignores SIGTERM, with --grace 1s: SIGKILL after the grace.
    // Goal: median <= 1050 ms (the grace + 50 ms).
    list.push_back({"kill-agent --force --grace 1s (ignores TERM)", 1050.0, create_bench,
                    [](Env& env) {
                        std::string name = "i-" + std::to_string(env.counter++);
                        run_checked(env, {env.team, "--team", "bench", "spawn", name, "--", "sh",
                                          "-c", "trap '' TERM; sleep 1000"});
                        return time_run(env, kill_args(env, name, {"--force", "--grace", "1s"}));
                    },
                    end_all, 5});
    // `team teardown` of a team of 16 example agents, all idle and cooperative: 16 requests,
    // 16 approvals and confirmations, 16 trees ended and panes closed, the session and the
    // server gone, the team dissolved. Goal: median <= 1000 ms.
    list.push_back({"teardown, 16 cooperative agents", 1000.0, nullptr,
                    [](Env& env) {
                        std::string t = "td" + std::to_string(env.counter++);
                        run_checked(env, {env.team, "create", t});
                        for (int i = 0; i < 16; ++i) {
                            spawn_example(env, t, "a" + std::to_string(i));
                        }
                        return time_run(env, {env.team, "teardown", t, "--grace", "10s"});
                    },
                    end_all, 5});
    return list;
}

}  // namespace bench
