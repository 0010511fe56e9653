// One ACP agent hosted by us, the client (SPEC 15; protocol version 1, as Zed speaks it): it
// starts the agent (acp/connection.hpp), runs `initialize` offering fs (read and write) and
// terminals and `session/new` in an absolute cwd with the given MCP servers, then runs prompt
// turns one at a time from a queue, keeps the transcript, answers permission requests by the
// policy or through the host, and serves the agent's fs/* and terminal/* requests.
//
// Cancel (session/cancel) answers every open permission request `cancelled` and gives the
// agent `cancel_deadline` (10 s) to end the turn; an agent that does not is ended. The end of
// the connection, for whatever reason, fails the turn under way and the queued ones with that
// reason, expires open permission requests and releases the agent's terminals.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "acp/connection.hpp"
#include "acp/files.hpp"
#include "acp/host.hpp"
#include "acp/transcript.hpp"

namespace team::acp {

struct ClientOptions {
    std::vector<std::string> command;                // the agent: argv, argv[0] looked up in PATH
    std::filesystem::path cwd;                       // absolute: the session's cwd and first root
    std::vector<std::filesystem::path> directories;  // more roots for fs/* (additionalDirectories)
    std::vector<std::string> env;                    // "K=V" for the agent
    nlohmann::json mcp_servers = nlohmann::json::array();  // session/new's mcpServers
    Policy policy = Policy::ask;
    std::string marker;  // "K=V" marking the agent's tree (made when empty)
    std::chrono::milliseconds handshake_timeout{30000};
    std::chrono::milliseconds cancel_deadline{10000};
    std::chrono::milliseconds close_grace{5000};  // after stdin closes, before SIGTERM
};

enum class ClientState { created, ready, needs_auth, ended };
std::string client_state_name(ClientState state);

class Client {
  public:
    Client(ClientOptions options, Host& host);
    ~Client();
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    // Starts the agent and runs the handshake. Returns in state ready, or needs_auth (the host
    // told, auth_methods() filled). Throws team::Error when the agent cannot be started, fails
    // the handshake, or answers a protocol version we did not offer (the agent is ended).
    void start();
    // Runs `authenticate` with one of auth_methods(), then session/new. Throws as start().
    void authenticate(const std::string& method_id);

    // Queues a prompt turn; returns its number (1, 2, …). Throws team::Error (refused) when the
    // session is not ready.
    int prompt(const std::string& text);
    // How turn `turn` ended, waiting for it up to `timeout` (none: forever). Nothing on timeout.
    std::optional<TurnResult> wait_turn(int turn, std::optional<std::chrono::milliseconds> timeout);
    // Cancels the turn under way (not the queued ones). False when none runs.
    bool cancel();
    // Answers open permission request `number`. Throws team::Error: not_found when it is not
    // open, usage when the choice names no option the agent offered (the request stays open).
    void answer_permission(std::int64_t number, const PermissionChoice& choice);

    // A graceful end: cancel the turn under way, close the agent's stdin, `close_grace`, then
    // its whole tree. Idempotent; the destructor does it too.
    void close();

    ClientState state() const;
    std::string end_reason() const;
    std::string session_id() const;
    std::vector<AuthMethod> auth_methods() const;
    nlohmann::json agent_info() const;
    std::vector<PermissionRequest> open_permissions() const;
    std::string transcript_text() const;
    nlohmann::json transcript_records() const;
    std::string stderr_tail() const { return connection_.stderr_tail(); }
    pid_t agent_pid() const { return connection_.pid(); }
    const std::string& marker() const { return options_.marker; }

  private:
    struct Turn {
        int number;
        std::string text;
        std::optional<TurnResult> result;
    };
    struct OpenPermission {
        nlohmann::json rpc_id;
        PermissionRequest request;
    };
    void new_session();
    void turn_loop();
    void on_message(Incoming&& in);
    void on_end(const std::string& reason);
    void serve(Incoming in);
    void serve_terminal(Incoming in);
    void request_permission(const Incoming& in);
    void finish_turn(Turn& turn, TurnResult result);

    ClientOptions options_;
    Host& host_;
    Roots roots_;
    Connection connection_;

    mutable std::mutex mutex_;  // everything below
    std::condition_variable changed_;
    ClientState state_ = ClientState::created;
    std::string session_id_;
    std::vector<AuthMethod> auth_methods_;
    nlohmann::json agent_info_;
    Transcript transcript_;
    std::deque<std::shared_ptr<Turn>> queue_;
    std::map<int, std::shared_ptr<Turn>> turns_;
    std::shared_ptr<Turn> current_;
    std::optional<Reply> current_reply_;
    std::optional<std::chrono::steady_clock::time_point> cancelled_at_;
    std::map<std::int64_t, OpenPermission> permissions_;
    std::int64_t next_permission_ = 1;
    int next_turn_ = 1;
    bool stopping_ = false;
    std::thread turns_thread_;
    struct Worker {
        std::thread thread;
        std::shared_ptr<std::atomic<bool>> done;
    };
    std::list<Worker> workers_;  // terminal requests that wait
};

}  // namespace team::acp
