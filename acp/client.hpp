// One ACP agent hosted by us, the client (SPEC 15; protocol version 1, as Zed speaks it): it
// starts the agent (acp/connection.hpp), runs `initialize` offering fs (read and write) and
// terminals and `session/new` in an absolute cwd with the given MCP servers, then runs prompt
// turns one at a time from a queue, keeps the transcript, answers permission requests by the
// policy or through the host, and serves the agent's fs/* and terminal/* requests.
//
// A session asked to be loaded (`load_session`, a resume of SPEC 19) is opened with
// `session/load` when the agent's initialize offers `agentCapabilities.loadSession`, and with
// `session/new` when it does not or the load fails; session_loaded() and why_fresh() say which.
// The agent replays the loaded conversation as session/update notifications before it answers
// the load: those are counted and dropped, not applied to the transcript nor told to the host,
// since the conversation they replay is already kept (the host's store has its transcript from
// before), and the transcript is what happened in this session's turns, once.
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
    // The session to open with session/load (its id), when the agent offers it; none: a new one.
    std::optional<std::string> load_session;
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
    // Runs `authenticate` with one of auth_methods(), then opens the session (session/load or
    // session/new, as start() does). Throws as start().
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
    // initialize's agentCapabilities (an object, empty when the agent named none).
    nlohmann::json agent_capabilities() const;
    // True when the session is options.load_session, loaded; how many session/update
    // notifications its replay sent (dropped, see above).
    bool session_loaded() const;
    int replayed_updates() const;
    // Why a new session was made when options.load_session asked for a load ("the agent does not
    // offer session/load", "session/load failed: …"); empty when none was asked or it loaded.
    std::string why_fresh() const;
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
    // session/load when asked for and offered, else (or when it fails) session/new.
    void open_session();
    // True when the load settled the session (loaded, or the agent wants authentication first);
    // false when a new one must be made instead (why_fresh_ says why).
    bool load_session(const std::string& id);
    void new_session();
    // An auth_required answer: state needs_auth and the host told. False for any other.
    bool wants_auth(const Reply& r);
    void session_ready(const std::string& id);
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
    nlohmann::json agent_capabilities_ = nlohmann::json::object();
    bool loading_ = false;  // session/load under way: its replayed updates are dropped
    bool loaded_ = false;
    int replayed_ = 0;
    std::string why_fresh_;
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
