// The transport of one ACP agent: the agent as our child (acp/child.hpp) and newline-delimited
// JSON-RPC over its stdin and stdout. Our requests get ids and their replies are matched to
// them; the agent's requests and notifications go to a handler; a line over 16 MiB, garbage,
// or the agent's exit ends the connection with a clear reason, and every request still waiting
// is answered with it. Three threads: a reader (stdout), a writer (stdin: a queue, so an agent
// that stops reading never blocks us) and one that keeps the tail of stderr.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "acp/child.hpp"
#include "acp/wire.hpp"

namespace team::acp {

// A reply to one of our requests: a result, the agent's error, or (`ended`) the reason the
// connection ended before the reply came.
struct Reply {
    nlohmann::json result;
    std::optional<RpcError> error;
    std::optional<std::string> ended;
    bool ok() const { return !error && !ended; }
    // The error or the end, as one message ("agent: Internal error", "connection ended: …").
    std::string problem() const;
};

class Connection {
  public:
    using MessageHandler = std::function<void(Incoming&&)>;
    using EndHandler = std::function<void(const std::string& reason)>;

    // The handlers run on the reader thread (on_end on whichever thread ended the connection).
    Connection(MessageHandler on_message, EndHandler on_end);
    ~Connection();
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    // Starts the agent (`marker`, "K=V", is put in its environment for the hunt) and the
    // threads. Throws team::Error when the agent cannot be started.
    void start(ChildSpec spec, const std::string& marker);

    // Sends a request; `done` is called once, with its reply or the end of the connection.
    void request(const std::string& method, nlohmann::json params, std::function<void(Reply)> done);
    // The same, waiting up to `timeout` for the reply (then an `ended`-less error reply).
    Reply call(const std::string& method, nlohmann::json params, std::chrono::milliseconds timeout);
    void notify(const std::string& method, nlohmann::json params);
    void reply(const nlohmann::json& id, nlohmann::json result);
    void reply_error(const nlohmann::json& id, int code, const std::string& message);

    // Ends the connection (the first reason is kept): the agent's stdin is closed, it has
    // `grace` to exit by itself, then its whole tree is ended (SIGTERM, 2 s, SIGKILL, the hunt).
    // Idempotent; safe from any thread, the reader's included.
    void end(const std::string& reason, std::chrono::milliseconds grace);

    // Waits for the reader threads to finish (after end(): the agent's tree is gone, so its
    // output closes). After it no handler runs any more.
    void join();

    bool ended() const { return ended_.load(); }
    std::string end_reason() const;
    std::string stderr_tail() const;
    pid_t pid() const { return child_.pid; }
    const std::string& marker() const { return marker_; }

  private:
    void read_loop();
    void write_loop();
    void error_loop();
    void dispatch(std::string_view line);
    void send(const nlohmann::json& message);
    std::string exit_reason();

    MessageHandler on_message_;
    EndHandler on_end_;
    Child child_;
    std::string marker_;
    std::thread reader_, writer_, error_reader_;

    mutable std::mutex mutex_;  // below
    std::condition_variable writable_;
    std::deque<std::string> outbox_;
    bool closing_input_ = false;  // the writer closes stdin once the outbox is empty
    std::map<std::int64_t, std::function<void(Reply)>> pending_;
    std::int64_t next_id_ = 1;
    std::string end_reason_;
    std::string stderr_tail_;
    std::optional<ExitStatus> exit_;

    std::atomic<bool> ended_{false};
    std::mutex end_mutex_;  // one end at a time; the second waits for the first
    bool reaped_ = false;
};

}  // namespace team::acp
