// The client's own side of an ACP session (acp/client.hpp): the agent started, the handshake
// (initialize, session/new, authenticate), the turn queue run one turn at a time, cancel and
// its deadline, a graceful close, and what the host reads of the session. The agent's requests
// are served by acp/client_requests.cpp.
#include "acp/client.hpp"

#include <unistd.h>

#include <atomic>
#include <future>

#include "base/error.hpp"

namespace team::acp {

using nlohmann::json;
using namespace std::chrono_literals;

namespace {

std::vector<std::filesystem::path> roots_of(const ClientOptions& o) {
    if (!o.cwd.is_absolute())
        throw usage_error("the agent's cwd " + quote(o.cwd.string()) + " is not absolute");
    std::vector<std::filesystem::path> roots{o.cwd};
    roots.insert(roots.end(), o.directories.begin(), o.directories.end());
    return roots;
}

std::string unique_marker() {
    static std::atomic<int> counter{0};
    return "TEAM_ACP_AGENT=" + std::to_string(::getpid()) + "-" + std::to_string(++counter) + "-" +
           std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
}

// What session/new and session/load both take.
json session_params(const ClientOptions& o) {
    json params = {{"cwd", o.cwd.string()}, {"mcpServers", o.mcp_servers}};
    if (!o.directories.empty()) {
        params["additionalDirectories"] = json::array();
        for (const auto& d : o.directories) params["additionalDirectories"].push_back(d.string());
    }
    return params;
}

}  // namespace

std::string client_state_name(ClientState state) {
    switch (state) {
        case ClientState::created:
            return "created";
        case ClientState::ready:
            return "ready";
        case ClientState::needs_auth:
            return "needs_auth";
        case ClientState::ended:
            return "ended";
    }
    return "ended";
}

Client::Client(ClientOptions options, Host& host)
    : options_(std::move(options)),
      host_(host),
      roots_(roots_of(options_)),
      connection_([this](Incoming&& in) { on_message(std::move(in)); },
                  [this](const std::string& reason) { on_end(reason); }) {
    if (options_.marker.empty()) options_.marker = unique_marker();
}

Client::~Client() {
    close();
    connection_.join();  // no message is handled after this: workers_ is complete
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        changed_.notify_all();
    }
    if (turns_thread_.joinable()) turns_thread_.join();
    host_.terminals().release_all();  // unblocks workers waiting for an exit
    std::list<Worker> workers;
    {
        std::lock_guard lock(mutex_);
        workers.swap(workers_);
    }
    for (auto& w : workers) w.thread.join();
}

void Client::start() {
    ChildSpec spec;
    spec.argv = options_.command;
    spec.cwd = options_.cwd;
    spec.env = options_.env;
    connection_.start(spec, options_.marker);
    json init = {{"protocolVersion", kProtocolVersion},
                 {"clientCapabilities",
                  {{"fs", {{"readTextFile", true}, {"writeTextFile", true}}}, {"terminal", true}}},
                 {"clientInfo", {{"name", "team"}, {"version", "0.1.0"}}}};
    Reply r = connection_.call("initialize", init, options_.handshake_timeout);
    if (!r.ok()) {
        connection_.end("initialize failed", 0ms);
        throw failed("the agent's initialize failed: " + r.problem());
    }
    const json& result = r.result;
    json version =
        result.is_object() ? result.value("protocolVersion", json(nullptr)) : json(nullptr);
    if (version != json(kProtocolVersion)) {
        std::string reason = "agent answered protocol version " + version.dump() + "; we offered " +
                             std::to_string(kProtocolVersion);
        connection_.end(reason, 0ms);
        throw refused(reason);
    }
    {
        std::lock_guard lock(mutex_);
        agent_info_ = result.value("agentInfo", json(nullptr));
        auto caps = result.find("agentCapabilities");
        if (caps != result.end() && caps->is_object()) agent_capabilities_ = *caps;
        for (const json& m : result.value("authMethods", json::array()))
            if (m.is_object() && m.contains("id") && m["id"].is_string())
                auth_methods_.push_back({m["id"].get<std::string>(), m.value("name", std::string()),
                                         m.value("description", std::string())});
    }
    open_session();
}

void Client::open_session() {
    if (options_.load_session) {
        bool offered = false;
        {
            std::lock_guard lock(mutex_);
            auto it = agent_capabilities_.find("loadSession");
            offered = it != agent_capabilities_.end() && *it == true;
            // The ACP spec: a client MUST NOT call session/load unless the agent offers it.
            why_fresh_ = offered ? "" : "the agent does not offer session/load";
        }
        if (offered && load_session(*options_.load_session)) return;
    }
    new_session();
}

bool Client::wants_auth(const Reply& r) {
    if (!r.error || r.error->code != auth_required) return false;
    std::vector<AuthMethod> methods;
    {
        std::lock_guard lock(mutex_);
        state_ = ClientState::needs_auth;
        methods = auth_methods_;
    }
    host_.needs_auth(methods);
    return true;
}

void Client::session_ready(const std::string& id) {
    std::lock_guard lock(mutex_);
    session_id_ = id;
    state_ = ClientState::ready;
    if (!turns_thread_.joinable()) turns_thread_ = std::thread([this] { turn_loop(); });
}

bool Client::load_session(const std::string& id) {
    json params = session_params(options_);
    params["sessionId"] = id;
    {
        std::lock_guard lock(mutex_);
        loading_ = true;
        replayed_ = 0;
    }
    // The replay ends with the reply: the flag is cleared on the reader thread as the reply is
    // read, so an update the agent sends after it is never taken for a replayed one.
    auto promise = std::make_shared<std::promise<Reply>>();
    auto future = promise->get_future();
    connection_.request("session/load", params, [this, promise](Reply r) {
        {
            std::lock_guard lock(mutex_);
            loading_ = false;
        }
        promise->set_value(std::move(r));
    });
    if (future.wait_for(options_.handshake_timeout) != std::future_status::ready) {
        std::string reason = "no reply to session/load within " +
                             std::to_string(options_.handshake_timeout.count()) + " ms";
        connection_.end(reason, 0ms);
        throw failed("the agent's " + reason);
    }
    Reply r = future.get();
    if (r.ended) throw failed("the agent's session/load failed: " + r.problem());
    if (wants_auth(r)) return true;
    if (!r.ok()) {
        // Its conversation is gone or the agent cannot load it: a new session, said so.
        std::lock_guard lock(mutex_);
        why_fresh_ = "session/load failed: " + r.problem();
        return false;
    }
    // LoadSessionResponse names no session: the one loaded keeps its id.
    {
        std::lock_guard lock(mutex_);
        loaded_ = true;
    }
    session_ready(id);
    return true;
}

void Client::new_session() {
    Reply r = connection_.call("session/new", session_params(options_), options_.handshake_timeout);
    if (wants_auth(r)) return;
    std::string id =
        r.ok() && r.result.is_object() ? r.result.value("sessionId", std::string()) : "";
    if (id.empty()) {
        std::string problem = r.ok() ? "no sessionId in its reply" : r.problem();
        connection_.end("session/new failed", 0ms);
        throw failed("the agent's session/new failed: " + problem);
    }
    session_ready(id);
}

void Client::authenticate(const std::string& method_id) {
    {
        std::lock_guard lock(mutex_);
        if (state_ != ClientState::needs_auth)
            throw refused("the agent is " + client_state_name(state_) + ", not needs_auth");
    }
    Reply r =
        connection_.call("authenticate", {{"methodId", method_id}}, options_.handshake_timeout);
    if (!r.ok()) throw failed("authenticate " + quote(method_id) + " failed: " + r.problem());
    open_session();
}

int Client::prompt(const std::string& text) {
    std::lock_guard lock(mutex_);
    if (state_ != ClientState::ready)
        throw refused("the agent is " + client_state_name(state_) + ", not ready for a prompt");
    auto turn = std::make_shared<Turn>(Turn{next_turn_++, text, std::nullopt});
    turns_[turn->number] = turn;
    queue_.push_back(turn);
    changed_.notify_all();
    return turn->number;
}

std::optional<TurnResult> Client::wait_turn(int number,
                                            std::optional<std::chrono::milliseconds> timeout) {
    std::unique_lock lock(mutex_);
    auto it = turns_.find(number);
    if (it == turns_.end()) throw not_found("no turn " + std::to_string(number));
    auto turn = it->second;
    auto done = [&] { return turn->result.has_value(); };
    if (timeout) {
        if (!changed_.wait_for(lock, *timeout, done)) return std::nullopt;
    } else {
        changed_.wait(lock, done);
    }
    return turn->result;
}

void Client::finish_turn(Turn& turn, TurnResult result) {
    transcript_.end_turn(result.stop_reason, result.error);
    turn.result = std::move(result);
    changed_.notify_all();
}

void Client::turn_loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
        changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (stopping_ && queue_.empty()) return;
        auto turn = queue_.front();
        queue_.pop_front();
        if (state_ != ClientState::ready) {
            finish_turn(*turn, {"", "connection ended: " + connection_.end_reason(), nullptr});
            TurnResult result = *turn->result;
            lock.unlock();
            host_.turn_ended(turn->number, result);
            lock.lock();
            continue;
        }
        current_ = turn;
        current_reply_.reset();
        cancelled_at_.reset();
        transcript_.begin_turn(turn->text);
        json params = {{"sessionId", session_id_},
                       {"prompt", json::array({{{"type", "text"}, {"text", turn->text}}})}};
        lock.unlock();
        connection_.request("session/prompt", params, [this](Reply r) {
            std::lock_guard inner(mutex_);
            current_reply_ = std::move(r);
            changed_.notify_all();
        });
        // Told once the prompt is on its way: the host's record of it waits for no one.
        host_.turn_started(turn->number);
        lock.lock();
        for (;;) {
            if (current_reply_) break;
            if (cancelled_at_) {
                auto deadline = *cancelled_at_ + options_.cancel_deadline;
                if (changed_.wait_until(lock, deadline, [&] { return current_reply_.has_value(); }))
                    break;
                // The agent ignored the cancel: it is ended, and its reply comes as that end.
                std::string reason = "agent did not end its turn within " +
                                     std::to_string(options_.cancel_deadline.count()) +
                                     " ms of session/cancel";
                lock.unlock();
                connection_.end(reason, 0ms);
                lock.lock();
                changed_.wait(lock, [&] { return current_reply_.has_value(); });
                break;
            }
            changed_.wait(lock,
                          [&] { return current_reply_.has_value() || cancelled_at_.has_value(); });
        }
        Reply r = std::move(*current_reply_);
        current_.reset();
        if (r.ok()) {
            std::string reason =
                r.result.is_object() ? r.result.value("stopReason", std::string()) : "";
            if (reason.empty()) {
                finish_turn(*turn, {"", "the agent's reply has no stopReason", nullptr});
            } else {
                auto usage = r.result.find("usage");
                finish_turn(*turn, {reason, "",
                                    usage != r.result.end() && usage->is_object()
                                        ? *usage
                                        : nlohmann::json(nullptr)});
            }
        } else {
            finish_turn(*turn, {"", r.problem(), nullptr});
        }
        TurnResult result = *turn->result;
        lock.unlock();
        host_.turn_ended(turn->number, result);
        lock.lock();
    }
}

bool Client::cancel() {
    std::vector<std::pair<json, std::int64_t>> open;
    {
        std::lock_guard lock(mutex_);
        if (!current_ || cancelled_at_) return current_ != nullptr;
        cancelled_at_ = std::chrono::steady_clock::now();
        for (auto& [number, p] : permissions_) open.emplace_back(p.rpc_id, number);
        permissions_.clear();
        changed_.notify_all();
    }
    connection_.notify("session/cancel", {{"sessionId", session_id()}});
    for (auto& [id, number] : open) {
        connection_.reply(id, cancelled_outcome());
        host_.permission_closed(number, "cancelled");
    }
    return true;
}

void Client::answer_permission(std::int64_t number, const PermissionChoice& choice) {
    OpenPermission p;
    std::optional<std::string> option;
    {
        std::lock_guard lock(mutex_);
        auto it = permissions_.find(number);
        if (it == permissions_.end())
            throw not_found("no open permission request " + std::to_string(number));
        if (choice.kind != PermissionChoice::Kind::cancelled) {
            option = option_for(it->second.request, choice);
            if (!option)
                throw usage_error("the agent offered no such option for request " +
                                  std::to_string(number));
        }
        p = std::move(it->second);
        permissions_.erase(it);
    }
    connection_.reply(p.rpc_id, option ? selected_outcome(*option) : cancelled_outcome());
    host_.permission_closed(number, option.value_or("cancelled"));
}

void Client::close() {
    cancel();
    connection_.end("closed", options_.close_grace);
}

void Client::on_end(const std::string& reason) {
    std::vector<std::int64_t> expired;
    {
        std::lock_guard lock(mutex_);
        state_ = ClientState::ended;
        for (auto& [number, p] : permissions_) expired.push_back(number);
        permissions_.clear();
        changed_.notify_all();
    }
    for (auto number : expired) host_.permission_closed(number, "expired");
    host_.terminals().release_all();
    host_.ended(reason);
}

ClientState Client::state() const {
    std::lock_guard lock(mutex_);
    return state_;
}

std::string Client::end_reason() const {
    return connection_.end_reason();
}

std::string Client::session_id() const {
    std::lock_guard lock(mutex_);
    return session_id_;
}

std::vector<AuthMethod> Client::auth_methods() const {
    std::lock_guard lock(mutex_);
    return auth_methods_;
}

json Client::agent_info() const {
    std::lock_guard lock(mutex_);
    return agent_info_;
}

json Client::agent_capabilities() const {
    std::lock_guard lock(mutex_);
    return agent_capabilities_;
}

bool Client::session_loaded() const {
    std::lock_guard lock(mutex_);
    return loaded_;
}

int Client::replayed_updates() const {
    std::lock_guard lock(mutex_);
    return replayed_;
}

std::string Client::why_fresh() const {
    std::lock_guard lock(mutex_);
    return why_fresh_;
}

std::vector<PermissionRequest> Client::open_permissions() const {
    std::lock_guard lock(mutex_);
    std::vector<PermissionRequest> out;
    for (const auto& [n, p] : permissions_) out.push_back(p.request);
    return out;
}

std::string Client::transcript_text() const {
    std::lock_guard lock(mutex_);
    return transcript_.render();
}

json Client::transcript_records() const {
    std::lock_guard lock(mutex_);
    return transcript_.records();
}

}  // namespace team::acp
