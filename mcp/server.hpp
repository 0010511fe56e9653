// The MCP server of `team mcp` (SPEC 12): reads JSON-RPC lines, answers initialize, ping and
// tools/list at once, and runs each tools/call on a worker thread, so a call that waits
// (inbox_read with waitMs, kill_agent with wait) never holds up the others: a call takes an idle
// worker or starts a new one. Each worker keeps a core per team its calls named (SQLite
// connections and tmux clients are per thread), so a read call after the first costs one query,
// not a store's open. Replies are written whole, one line each, under one lock. Every wait of a
// call ends when the client cancels it (notifications/cancelled: a cancel eventfd per call, that
// the store's change waits poll beside their own, base/cancel.hpp); when stdin closes, only the
// waits the client asked for end (a waitMs, a waited prompt: the server's wind-down eventfd),
// answered as a wait that ran out early, while the calls doing work (a kill_shell's grace, a
// spawn) finish and are answered; then the server exits. While a call with a progressToken runs,
// notifications/progress go out at least every `heartbeat`.
//
// Threads rather than an Asio loop: the core's waits are blocking poll() loops (the store's
// changes, pidfds), shared with the command line; a loop would need them rewritten as callbacks. A
// worker costs one stack, and there are as many as calls were ever in flight at once (one client,
// one agent: a few).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "ops/core.hpp"

namespace team::mcp {

// The protocol revisions this server speaks, newest first (SPEC 12).
inline constexpr const char* kProtocolVersions[] = {"2025-11-25", "2025-06-18"};
// From this revision on, arguments that do not fit a tool's schema are a tool result with
// isError (SEP-1303), not JSON-RPC -32602.
inline constexpr std::string_view kSep1303Revision = "2025-11-25";
// The longest line this server reads (SPEC 12): a longer one is refused and skipped.
inline constexpr std::size_t kMaxLine = 2 * 1024 * 1024;

struct ServerOptions {
    ops::Identity identity;  // the caller, fixed at start (SPEC 1.5); a call may name its team
    std::string version = "0.1.0";
    std::chrono::milliseconds heartbeat{5000};  // progress while a call with a token runs
    bool push_inbox = true;  // the caller's new messages as Claude Code channel notifications
};

class Server {
  public:
    // Writes one framed message (a line ending in '\n'). Called under the server's lock.
    using Writer = std::function<void(const std::string& line)>;

    Server(ServerOptions options, Writer write);
    // Cancels what still runs and waits for it (at most a second).
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    // One line of input, without its newline.
    void handle_line(std::string_view line);
    // A line longer than kMaxLine was skipped: refuses it.
    void refuse_long_line();
    // The input ended: ends every wait the client asked for (answered as run out early), lets
    // every call doing work finish and answer, and returns when no call is left; nothing is
    // written after (a reply half-written is impossible: writes are whole, locked).
    void finish();
    // Gives up: cancels every call in flight (none is answered), waits up to `budget` for their
    // threads, and writes nothing after.
    void close(std::chrono::milliseconds budget);
    // How many calls are running.
    std::size_t running() const;

    // Reads `in_fd` line by line until it ends, writing to `out_fd`; then finish().
    static void serve(int in_fd, int out_fd, ServerOptions options);

  private:
    struct State;
    std::shared_ptr<State> state_;
};

// The answer to initialize (exposed for the unit tests); `instructions`: the caller's, from
// ops::instructions_for.
nlohmann::json initialize_result(const nlohmann::json& params, const std::string& version,
                                 const std::string& instructions);

}  // namespace team::mcp
