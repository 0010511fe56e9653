// The Beast side of `team serve`: accepting, reading requests with their limits and timeouts,
// the checks every request passes (http/gate.hpp), answering, and writing the event streams
// (http/hub.hpp); operations run on the pool (http/pool.hpp). What a request means is
// http/api.cpp's; the verbs are the operations table's.
#include "http/server.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <csignal>
#include <cstdio>
#include <deque>
#include <functional>

#include "base/error.hpp"
#include "http/api.hpp"
#include "http/assets.hpp"
#include "http/events.hpp"
#include "http/gate.hpp"
#include "http/hub.hpp"
#include "http/pool.hpp"
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

// What every connection shares.
struct Shared {
    explicit Shared(ServerOptions o) : options(std::move(o)) {
        stop_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        wind_down_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        base = options.identity;
        base.via = "web";
    }
    ~Shared() {
        ::close(stop_fd);
        ::close(wind_down_fd);
    }

    // An operation's answer was written (or never will be): the last one of a stopping server
    // stops the loop.
    void answered() {
        if (--in_flight == 0 && stopping) ioc.stop();
    }

    // Owned here, so an operation's thread that outlives serve() still posts to a live (stopped)
    // loop rather than a destroyed one.
    net::io_context ioc{1};
    ServerOptions options;
    ops::Identity base;
    // Written at a second SIGTERM: every wait of every operation ends (base/cancel.hpp).
    int stop_fd = -1;
    // Written at SIGTERM: the waits the callers asked for end (answered as run out early); the
    // operations doing work finish and are answered; then the loop stops.
    int wind_down_fd = -1;
    std::atomic<int> in_flight{0};  // operations taken and not yet answered
    std::atomic<int> connections{0};
    Hub hub;
    std::unique_ptr<Pool> pool;
    std::unique_ptr<ActivityFeed> feed;
    bool stopping = false;  // the loop's thread only
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
            return answer_and_close(error_answer(413, usage_error("the body is over 1 MiB")));
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
            return answer_and_close(error_answer(413, usage_error("the body is over 1 MiB")));
        }
        if (ec == bhttp::error::end_of_stream || ec == beast::error::timeout ||
            ec == net::error::operation_aborted || ec == net::error::connection_reset ||
            ec == net::error::eof || ec == bhttp::error::partial_message) {
            return close();  // gone, or too slow: nothing to answer
        }
        answer_and_close(error_answer(400, usage_error("malformed request: " + ec.message())));
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
        const auto& o = shared_->options;
        auto header = [&](auto field) {
            auto v = req[field];
            return std::string_view(v.data(), v.size());
        };
        Verdict v =
            check_request({.method = method,
                           .target = target,
                           .host = header(bhttp::field::host),
                           .authorization = header(bhttp::field::authorization),
                           .cookie = header(bhttp::field::cookie),
                           .csrf = header("X-Team-CSRF")},
                          {.token = o.token, .listen_host = o.listen_host, .any_host = o.any_host});
        if (!v.pass) return write(v.answer, v.api, v.headers);
        if (!v.api) return serve_file(method, target.substr(0, target.find('?')));
        if (shared_->stopping) {
            keep_alive_ = false;
            return write(error_answer(503, refused("the server is stopping")), true, {});
        }

        Plan p = plan(method, target, req.body(), header("Last-Event-ID"), shared_->base);
        if (auto* a = std::get_if<Answer>(&p)) return write(*a, true, {});
        if (auto* e = std::get_if<EventsCall>(&p)) return start_events(*e);
        run_operation(std::move(std::get<OperationCall>(p)));
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
        ++shared_->in_flight;
        auto job = [self = this->shared_from_this(), call = std::move(call), waits]() mutable {
            Answer a = run(call, !waits);
            // Once the answer is written: a stopping server waits for it (Shared::answered).
            a.after_send = [after = std::move(a.after_send), shared = self->shared_] {
                if (after) after();
                shared->answered();
            };
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
        if (!waits) return shared_->pool->post(std::move(job));
        if (!shared_->pool->post_waiting(std::move(job))) {
            --shared_->in_flight;  // not taken; nothing else is stopping on it before we answer
            write(error_answer(503, refused("too many waiting requests at once (" +
                                            std::to_string(shared_->pool->waiters()) +
                                            "); try again when one has ended")),
                  true, {{"Retry-After", "1"}});
        }
    }

    void write(const Answer& a, bool api,
               const std::vector<std::pair<std::string, std::string>>& extra) {
        if (closed_) {
            if (a.after_send) a.after_send();  // nobody to answer: what waited goes now
            return;
        }
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
        bhttp::async_write(stream_, *res,
                           [self = this->shared_from_this(), res, after = a.after_send](
                               beast::error_code ec, std::size_t) {
                               if (after)
                                   after();  // sent (or never will be): what waited for it goes
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

    shared->pool =
        std::make_unique<Pool>(o.workers, o.waiters, shared->stop_fd, shared->wind_down_fd);
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

    // SIGTERM (or SIGINT): no new request is taken, the event streams close, the waits the
    // callers asked for end at once (answered as run out early), and the operations doing work
    // (a kill's grace) finish and are answered; the loop stops with the last answer. A second
    // signal ends every wait and stops at once.
    auto signal_fd = [](int fd) {
        std::uint64_t one = 1;
        ssize_t n = ::write(fd, &one, sizeof one);
        (void)n;  // full: readable already
    };
    net::signal_set signals(ioc, SIGINT, SIGTERM);
    std::function<void(beast::error_code, int)> on_signal = [&](beast::error_code e, int) {
        if (e) return;
        if (shared->stopping) {
            signal_fd(shared->stop_fd);
            ioc.stop();
            return;
        }
        shared->stopping = true;
        beast::error_code ignored;
        if (tcp) tcp->close(ignored);
        if (local) local->close(ignored);
        keep_alive.cancel();
        shared->hub.close_all();
        signal_fd(shared->wind_down_fd);
        if (shared->in_flight == 0) ioc.stop();
        signals.async_wait(on_signal);
    };
    signals.async_wait(on_signal);

    if (tcp) accept<net::ip::tcp::acceptor, TcpStream>(shared, *tcp);
    if (local) accept<net::local::stream_protocol::acceptor, UnixStream>(shared, *local);
    if (o.ready) o.ready(port);
    ioc.run();

    shared->feed->stop();
    shared->pool->stop();
    if (o.unix_path) std::filesystem::remove(*o.unix_path, ec);
}

}  // namespace team::http
