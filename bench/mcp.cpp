// The figures of the MCP server (SPEC 12), measured as a client sees them: `team mcp` started
// once per figure (untimed) and initialized, then each sample is one tools/call written to its
// stdin, timed until its answer's line is read from its stdout. Beside them, the same verbs as
// whole processes, so the table shows what a held session saves.
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "bench/harness.hpp"

namespace bench {

namespace {

// One `team mcp` and the two pipes to it.
class Client {
  public:
    Client(const Env& env, std::vector<std::string> argv) {
        int in[2], out[2];
        if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) {
            throw CommandFailed("pipe failed");
        }
        pid_ = spawn(argv, env, in[0], out[1], dev_null());
        ::close(in[0]);
        ::close(out[1]);
        to_ = in[1];
        from_ = out[0];
        call("initialize", {{"protocolVersion", "2025-06-18"},
                            {"capabilities", nlohmann::json::object()},
                            {"clientInfo", {{"name", "team_bench"}, {"version", "1"}}}});
        send({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
    }
    ~Client() {
        ::close(to_);  // the server ends at its input's end
        ::close(from_);
        wait_for(pid_);
    }
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    // Writes a request; returns its id.
    int request(const std::string& method, const nlohmann::json& params) {
        int id = ++next_id_;
        send({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}});
        return id;
    }

    // Reads lines until the answer to `id` (notifications are skipped); throws on an error.
    nlohmann::json answer(int id) {
        for (;;) {
            auto msg = nlohmann::json::parse(line());
            if (!msg.contains("id") || msg["id"] != id) continue;
            if (msg.contains("error")) throw CommandFailed("mcp error: " + msg["error"].dump());
            const auto& result = msg["result"];
            if (result.value("isError", false)) {
                throw CommandFailed("mcp tool error: " + result["structuredContent"].dump());
            }
            return result;
        }
    }

    nlohmann::json call(const std::string& method, const nlohmann::json& params) {
        return answer(request(method, params));
    }

    nlohmann::json tool(const std::string& name, const nlohmann::json& arguments) {
        return call("tools/call", {{"name", name}, {"arguments", arguments}});
    }

  private:
    void send(const nlohmann::json& msg) {
        std::string text = msg.dump() + "\n";
        for (size_t done = 0; done < text.size();) {
            ssize_t n = ::write(to_, text.data() + done, text.size() - done);
            if (n <= 0) throw CommandFailed("team mcp closed its input");
            done += static_cast<size_t>(n);
        }
    }

    std::string line() {
        for (;;) {
            auto nl = buffer_.find('\n');
            if (nl != std::string::npos) {
                std::string out = buffer_.substr(0, nl);
                buffer_.erase(0, nl + 1);
                return out;
            }
            pollfd p{from_, POLLIN, 0};
            if (::poll(&p, 1, 30'000) != 1) throw CommandFailed("team mcp did not answer in 30 s");
            char chunk[65536];
            ssize_t n = ::read(from_, chunk, sizeof chunk);
            if (n <= 0) throw CommandFailed("team mcp ended");
            buffer_.append(chunk, static_cast<size_t>(n));
        }
    }

    pid_t pid_ = -1;
    int to_ = -1, from_ = -1;
    int next_id_ = 0;
    std::string buffer_;
};

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
