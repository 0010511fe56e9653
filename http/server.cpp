// The Beast side of `team serve`: accepting, reading requests with their limits and timeouts,
// the checks every request passes (Host, token, CSRF), answering, and the event streams. What a
// request means is http/api.cpp's; the verbs are the operations table's.
#include "http/server.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "base/cancel.hpp"
#include "base/error.hpp"
#include "http/api.hpp"
#include "http/assets.hpp"
#include "http/auth.hpp"
#include "http/events.hpp"
#include "http/router.hpp"
#include "ops/operation.hpp"

namespace team::http {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;

namespace {

constexpr std::size_t kBodyLimit = 1 << 20;      // SPEC 13: a larger body is 413
constexpr std::size_t kHeaderLimit = 16 * 1024;  // a larger head is 431... answered 400
constexpr std::size_t kStreamBacklog = 8 << 20;  // an event stream this far behind is dropped
constexpr int kMaxConnections = 4096;

// Threads that run operations. Each sets the server's stop descriptor as its cancel descriptor,
// so a wait (inbox --wait, kill-agent --wait) ends when the server stops.
class Workers {
  public:
    Workers(int count, int stop_fd) : stop_fd_(stop_fd) {
        for (int i = 0; i < count; ++i) {
            threads_.emplace_back([this] { work(); });
        }
    }
    ~Workers() { stop(); }

    void post(std::function<void()> job) {
        {
            std::lock_guard lock(mutex_);
            jobs_.push_back(std::move(job));
        }
        ready_.notify_one();
    }

    // An operation that may wait long (a kill's grace, a --wait) gets a thread of its own, so
    // it never holds up the pool. Not joined at the end: its wait is cancelled, a grace is not.
    void detach(std::function<void()> job) {
        std::thread([fd = stop_fd_, job = std::move(job)] {
            set_thread_cancel_fd(fd);
            job();
        }).detach();
    }

    void stop() {
        {
            std::lock_guard lock(mutex_);
            stopping_ = true;
        }
        ready_.notify_all();
        for (auto& t : threads_) {
            if (t.joinable()) t.join();
        }
    }

  private:
    void work() {
        set_thread_cancel_fd(stop_fd_);
        for (;;) {
            std::function<void()> job;
            {
                std::unique_lock lock(mutex_);
                ready_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
                if (stopping_) return;
                job = std::move(jobs_.front());
                jobs_.pop_front();
            }
            job();
        }
    }

    int stop_fd_;
    std::mutex mutex_;
    std::condition_variable ready_;
    std::deque<std::function<void()>> jobs_;
    bool stopping_ = false;
    std::vector<std::thread> threads_;
};

// An open event stream, whatever its socket.
struct Sink {
    virtual ~Sink() = default;
    virtual void send(std::shared_ptr<const std::string> text) = 0;
    virtual void close() = 0;

    std::optional<std::string> only_team;  // ?team=
    bool catching_up = false;              // its backlog has not arrived yet
    std::int64_t last_sent = 0;            // rows up to here were sent
    std::vector<Event> held;               // live rows that came while catching up
};

// Every open stream, on the loop's thread only: the feed's rows fanned out, the keep-alives.
class Hub {
  public:
    std::uint64_t add(std::shared_ptr<Sink> sink) {
        auto id = ++next_;
        sinks_[id] = std::move(sink);
        return id;
    }
    void remove(std::uint64_t id) { sinks_.erase(id); }
    std::size_t size() const { return sinks_.size(); }

    // New rows (stream 0: for all) or a stream's backlog.
    void deliver(std::uint64_t stream, const std::vector<Event>& events) {
        if (stream != 0) {
            auto it = sinks_.find(stream);
            if (it == sinks_.end()) return;
            Sink& s = *it->second;
            s.catching_up = false;
            send(s, events);
            auto held = std::move(s.held);
            send(s, held);
            return;
        }
        // One frame per row, shared by every stream that takes it.
        std::vector<std::shared_ptr<const std::string>> frames;
        frames.reserve(events.size());
        for (const auto& e : events) frames.push_back(std::make_shared<std::string>(frame(e)));
        for (auto& [_, sink] : sinks_) {
            Sink& s = *sink;
            if (s.catching_up) {
                s.held.insert(s.held.end(), events.begin(), events.end());
                continue;
            }
            for (std::size_t i = 0; i < events.size(); ++i) {
                if (!wants(s, events[i])) continue;
                s.last_sent = events[i].id;
                s.send(frames[i]);
            }
        }
    }

    void keep_alive() {
        auto comment = std::make_shared<const std::string>(": keep-alive\n\n");
        for (auto& [_, s] : sinks_) s->send(comment);
    }

    void close_all() {
        auto all = std::move(sinks_);
        for (auto& [_, s] : all) s->close();
    }

  private:
    static bool wants(const Sink& s, const Event& e) {
        if (e.id <= s.last_sent) return false;
        return !s.only_team || (e.team && *e.team == *s.only_team);
    }
    void send(Sink& s, const std::vector<Event>& events) {
        for (const auto& e : events) {
            if (!wants(s, e)) continue;
            s.last_sent = e.id;
            s.send(std::make_shared<std::string>(frame(e)));
        }
    }

    std::uint64_t next_ = 0;
    std::map<std::uint64_t, std::shared_ptr<Sink>> sinks_;
};

// What every connection shares.
struct Shared {
    explicit Shared(ServerOptions o) : options(std::move(o)) {
        stop_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        base = options.identity;
        base.via = "web";
    }
    ~Shared() { ::close(stop_fd); }

    // Owned here, so an operation's thread that outlives serve() still posts to a live (stopped)
    // loop rather than a destroyed one.
    net::io_context ioc{1};
    ServerOptions options;
    ops::Identity base;
    int stop_fd = -1;
    std::atomic<int> connections{0};
    Hub hub;
    std::unique_ptr<Workers> workers;
    std::unique_ptr<ActivityFeed> feed;
    bool stopping = false;
};

void security_headers(bhttp::fields& h, bool api) {
    h.set("Content-Security-Policy", "default-src 'self'");
    h.set("X-Content-Type-Options", "nosniff");
    h.set("Referrer-Policy", "no-referrer");
    h.set(bhttp::field::cache_control, api ? "no-store" : "no-cache");
}

std::string_view method_text(const bhttp::request<bhttp::string_body>& req) {
    auto m = req.method_string();
    return {m.data(), m.size()};
}

template <class Stream>
class Connection : public Sink, public std::enable_shared_from_this<Connection<Stream>> {
  public:
    Connection(std::shared_ptr<Shared> shared, typename Stream::socket_type socket)
        : shared_(std::move(shared)), stream_(std::move(socket)) {
        ++shared_->connections;
    }
    ~Connection() override { --shared_->connections; }

    void start() { read_header(); }

    // Sink: an event stream's frames, written one after another.
    void send(std::shared_ptr<const std::string> text) override {
        if (closed_ || overflowed_) return;
        queued_bytes_ += text->size();
        if (queued_bytes_ > kStreamBacklog) {
            // A reader that stopped reading is dropped; closed from the loop, not from within
            // the hub's fan-out that called us.
            overflowed_ = true;
            net::post(stream_.get_executor(), [self = this->shared_from_this()] { self->close(); });
            return;
        }
        queue_.push_back(std::move(text));
        if (queue_.size() == 1) write_next();
    }

    void close() override {
        if (closed_) return;
        closed_ = true;
        if (stream_id_) shared_->hub.remove(std::exchange(stream_id_, 0));
        beast::error_code ec;
        stream_.socket().shutdown(net::socket_base::shutdown_both, ec);
        stream_.close();
    }

  private:
    void read_header() {
        parser_.emplace();
        parser_->header_limit(kHeaderLimit);
        parser_->body_limit(kBodyLimit);
        stream_.expires_after(shared_->options.header_timeout);
        bhttp::async_read_header(stream_, buffer_, *parser_,
                                 [self = this->shared_from_this()](
                                     beast::error_code ec, std::size_t) { self->on_header(ec); });
    }

    void on_header(beast::error_code ec) {
        if (ec) return failed_read(ec);
        auto length = parser_->content_length();
        if (length && *length > kBodyLimit) {
            return answer_and_close(error_answer(413, "usage", "the body is over 1 MiB"));
        }
        if (parser_->is_done()) return handle();
        stream_.expires_after(shared_->options.body_timeout);
        bhttp::async_read(stream_, buffer_, *parser_,
                          [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                              if (ec) return self->failed_read(ec);
                              self->handle();
                          });
    }

    void failed_read(beast::error_code ec) {
        if (ec == bhttp::error::body_limit) {
            return answer_and_close(error_answer(413, "usage", "the body is over 1 MiB"));
        }
        if (ec == bhttp::error::end_of_stream || ec == beast::error::timeout ||
            ec == net::error::operation_aborted || ec == net::error::connection_reset ||
            ec == net::error::eof || ec == bhttp::error::partial_message) {
            return close();  // gone, or too slow: nothing to answer
        }
        answer_and_close(error_answer(400, "usage", "malformed request: " + ec.message()));
    }

    void answer_and_close(const Answer& a) {
        keep_alive_ = false;
        linger_ = true;
        write(a, true, {});
    }

    // Closing with unread bytes would reset the connection and could destroy the answer before
    // the client reads it (a 413 to a client still sending): end our side, read what comes for
    // a moment, then close.
    void drain_then_close() {
        beast::error_code ec;
        stream_.socket().shutdown(net::socket_base::shutdown_send, ec);
        stream_.expires_after(std::chrono::seconds(2));
        auto buf = std::make_shared<std::array<char, 65536>>();
        drain(buf, 0);
    }

    void drain(std::shared_ptr<std::array<char, 65536>> buf, std::size_t total) {
        stream_.async_read_some(net::buffer(*buf), [self = this->shared_from_this(), buf, total](
                                                       beast::error_code ec, std::size_t n) {
            if (ec || total + n > 4 * kBodyLimit) return self->close();
            self->drain(buf, total + n);
        });
    }

    void handle() {
        const auto& req = parser_->get();
        keep_alive_ = req.keep_alive();
        std::string_view target(req.target().data(), req.target().size());
        std::string_view method = method_text(req);
        auto path = target.substr(0, target.find('?'));
        bool api = path == "/api" || path.starts_with("/api/");
        const auto& o = shared_->options;

        auto host = req[bhttp::field::host];
        if (!o.any_host && !host_allowed({host.data(), host.size()}, o.listen_host)) {
            return write(error_answer(403, "refused", "this server does not answer for that host"),
                         api, {});
        }
        // The page opened with the token: the cookie, then the address without the token.
        if (method == "GET" && path == "/" && target.find("token=") != std::string_view::npos) {
            std::optional<std::string> given;
            try {
                auto q = target.find('?');
                for (auto& [k, v] : parse_query(target.substr(q + 1))) {
                    if (k == "token") given = v;
                }
            } catch (const Error&) {
            }
            if (!given || !same_token(*given, o.token)) {
                return write(unauthorized(false), false, {});
            }
            Answer a{303, "", "text/plain"};
            std::string cookie =
                std::string(kCookieName) + "=" + o.token + "; Path=/; HttpOnly; SameSite=Strict";
            return write(a, false, {{"Set-Cookie", cookie}, {"Location", "/"}});
        }
        std::optional<std::string> token;
        if (auto auth = req[bhttp::field::authorization]; !auth.empty()) {
            token = bearer_token({auth.data(), auth.size()});
        } else if (auto cookie = req[bhttp::field::cookie]; !cookie.empty()) {
            token = cookie_value({cookie.data(), cookie.size()}, kCookieName);
        }
        if (!token || !same_token(*token, o.token)) return write(unauthorized(api), api, {});
        bool changes = method != "GET" && method != "HEAD" && method != "OPTIONS";
        if (changes && req["X-Team-CSRF"] != "1") {
            return write(error_answer(403, "refused",
                                      "a request that changes something needs X-Team-CSRF: 1"),
                         api, {});
        }
        if (!api) return serve_file(method, path);

        auto last = req["Last-Event-ID"];
        Plan p = plan(method, target, req.body(), {last.data(), last.size()}, shared_->base);
        if (auto* a = std::get_if<Answer>(&p)) return write(*a, true, {});
        if (auto* e = std::get_if<EventsCall>(&p)) return start_events(*e);
        run_operation(std::move(std::get<OperationCall>(p)));
    }

    static Answer unauthorized(bool api) {
        if (api) return error_answer(401, "refused", "a token is needed (Authorization: Bearer)");
        return {401,
                "team serve: open the address `team serve --url` prints (it carries the token)\n",
                "text/plain; charset=utf-8"};
    }

    void serve_file(std::string_view method, std::string_view path) {
        if (method != "GET" && method != "HEAD") {
            return write({405, "method not allowed\n", "text/plain; charset=utf-8"}, false, {});
        }
        auto data = find_asset(path, shared_->options.web_root);
        if (!data) return write({404, "not found\n", "text/plain; charset=utf-8"}, false, {});
        write({200, std::move(*data), std::string(mime_type(path == "/" ? "/index.html" : path))},
              false, {});
    }

    void run_operation(OperationCall call) {
        bool waits = call.op->waits;
        auto job = [self = this->shared_from_this(), call = std::move(call), waits]() mutable {
            Answer a = run(call, !waits);
            // A 500 is the server's failure, not the client's: say it where its operator looks.
            if (a.status >= 500 && a.status != 504) {
                std::fprintf(stderr, "team serve: %s failed: %s\n",
                             std::string(call.op->name).c_str(), a.body.c_str());
            }
            auto& ioc = self->shared_->ioc;
            // The connection's last reference goes back to the loop's thread with the answer.
            net::post(ioc,
                      [self = std::move(self), a = std::move(a)] { self->write(a, true, {}); });
        };
        if (waits) {
            shared_->workers->detach(std::move(job));
        } else {
            shared_->workers->post(std::move(job));
        }
    }

    void write(const Answer& a, bool api,
               const std::vector<std::pair<std::string, std::string>>& extra) {
        if (closed_) return;
        auto res = std::make_shared<bhttp::response<bhttp::string_body>>();
        res->version(11);
        res->result(static_cast<unsigned>(a.status));
        res->set(bhttp::field::server, "team");
        res->set(bhttp::field::content_type, a.content_type);
        security_headers(res->base(), api);
        for (const auto& [k, v] : extra) res->set(k, v);
        if (parser_ && parser_->get().method() != bhttp::verb::head) res->body() = a.body;
        res->keep_alive(keep_alive_ && !shared_->stopping);
        res->prepare_payload();
        if (parser_ && parser_->get().method() == bhttp::verb::head) {
            res->content_length(a.body.size());
        }
        stream_.expires_after(shared_->options.body_timeout);
        bhttp::async_write(
            stream_, *res,
            [self = this->shared_from_this(), res](beast::error_code ec, std::size_t) {
                if (!ec && self->linger_) return self->drain_then_close();
                if (ec || !res->keep_alive()) return self->close();
                self->read_header();
            });
    }

    void start_events(const EventsCall& e) {
        std::string head =
            "HTTP/1.1 200 OK\r\n"
            "Content-Type: text/event-stream\r\n"
            "Cache-Control: no-store\r\n"
            "Content-Security-Policy: default-src 'self'\r\n"
            "X-Content-Type-Options: nosniff\r\n"
            "Referrer-Policy: no-referrer\r\n"
            "X-Accel-Buffering: no\r\n"
            "Connection: close\r\n\r\n"
            "retry: 1000\n\n";
        stream_.expires_never();  // a stream lives until either side ends it
        only_team = e.team;
        catching_up = e.since.has_value();
        stream_id_ = shared_->hub.add(this->shared_from_this());
        send(std::make_shared<std::string>(std::move(head)));
        if (e.since) {
            last_sent = *e.since;
            shared_->feed->backlog(stream_id_, *e.since);
        }
        // Reading on detects the client going away (a read error), and nothing else is read.
        watch_close();
    }

    void watch_close() {
        auto buf = std::make_shared<std::array<char, 512>>();
        stream_.async_read_some(net::buffer(*buf), [self = this->shared_from_this(), buf](
                                                       beast::error_code ec, std::size_t) {
            if (ec) return self->close();
            self->watch_close();
        });
    }

    void write_next() {
        if (closed_ || queue_.empty()) return;
        net::async_write(stream_, net::buffer(*queue_.front()),
                         [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                             if (ec) return self->close();
                             self->queued_bytes_ -= self->queue_.front()->size();
                             self->queue_.pop_front();
                             self->write_next();
                         });
    }

    std::shared_ptr<Shared> shared_;
    Stream stream_;
    beast::flat_buffer buffer_;
    std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
    bool keep_alive_ = false;
    bool closed_ = false;
    bool overflowed_ = false;
    bool linger_ = false;  // after an answer to a request not read whole: drain, then close
    std::uint64_t stream_id_ = 0;
    std::deque<std::shared_ptr<const std::string>> queue_;
    std::size_t queued_bytes_ = 0;
};

using TcpStream = beast::tcp_stream;
using UnixStream = beast::basic_stream<net::local::stream_protocol>;

template <class Acceptor, class Stream>
void accept(std::shared_ptr<Shared> shared, Acceptor& acceptor) {
    acceptor.async_accept(
        [shared, &acceptor](beast::error_code ec, typename Stream::socket_type socket) {
            if (ec == net::error::operation_aborted || shared->stopping) return;
            if (!ec) {
                if (shared->connections >= kMaxConnections) {
                    beast::error_code ignored;
                    socket.close(ignored);
                } else {
                    if constexpr (std::is_same_v<Stream, TcpStream>) {
                        // Small writes (an event, an answer) go out at once, not after Nagle's wait
                        // for an ACK that the client may delay by 40 ms.
                        beast::error_code ignored;
                        socket.set_option(net::ip::tcp::no_delay(true), ignored);
                    }
                    std::make_shared<Connection<Stream>>(shared, std::move(socket))->start();
                }
            }
            accept<Acceptor, Stream>(shared, acceptor);
        });
}

[[noreturn]] void cannot_listen(const std::string& where, const beast::error_code& ec) {
    if (ec == net::error::address_in_use) {
        throw failed(where + " is in use (is another server running? `team serve --url` says)");
    }
    throw failed("cannot listen on " + where + ": " + ec.message());
}

}  // namespace

void serve(ServerOptions options) {
    auto shared = std::make_shared<Shared>(std::move(options));
    auto& ioc = shared->ioc;
    const auto& o = shared->options;

    std::optional<net::ip::tcp::acceptor> tcp;
    std::optional<net::local::stream_protocol::acceptor> local;
    beast::error_code ec;
    unsigned short port = o.port;
    if (o.tcp) {
        auto address = net::ip::make_address(o.listen_host, ec);
        if (ec) throw usage_error("not an IP address: " + quote(o.listen_host));
        net::ip::tcp::endpoint endpoint(address, o.port);
        std::string where = o.listen_host + ":" + std::to_string(o.port);
        tcp.emplace(ioc);
        tcp->open(endpoint.protocol(), ec);
        if (!ec) tcp->set_option(net::socket_base::reuse_address(true), ec);
        if (!ec) tcp->bind(endpoint, ec);
        if (!ec) tcp->listen(net::socket_base::max_listen_connections, ec);
        if (ec) cannot_listen(where, ec);
        port = tcp->local_endpoint().port();
    }
    if (o.unix_path) {
        std::string where = o.unix_path->string();
        {
            // A socket file left by a server that died is replaced; a live one is in use.
            net::local::stream_protocol::socket probe(ioc);
            probe.connect(net::local::stream_protocol::endpoint(where), ec);
            if (!ec) cannot_listen(where, net::error::address_in_use);
            std::filesystem::remove(*o.unix_path, ec);
        }
        local.emplace(ioc);
        net::local::stream_protocol::endpoint endpoint(where);
        local->open(endpoint.protocol(), ec);
        if (!ec) local->bind(endpoint, ec);
        if (!ec) local->listen(net::socket_base::max_listen_connections, ec);
        if (ec) cannot_listen(where, ec);
        std::filesystem::permissions(
            *o.unix_path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    }

    shared->workers = std::make_unique<Workers>(o.workers, shared->stop_fd);
    ops::Identity reader = o.identity;
    reader.home = o.home.string();
    shared->feed = std::make_unique<ActivityFeed>(
        reader, [shared_ptr = shared.get(), &ioc](std::uint64_t stream, std::vector<Event> events) {
            net::post(ioc, [shared_ptr, stream, events = std::move(events)] {
                shared_ptr->hub.deliver(stream, events);
            });
        });

    net::steady_timer keep_alive(ioc);
    std::function<void()> arm = [&] {
        keep_alive.expires_after(o.keep_alive);
        keep_alive.async_wait([&](beast::error_code e) {
            if (e || shared->stopping) return;
            shared->hub.keep_alive();
            arm();
        });
    };
    arm();

    net::signal_set signals(ioc, SIGINT, SIGTERM);
    signals.async_wait([&](beast::error_code, int) {
        shared->stopping = true;
        beast::error_code ignored;
        if (tcp) tcp->close(ignored);
        if (local) local->close(ignored);
        keep_alive.cancel();
        shared->hub.close_all();
        std::uint64_t one = 1;
        ssize_t n = ::write(shared->stop_fd, &one, sizeof one);  // waits under way end
        (void)n;
        ioc.stop();
    });

    if (tcp) accept<net::ip::tcp::acceptor, TcpStream>(shared, *tcp);
    if (local) accept<net::local::stream_protocol::acceptor, UnixStream>(shared, *local);
    if (o.ready) o.ready(port);
    ioc.run();

    shared->feed->stop();
    shared->workers->stop();
    if (o.unix_path) std::filesystem::remove(*o.unix_path, ec);
}

}  // namespace team::http
