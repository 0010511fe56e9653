// The figures of the MCP server (SPEC 12), measured as a client sees them: `team mcp` started
// once per figure (untimed) and initialized, then each sample is one tools/call written to its
// stdin, timed until its answer's line is read from its stdout. Beside them, the same verbs as
// whole processes, so the table shows what a held session saves.
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "bench/harness.hpp"
#include "bench/mcp_client.hpp"

namespace bench {

namespace {

Client& client(Env& env) {
    return *static_cast<Client*>(env.held.get());
}

// A team `bench` with the leader, an agent `w1` (`sleep 1000` in a pane) and a few tasks; then
// `clients` servers started as the leader.
std::function<void(Env&)> mcp_home(int clients = 1) {
    return [clients](Env& env) {
        run_checked(env, {env.team, "create", "bench"});
        spawn_agent(env, "w1");
        for (int i = 0; i < 5; ++i) {
            run_checked(env, {env.team, "--team", "bench", "task", "add", "a task"});
        }
        auto list = std::make_shared<std::vector<std::unique_ptr<Client>>>();
        for (int i = 0; i < clients; ++i) {
            list->push_back(std::make_unique<Client>(
                env, std::vector<std::string>{env.team, "mcp", "--team", "bench"}));
        }
        if (clients == 1) {
            env.held = std::shared_ptr<Client>(std::move(list->front()));
        } else {
            env.held = list;
        }
    };
}

void end_clients(Env& env) {
    env.held.reset();
    kill_tmux_server(env);
}

std::function<double(Env&)> sample_tool(std::string name, nlohmann::json arguments) {
    return [name, arguments](Env& env) {
        double start = now_ms();
        client(env).tool(name, arguments);
        return now_ms() - start;
    };
}

// A waiting inbox_read of the leader's inbox, then a `team send` from another process: timed
// from the start of the send to the answer's line. The read is given 30 ms (untimed) to be
// asleep in its wait first, as the command line's figure does.
double sample_wake(Env& env) {
    Client& c = client(env);
    int id = c.request("tools/call",
                       {{"name", "inbox_read"},
                        {"arguments", {{"unread", true}, {"markRead", true}, {"waitMs", 10'000}}}});
    usleep(30'000);
    double start = now_ms();
    pid_t sender = spawn({env.team, "--team", "bench", "--as", "w1", "send", "leader", "wake up"},
                         env, dev_null(), dev_null(), dev_null());
    auto result = c.answer(id);
    double ms = now_ms() - start;
    if (wait_for(sender) != 0) throw CommandFailed("wake-up sample: send failed");
    if (result["structuredContent"]["messages"].empty()) {
        throw CommandFailed("wake-up sample: the read returned no message");
    }
    return ms;
}

// 16 clients, each with its own server, call team_status at once; the sample is the median of
// their 16 latencies.
double sample_sixteen(Env& env) {
    auto& list = *static_cast<std::vector<std::unique_ptr<Client>>*>(env.held.get());
    std::vector<double> ms(list.size());
    std::vector<std::thread> threads;
    for (size_t i = 0; i < list.size(); ++i) {
        threads.emplace_back([&, i] {
            double start = now_ms();
            list[i]->tool("team_status", nlohmann::json::object());
            ms[i] = now_ms() - start;
        });
    }
    for (auto& t : threads) t.join();
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

}  // namespace

std::vector<Figure> mcp_figures(const std::string& team) {
    std::vector<Figure> list;
    // The same read as a whole process, for the ratio the issue asks (at least 4x).
    list.push_back({"team status --json (process, beside mcp)", 0, mcp_home(0),
                    sample_argv({team, "--team", "bench", "status", "--json"}), end_clients});
    // A read tool through a held session: one JSON-RPC round trip. Goal: median <= 0.5 ms.
    list.push_back({"mcp: team_status call", 0.5, mcp_home(),
                    sample_tool("team_status", nlohmann::json::object()), end_clients});
    list.push_back({"mcp: inbox_read call", 0.5, mcp_home(),
                    sample_tool("inbox_read", {{"agent", "w1"}}), end_clients});
    // A write through a held session (an inbox message: one transaction and its fsync).
    list.push_back({"mcp: message_send call", 0, mcp_home(),
                    sample_tool("message_send", {{"to", "w1"}, {"text", "hello"}}), end_clients});
    // A message sent by another process wakes a waiting inbox_read. Goal: median <= 5 ms.
    list.push_back({"mcp: send -> waiting inbox_read returns", 5.0, mcp_home(), sample_wake,
                    end_clients, 100});
    // 16 clients at once, each its own `team mcp`: the median latency of one round.
    list.push_back({"mcp: team_status, 16 clients at once", 0, mcp_home(16), sample_sixteen,
                    end_clients, 200});
    return list;
}

}  // namespace bench
