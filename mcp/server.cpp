#include "mcp/server.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "base/cancel.hpp"
#include "base/error.hpp"
#include "base/names.hpp"
#include "jsonrpc/codec.hpp"
#include "mcp/channel.hpp"
#include "mcp/schema.hpp"
#include "mcp/tools.hpp"
#include "ops/operation.hpp"
#include "ops/workers.hpp"

namespace team::mcp {

using jsonrpc::error_response;
using jsonrpc::frame;
using jsonrpc::internal_error;
using jsonrpc::invalid_params;
using jsonrpc::invalid_request;
using jsonrpc::Message;
using jsonrpc::method_not_found;
using jsonrpc::notification;
using jsonrpc::parse_line;
using jsonrpc::Refusal;
using jsonrpc::result_response;

namespace {

void signal_fd(int fd) {
    std::uint64_t one = 1;
    ssize_t n = ::write(fd, &one, sizeof one);
    (void)n;  // full: it is readable already
}

// One tools/call while it runs.
struct Flight {
    explicit Flight(nlohmann::json request_id, nlohmann::json progress_token)
        : id(std::move(request_id)), token(std::move(progress_token)) {
        cancel_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    }
    ~Flight() {
        if (cancel_fd >= 0) ::close(cancel_fd);
    }
    Flight(const Flight&) = delete;
    Flight& operator=(const Flight&) = delete;

    // The client withdrew the request (or the server gives up on it): every wait of the call
    // ends, and nothing is answered.
    void cancel() {
        cancelled = true;
        if (cancel_fd >= 0) signal_fd(cancel_fd);
    }

    nlohmann::json id;
    nlohmann::json token;  // null: the client asked for no progress
    int cancel_fd = -1;
    std::atomic<bool> cancelled{false};
    std::atomic<long long> progress{0};
};

}  // namespace

struct Server::State : std::enable_shared_from_this<Server::State> {
    State() { wind_down_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }
    ~State() {
        if (wind_down_fd >= 0) ::close(wind_down_fd);
    }
    State(const State&) = delete;
    State& operator=(const State&) = delete;

    ServerOptions options;
    Writer writer;
    // Written when the input ends: every call's asked waits (a waitMs, a waited prompt) end, as
    // a stopping server's (base/cancel.hpp); the work under way goes on and is answered.
    int wind_down_fd = -1;

    std::mutex write_mutex;
    bool closed = false;  // under write_mutex: nothing is written after close

    mutable std::mutex flights_mutex;
    std::condition_variable flights_changed;
    std::map<std::string, std::shared_ptr<Flight>> flights;  // by the request id's JSON
    std::size_t threads = 0;                                 // calls still running
    bool stopping = false;                                   // the heartbeat and the workers end

    // The workers: a call takes an idle one or starts one (ops/workers.hpp), each keeps an
    // ops::Core per team named by the calls it ran.
    ops::Workers workers;
    std::thread heartbeat;
    std::unique_ptr<InboxPush> push;  // from notifications/initialized; the reader's thread only
    std::string revision;             // negotiated at initialize; the reader's thread only

    // Arguments that do not fit a tool's schema (SPEC 12): under 2025-11-25 a tool result with
    // isError, so the model reads the message and corrects its call (SEP-1303); before it (or
    // before initialize), JSON-RPC -32602. Either way the message and the field are named.
    void refuse_arguments(const nlohmann::json& id, const std::string& message,
                          const std::string& field) {
        if (revision != kSep1303Revision) {
            nlohmann::json data = nullptr;
            if (!field.empty()) data = {{"field", field}};
            write(error_response(id, invalid_params, message, std::move(data)));
            return;
        }
        nlohmann::json content = ops::error_document(usage_error(message));
        if (!field.empty()) content["field"] = field;
        write(result_response(
            id,
            {{"content",
              {{{"type", "text"},
                {"text", content.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)}}}},
             {"structuredContent", content},
             {"isError", true}}));
    }

    void write(const nlohmann::json& message) {
        std::string line = frame(message);
        std::lock_guard lock(write_mutex);
        if (closed) return;
        writer(line);
    }

    void progress(Flight& f, const std::string& message) {
        if (f.token.is_null()) return;
        nlohmann::json params = {{"progressToken", f.token}, {"progress", ++f.progress}};
        if (!message.empty()) params["message"] = message;
        write(notification("notifications/progress", std::move(params)));
    }

    void beat() {
        std::unique_lock lock(flights_mutex);
        auto next = std::chrono::steady_clock::now() + options.heartbeat;
        while (!stopping) {
            // Woken early by every call's end and by close(): only the deadline beats.
            if (flights_changed.wait_until(lock, next) != std::cv_status::timeout) continue;
            next += options.heartbeat;
            std::vector<std::shared_ptr<Flight>> now;
            for (const auto& [_, f] : flights) now.push_back(f);
            lock.unlock();
            for (const auto& f : now) {
                if (!f->cancelled) progress(*f, "waiting");
            }
            lock.lock();
        }
    }

    void run_call(const std::shared_ptr<Flight>& f, const Tool& tool, const Call& call,
                  ops::CoreCache& cores) {
        int previous = set_thread_cancel_fd(f->cancel_fd);
        int previous_wind_down = set_thread_wind_down_fd(wind_down_fd);
        ops::Result r;
        ops::Identity identity = options.identity;
        if (call.team) identity.team = call.team;
        try {
            ops::Core& core = cores.get(identity);
            ops::Progress report;
            if (!f->token.is_null()) {
                report = [&](const nlohmann::json& event) { progress(*f, event.dump()); };
            }
            r = ops::invoke(core, *call.op, call.values, ops::Naming::json, report);
        } catch (const Error& e) {
            r = ops::error_result(*call.op, call.values, e);
        } catch (const std::exception& e) {
            r = ops::error_result(*call.op, call.values, failed(e.what()));
        }
        cores.after(identity, r);
        set_thread_cancel_fd(previous);
        set_thread_wind_down_fd(previous_wind_down);
        if (!f->cancelled) {
            nlohmann::json content = tool.structured(r.doc);
            nlohmann::json result = {
                {"content",
                 {{{"type", "text"},
                   {"text",
                    content.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)}}}},
                {"structuredContent", content},
                {"isError", r.is_error()}};
            write(result_response(f->id, std::move(result)));
        }
        // Once the reply is written (or will never be): a confirm from inside the agent's tree
        // wakes its supervisor only now, so the client gets its answer before the tree ends.
        if (r.after_reply) {
            try {
                r.after_reply();
            } catch (const std::exception&) {
                // the supervisor goes ahead on its own after kReplyWindow
            }
        }
        std::lock_guard lock(flights_mutex);
        auto it = flights.find(f->id.dump());
        if (it != flights.end() && it->second == f) flights.erase(it);
        --threads;
        flights_changed.notify_all();
    }

    void call(const nlohmann::json& id, const nlohmann::json& params) {
        auto name = params.find("name");
        if (name == params.end() || !name->is_string()) {
            write(error_response(id, invalid_params, "params.name must be the tool's name",
                                 {{"field", "name"}}));
            return;
        }
        const Tool* tool = find_tool(name->get<std::string>());
        if (!tool) {
            std::vector<std::string> names;
            for (const auto& t : tools()) names.push_back(t.name);
            write(error_response(id, invalid_params,
                                 "unknown tool " + quote(name->get<std::string>()) +
                                     did_you_mean(name->get<std::string>(), names),
                                 {{"field", "name"}}));
            return;
        }
        Call call;
        try {
            call = tool->call(params.value("arguments", nlohmann::json::object()));
        } catch (const ArgumentError& e) {
            refuse_arguments(id, e.message, e.field);
            return;
        } catch (const Error& e) {
            refuse_arguments(id, e.what(), "");
            return;
        }
        nlohmann::json token = nullptr;
        if (auto meta = params.find("_meta"); meta != params.end() && meta->is_object()) {
            if (auto t = meta->find("progressToken"); t != meta->end()) token = *t;
        }
        auto f = std::make_shared<Flight>(id, token);
        std::lock_guard lock(flights_mutex);
        if (stopping) return;
        flights[id.dump()] = f;
        ++threads;
        try {
            // The job keeps the server's state while a worker outlives close().
            workers.post([self = shared_from_this(), f, tool, call = std::move(call)](
                             ops::CoreCache& cores) { self->run_call(f, *tool, call, cores); });
        } catch (const std::system_error& e) {
            flights.erase(id.dump());
            --threads;
            write(error_response(id, internal_error, std::string("no thread: ") + e.what()));
        }
    }

    void cancelled(const nlohmann::json& params) {
        auto id = params.find("requestId");
        if (id == params.end()) return;
        std::lock_guard lock(flights_mutex);
        auto it = flights.find(id->dump());
        if (it != flights.end()) it->second->cancel();
    }

    void handle(const Message& m) {
        if (!m.is_request()) {
            if (m.method == "notifications/cancelled") cancelled(m.params);
            if (m.method == "notifications/initialized" && options.push_inbox && !push) {
                push = std::make_unique<InboxPush>(options.identity,
                                                   [this](const nlohmann::json& n) { write(n); });
            }
            return;  // notifications/initialized and the rest need nothing
        }
        const nlohmann::json& id = *m.id;
        if (m.method == "initialize") {
            auto result = initialize_result(m.params, options.version,
                                            ops::instructions_for(options.identity));
            revision = result["protocolVersion"].get<std::string>();
            write(result_response(id, std::move(result)));
        } else if (m.method == "ping") {
            write(result_response(id, nlohmann::json::object()));
        } else if (m.method == "tools/list") {
            nlohmann::json list = nlohmann::json::array();
            for (const auto& t : tools()) list.push_back(t.listing());
            write(result_response(id, {{"tools", list}}));
        } else if (m.method == "tools/call") {
            call(id, m.params.is_object() ? m.params : nlohmann::json::object());
        } else {
            write(error_response(id, method_not_found, "method not found: " + m.method));
        }
    }
};

nlohmann::json initialize_result(const nlohmann::json& params, const std::string& version,
                                 const std::string& instructions) {
    std::string asked;
    if (params.is_object()) {
        if (auto v = params.find("protocolVersion"); v != params.end() && v->is_string()) {
            asked = v->get<std::string>();
        }
    }
    // A revision we speak is answered as asked; any other (a newer probe, an older client)
    // gets our newest, and the client decides whether it can go on (the specification's
    // lifecycle, "Version Negotiation").
    std::string chosen = kProtocolVersions[0];
    for (const char* v : kProtocolVersions) {
        if (asked == v) chosen = v;
    }
    return {{"protocolVersion", chosen},
            {"capabilities",
             {{"tools", {{"listChanged", false}}},
              // Claude Code's channels: the caller's new messages pushed (mcp/channel.hpp).
              {"experimental", {{"claude/channel", nlohmann::json::object()}}}}},
            {"serverInfo", {{"name", "team"}, {"title", "team"}, {"version", version}}},
            {"instructions", instructions}};
}

Server::Server(ServerOptions options, Writer write) : state_(std::make_shared<State>()) {
    state_->options = std::move(options);
    state_->writer = std::move(write);
    state_->heartbeat = std::thread([s = state_.get()] { s->beat(); });
}

Server::~Server() {
    close(std::chrono::milliseconds(1000));
}

void Server::handle_line(std::string_view line) {
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
    auto parsed = parse_line(line);
    if (auto* refusal = std::get_if<Refusal>(&parsed)) {
        state_->write(refusal->response);
    } else if (auto* message = std::get_if<Message>(&parsed)) {
        try {
            state_->handle(*message);
        } catch (const std::exception& e) {
            // A bug, not the client's error: answered, and the server reads on.
            if (message->is_request()) {
                state_->write(error_response(*message->id, internal_error, e.what()));
            }
        }
    }
}

void Server::refuse_long_line() {
    state_->write(
        error_response(nullptr, invalid_request, "invalid request: a line over 2 MiB was refused"));
}

std::size_t Server::running() const {
    std::lock_guard lock(state_->flights_mutex);
    return state_->threads;
}

void Server::finish() {
    auto& s = *state_;
    {
        std::lock_guard lock(s.write_mutex);
        if (s.closed) return;
    }
    s.push.reset();  // no more pushes; its wait ends at once
    {
        std::unique_lock lock(s.flights_mutex);
        s.stopping = true;
        signal_fd(s.wind_down_fd);
        s.flights_changed.notify_all();
        // Each call ends by its own bounds: a wait the client asked for now, work by its timeouts.
        s.flights_changed.wait(lock, [&] { return s.threads == 0; });
    }
    s.workers.stop();  // every call answered: the workers end, their cores closed
    if (s.heartbeat.joinable()) s.heartbeat.join();
    std::lock_guard lock(s.write_mutex);
    s.closed = true;
}

void Server::close(std::chrono::milliseconds budget) {
    auto& s = *state_;
    {
        std::lock_guard lock(s.write_mutex);
        if (s.closed) return;
    }
    {
        std::unique_lock lock(s.flights_mutex);
        s.stopping = true;
        signal_fd(s.wind_down_fd);
        for (auto& [_, f] : s.flights) f->cancel();
        s.flights_changed.notify_all();
        auto deadline = std::chrono::steady_clock::now() + budget;
        s.flights_changed.wait_until(lock, deadline, [&] { return s.threads == 0; });
        lock.unlock();
        s.workers.stop(std::chrono::duration_cast<std::chrono::milliseconds>(
            std::max(deadline - std::chrono::steady_clock::now(),
                     std::chrono::steady_clock::duration::zero())));
    }
    if (s.heartbeat.joinable()) s.heartbeat.join();
    s.push.reset();  // its wait ends at once
    std::lock_guard lock(s.write_mutex);
    s.closed = true;
}

void Server::serve(int in_fd, int out_fd, ServerOptions options) {
    Server server(std::move(options), [out_fd](const std::string& line) {
        const char* p = line.data();
        std::size_t left = line.size();
        while (left > 0) {
            ssize_t n = ::write(out_fd, p, left);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return;  // the client is gone: nobody reads
            p += n;
            left -= static_cast<std::size_t>(n);
        }
    });
    std::string buffer;
    bool skipping = false;  // inside a line that was too long, until its newline
    char chunk[64 * 1024];
    for (;;) {
        ssize_t n = ::read(in_fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        std::size_t from = buffer.size();
        buffer.append(chunk, static_cast<std::size_t>(n));
        std::size_t start = 0;
        for (;;) {
            auto end = buffer.find('\n', from);
            if (end == std::string::npos) break;
            std::string_view line(buffer.data() + start, end - start);
            if (skipping) {
                skipping = false;
            } else if (line.size() > kMaxLine) {
                server.refuse_long_line();
            } else {
                if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
                server.handle_line(line);
            }
            start = end + 1;
            from = start;
        }
        buffer.erase(0, start);
        if (buffer.size() > kMaxLine) {
            if (!skipping) server.refuse_long_line();
            skipping = true;
            buffer.clear();
        }
    }
    if (!skipping && !buffer.empty()) server.handle_line(buffer);
    server.finish();
}

}  // namespace team::mcp
