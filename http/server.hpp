// `team serve` (SPEC 13): one io_context that serves the HTTP API (http/api.hpp), the event
// streams (http/events.hpp) and the dashboard's files (http/assets.hpp), with their timers,
// never blocking: operations run on a pool of threads (http/pool.hpp: a few workers, and a
// bounded set for those that wait), each with an ops::Core of its own, and post their answer
// back. Beast and Asio are confined to
// server.cpp, so their compile cost is paid once.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "ops/core.hpp"
#include "ops/serve_record.hpp"

namespace team::http {

struct ServerOptions {
    ops::Identity identity;      // the home; the caller is the leader, via "web"
    std::filesystem::path home;  // resolved
    std::string token;           // what every request must show
    std::string listen_host = std::string(ops::kServeHost);
    unsigned short port = ops::kServePort;  // 0: any free port (tests)
    bool tcp = true;                        // false: --unix only
    std::optional<std::filesystem::path> unix_path;
    bool any_host = false;  // listening on every address (--allow-remote 0.0.0.0)
    std::optional<std::filesystem::path> web_root;  // serve web/ from disk, not the binary
    std::chrono::milliseconds header_timeout{10'000};
    std::chrono::milliseconds body_timeout{30'000};
    std::chrono::milliseconds keep_alive{15'000};
    int workers = 4;   // threads for the calls that answer at once
    int waiters = 64;  // calls that may wait, at most at once (http/pool.hpp); then 503
    // Called once the server listens, with the port it got (for port 0) and before any request
    // is served.
    std::function<void(unsigned short port)> ready;
};

// Serves until SIGTERM or SIGINT; then it stops accepting, closes every connection and stream,
// joins its pool and returns, within a second. Throws a team::Error (failed) when it cannot
// listen, naming the address (a port in use).
void serve(ServerOptions options);

}  // namespace team::http
