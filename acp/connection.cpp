#include "acp/connection.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <future>

#include "base/error.hpp"
#include "jsonrpc/codec.hpp"
#include "proc/signals.hpp"

namespace team::acp {

using nlohmann::json;
using namespace std::chrono_literals;

namespace {

constexpr std::size_t kStderrTail = 8192;

std::string describe(const ExitStatus& status) {
    if (status.signal) return "agent was killed by " + proc::signal_name(*status.signal);
    return "agent exited with " + std::to_string(status.exit_code.value_or(-1));
}

}  // namespace

std::string Reply::problem() const {
    if (ended) return "connection ended: " + *ended;
    if (error) return "agent answered error " + std::to_string(error->code) + ": " + error->message;
    return "";
}

Connection::Connection(MessageHandler on_message, EndHandler on_end)
    : on_message_(std::move(on_message)), on_end_(std::move(on_end)) {}

Connection::~Connection() {
    end("closed", 0ms);
    {
        std::lock_guard lock(mutex_);
        closing_input_ = true;
        writable_.notify_all();
    }
    for (std::thread* t : {&reader_, &writer_, &error_reader_})
        if (t->joinable()) t->join();
    for (int fd : {child_.in, child_.out, child_.err})
        if (fd >= 0) ::close(fd);
}

void Connection::start(ChildSpec spec, const std::string& marker) {
    marker_ = marker;
    spec.env.push_back(marker);
    spec.pipe_stdin = true;
    spec.merge_stderr = false;
    child_ = start_child(spec);
    reader_ = std::thread([this] { read_loop(); });
    writer_ = std::thread([this] { write_loop(); });
    error_reader_ = std::thread([this] { error_loop(); });
}

void Connection::send(const json& message) {
    std::string line = jsonrpc::frame(message);
    std::lock_guard lock(mutex_);
    if (closing_input_) return;
    outbox_.push_back(std::move(line));
    writable_.notify_one();
}

void Connection::request(const std::string& method, json params, std::function<void(Reply)> done) {
    std::int64_t id;
    {
        std::unique_lock lock(mutex_);
        if (ended_) {
            std::string reason = end_reason_;
            lock.unlock();
            done(Reply{nullptr, std::nullopt, reason});
            return;
        }
        id = next_id_++;
        pending_[id] = std::move(done);
    }
    send(jsonrpc::request(id, method, std::move(params)));
}

Reply Connection::call(const std::string& method, json params, std::chrono::milliseconds timeout) {
    auto promise = std::make_shared<std::promise<Reply>>();
    auto future = promise->get_future();
    request(method, std::move(params), [promise](Reply r) { promise->set_value(std::move(r)); });
    if (future.wait_for(timeout) != std::future_status::ready)
        return Reply{
            nullptr,
            RpcError{internal_error,
                     "no reply to " + method + " within " + std::to_string(timeout.count()) + " ms",
                     nullptr},
            std::nullopt};
    return future.get();
}

void Connection::notify(const std::string& method, json params) {
    send(jsonrpc::notification(method, std::move(params)));
}

void Connection::reply(const json& id, json result) {
    send(jsonrpc::result_response(id, std::move(result)));
}

void Connection::reply_error(const json& id, int code, const std::string& message) {
    send(jsonrpc::error_response(id, code, message));
}

void Connection::join() {
    for (std::thread* t : {&reader_, &error_reader_})
        if (t->joinable()) t->join();
}

std::string Connection::end_reason() const {
    std::lock_guard lock(mutex_);
    return end_reason_;
}

std::string Connection::stderr_tail() const {
    std::lock_guard lock(mutex_);
    return stderr_tail_;
}

void Connection::end(const std::string& reason, std::chrono::milliseconds grace) {
    std::lock_guard serial(end_mutex_);
    std::map<std::int64_t, std::function<void(Reply)>> waiting;
    bool first = false;
    {
        std::lock_guard lock(mutex_);
        if (!ended_) {
            ended_ = true;
            first = true;
            end_reason_ = reason;
            waiting.swap(pending_);
        }
        closing_input_ = true;  // the writer sends what is queued, then closes stdin
        writable_.notify_all();
    }
    if (!first) return;
    if (child_.pid > 0) {
        bool gone = false;
        {
            std::lock_guard lock(mutex_);
            gone = reaped_;
        }
        if (!gone && grace.count() > 0) {
            if (auto status = wait_child(child_.pid, std::chrono::steady_clock::now() + grace)) {
                std::lock_guard lock(mutex_);
                exit_ = status;
                reaped_ = gone = true;
            }
        }
        // Its group, its descendants and whatever carries its marker, even when the agent
        // itself is gone: a wrapper's child that ignores EOF outlives the wrapper.
        end_child_tree(child_, marker_, 2s);
        if (!gone) {
            auto status = wait_child(child_.pid, std::nullopt);
            std::lock_guard lock(mutex_);
            exit_ = status;
            reaped_ = true;
        }
    }
    // Told only now, when nothing of the agent is left: a failed turn means a dead agent. The
    // end first (open permissions expired, terminals released), then the waiting requests.
    if (on_end_) on_end_(reason);
    for (auto& [id, done] : waiting) done(Reply{nullptr, std::nullopt, reason});
}

std::string Connection::exit_reason() {
    // The agent closed its stdout: it is ending, or it closed it on purpose. A moment to exit.
    std::lock_guard serial(end_mutex_);  // one reaper: end() may be waiting for it too
    {
        std::lock_guard lock(mutex_);
        if (reaped_ && exit_) return describe(*exit_);
        if (reaped_ || ended_) return "agent closed its output";
    }
    auto status = wait_child(child_.pid, std::chrono::steady_clock::now() + 2s);
    {
        std::lock_guard lock(mutex_);
        if (status) {
            exit_ = status;
            reaped_ = true;
        }
    }
    if (!status) return "agent closed its output";
    return describe(*status);
}

void Connection::read_loop() {
    std::string buffer;
    std::size_t scanned = 0;  // bytes of `buffer` known to have no newline
    char chunk[65536];
    for (;;) {
        ssize_t n = ::read(child_.out, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        buffer.append(chunk, static_cast<std::size_t>(n));
        std::size_t start = 0;
        for (;;) {
            std::size_t newline = buffer.find('\n', std::max(scanned, start));
            if (newline == std::string::npos) break;
            std::size_t length = newline - start;
            if (length > kMaxLine) {
                end("agent sent a line over 16 MiB", 0ms);
                return;
            }
            std::string_view line(buffer.data() + start, length);
            if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
            if (!line.empty()) dispatch(line);
            if (ended_) return;
            start = newline + 1;
            scanned = start;
        }
        buffer.erase(0, start);
        scanned = buffer.size();
        if (buffer.size() > kMaxLine) {
            end("agent sent a line over 16 MiB", 0ms);
            return;
        }
    }
    if (!ended_) {
        std::string reason = exit_reason();
        end(reason, 0ms);
    }
}

void Connection::dispatch(std::string_view line) {
    auto message = read_message(line);
    if (auto* why = std::get_if<std::string>(&message)) {
        end("agent sent " + *why, 0ms);
        return;
    }
    Incoming in = std::move(std::get<Incoming>(message));
    if (in.kind != Incoming::Kind::reply) {
        if (on_message_) on_message_(std::move(in));
        return;
    }
    if (!in.id.is_number_integer()) return;  // not one of ours
    std::function<void(Reply)> done;
    {
        std::lock_guard lock(mutex_);
        auto it = pending_.find(in.id.get<std::int64_t>());
        if (it == pending_.end()) return;
        done = std::move(it->second);
        pending_.erase(it);
    }
    done(Reply{std::move(in.result), std::move(in.error), std::nullopt});
}

void Connection::write_loop() {
    // An agent that has exited makes the write fail with EPIPE: it must not raise SIGPIPE,
    // which would end the whole process. Blocked in this thread only.
    sigset_t pipe_signal;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
    bool broken = false;
    for (;;) {
        std::string line;
        {
            std::unique_lock lock(mutex_);
            writable_.wait(lock, [&] { return !outbox_.empty() || closing_input_; });
            if (outbox_.empty()) break;
            line = std::move(outbox_.front());
            outbox_.pop_front();
        }
        std::size_t done = 0;
        while (!broken && done < line.size()) {
            ssize_t n = ::write(child_.in, line.data() + done, line.size() - done);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0)
                broken = true;
            else
                done += static_cast<std::size_t>(n);
        }
    }
    std::lock_guard lock(mutex_);
    if (child_.in >= 0) ::close(child_.in);
    child_.in = -1;
}

void Connection::error_loop() {
    char chunk[4096];
    for (;;) {
        ssize_t n = ::read(child_.err, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        std::lock_guard lock(mutex_);
        stderr_tail_.append(chunk, static_cast<std::size_t>(n));
        if (stderr_tail_.size() > 2 * kStderrTail)
            stderr_tail_.erase(0, stderr_tail_.size() - kStderrTail);
    }
}

}  // namespace team::acp
