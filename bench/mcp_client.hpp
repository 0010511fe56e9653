// A client of `team mcp` for the figures (mcp.cpp, store.cpp): the server started with its two
// pipes and initialized; tools called one JSON-RPC line at a time.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/harness.hpp"

namespace bench {

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

}  // namespace bench
