// Test support: a tiny blocking HTTP/1.1 client over plain sockets (one request per connection),
// an event-stream reader, and `team serve` started on a free port of a test's own home.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/helpers.hpp"
#include "tests/support/team_home.hpp"

namespace team::test {

struct HttpResponse {
    int status = 0;  // 0: no answer (the connection was closed or timed out)
    std::map<std::string, std::string> headers;  // names in lower case
    std::string body;
    nlohmann::json json() const {
        auto doc = nlohmann::json::parse(body, nullptr, false);
        INFO("body: " << body);
        REQUIRE_FALSE(doc.is_discarded());
        return doc;
    }
    std::string header(const std::string& name) const {
        auto it = headers.find(name);
        return it == headers.end() ? "" : it->second;
    }
};

using Headers = std::vector<std::pair<std::string, std::string>>;

// A connected socket to 127.0.0.1:port; -1 when refused.
inline int connect_to(int port) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

inline bool send_all(int fd, const std::string& data) {
    std::size_t sent = 0;
    while (sent < data.size()) {
        ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) return false;
        sent += static_cast<std::size_t>(n);
    }
    return true;
}

// Reads what comes until `enough` says so, the peer closes, or `ms` pass. Returns what was read.
inline std::string read_until(int fd, const std::function<bool(const std::string&)>& enough, int ms,
                              std::string already = "") {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    std::string data = std::move(already);
    char buf[65536];
    while (!enough(data)) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline - std::chrono::steady_clock::now())
                        .count();
        if (left <= 0) break;
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left)) <= 0) break;
        ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        data.append(buf, static_cast<std::size_t>(n));
    }
    return data;
}

// Parses a whole response (head and a Content-Length body) from `raw`; status 0 if incomplete.
inline HttpResponse parse_response(const std::string& raw) {
    HttpResponse r;
    auto end = raw.find("\r\n\r\n");
    if (end == std::string::npos || raw.compare(0, 9, "HTTP/1.1 ") != 0) return r;
    std::size_t line_end = raw.find("\r\n");
    r.status = std::stoi(raw.substr(9, 3));
    std::size_t pos = line_end + 2;
    while (pos < end) {
        auto next = raw.find("\r\n", pos);
        auto line = raw.substr(pos, next - pos);
        auto colon = line.find(':');
        if (colon != std::string::npos) {
            std::string name = line.substr(0, colon);
            for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            auto value = line.substr(colon + 1);
            value.erase(0, value.find_first_not_of(' '));
            r.headers[name] = value;
        }
        pos = next + 2;
    }
    r.body = raw.substr(end + 4);
    if (auto cl = r.headers.find("content-length"); cl != r.headers.end()) {
        auto length = std::stoul(cl->second);
        if (r.body.size() < length) return HttpResponse{};  // cut short
        r.body.resize(length);
    }
    return r;
}

inline bool response_complete(const std::string& raw) {
    return parse_response(raw).status != 0;
}

// A connected socket to the unix socket at `path`; -1 when refused.
inline int connect_unix(const std::string& path) {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

// Sends `raw` as is on the connected socket `fd`, reads one response and closes it.
inline HttpResponse exchange(int fd, const std::string& raw, int ms = bound(10000)) {
    if (fd < 0) return {};
    send_all(fd, raw);
    auto data = read_until(fd, response_complete, ms);
    ::close(fd);
    return parse_response(data);
}

// Sends `raw` as is to 127.0.0.1:port and reads one response.
inline HttpResponse raw_request(int port, const std::string& raw, int ms = bound(10000)) {
    return exchange(connect_to(port), raw, ms);
}

inline std::string request_text(const std::string& method, const std::string& target,
                                const Headers& headers, const std::string& body, int port) {
    std::string text = method + " " + target + " HTTP/1.1\r\n";
    bool host = false;
    for (const auto& [k, v] : headers) {
        text += k + ": " + v + "\r\n";
        if (k == "Host") host = true;
    }
    if (!host) text += "Host: 127.0.0.1:" + std::to_string(port) + "\r\n";
    if (!body.empty() || method != "GET") {
        text += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    }
    text += "Connection: close\r\n\r\n" + body;
    return text;
}

// One event of an event stream.
struct SseEvent {
    std::string id, type, data;
};

// An open GET /api/events.
class EventStream {
  public:
    EventStream(int port, const std::string& target, const Headers& headers) {
        fd_ = connect_to(port);
        REQUIRE(fd_ >= 0);
        send_all(fd_, request_text("GET", target, headers, "", port));
        buffer_ = read_until(
            fd_, [](const std::string& d) { return d.find("\r\n\r\n") != std::string::npos; },
            bound(10000));
        auto end = buffer_.find("\r\n\r\n");
        REQUIRE(end != std::string::npos);
        head_ = buffer_.substr(0, end);
        buffer_.erase(0, end + 4);
    }
    ~EventStream() {
        if (fd_ >= 0) ::close(fd_);
    }
    EventStream(const EventStream&) = delete;
    EventStream& operator=(const EventStream&) = delete;

    const std::string& head() const { return head_; }

    // The next event (comments and retry lines skipped), or none within `ms`.
    std::optional<SseEvent> next(int ms = bound(10000)) {
        auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
        for (;;) {
            auto end = buffer_.find("\n\n");
            while (end != std::string::npos) {
                auto block = buffer_.substr(0, end);
                buffer_.erase(0, end + 2);
                SseEvent e;
                std::size_t pos = 0;
                while (pos <= block.size()) {
                    auto nl = block.find('\n', pos);
                    if (nl == std::string::npos) nl = block.size();
                    auto line = block.substr(pos, nl - pos);
                    if (line.rfind("id: ", 0) == 0) e.id = line.substr(4);
                    if (line.rfind("event: ", 0) == 0) e.type = line.substr(7);
                    if (line.rfind("data: ", 0) == 0) e.data = line.substr(6);
                    pos = nl + 1;
                }
                // An unnamed event (team serve's): its type is the data's, as the page reads it.
                if (e.type.empty() && !e.data.empty()) {
                    auto row = nlohmann::json::parse(e.data, nullptr, false);
                    if (row.is_object() && row["type"].is_string()) {
                        e.type = row["type"].get<std::string>();
                    }
                }
                if (!e.id.empty()) return e;
                end = buffer_.find("\n\n");
            }
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                            deadline - std::chrono::steady_clock::now())
                            .count();
            if (left <= 0) return std::nullopt;
            auto more = read_until(
                fd_, [](const std::string& d) { return !d.empty(); }, static_cast<int>(left));
            if (more.empty()) return std::nullopt;
            buffer_ += more;
        }
    }

    // Whether the server closed the stream within `ms`.
    bool closed_within(int ms) {
        pollfd p{fd_, POLLIN, 0};
        auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
        char buf[4096];
        while (std::chrono::steady_clock::now() < deadline) {
            if (::poll(&p, 1, 50) > 0) {
                if (::recv(fd_, buf, sizeof buf, 0) <= 0) return true;
            }
        }
        return false;
    }

  private:
    int fd_ = -1;
    std::string head_;
    std::string buffer_;
};

// `team serve --listen 127.0.0.1:0` on the home of `home`, its port and token read once it
// listens (from the record `team serve --url` reads, and the token file).
class Serve {
  public:
    explicit Serve(const TeamHome& home, std::vector<std::string> extra = {},
                   const TeamHome::Env& env = {})
        : home_(home), child_(start(home, std::move(extra), env)) {
        auto record = home.env.home() / "serve.json";
        bool up = eventually([&] { return std::filesystem::exists(record); }, bound(10000));
        REQUIRE(up);
        auto doc = nlohmann::json::parse(slurp(record));
        std::string url = doc["url"];
        port_ = std::stoi(url.substr(url.rfind(':') + 1));
        token_ = slurp(home.env.home() / "serve.token");
        while (!token_.empty() && token_.back() == '\n') token_.pop_back();
    }

    int port() const { return port_; }
    const std::string& token() const { return token_; }
    Child& child() { return child_; }

    Headers auth(Headers more = {}) const {
        more.emplace_back("Authorization", "Bearer " + token_);
        return more;
    }

    HttpResponse request(const std::string& method, const std::string& target,
                         const std::string& body = "", Headers headers = {},
                         bool authorized = true) const {
        if (authorized) headers = auth(std::move(headers));
        if (method != "GET") headers.emplace_back("X-Team-CSRF", "1");
        if (!body.empty()) headers.emplace_back("Content-Type", "application/json");
        return raw_request(port_, request_text(method, target, headers, body, port_));
    }
    HttpResponse get(const std::string& target) const { return request("GET", target); }
    HttpResponse post(const std::string& target, const nlohmann::json& body) const {
        return request("POST", target, body.dump());
    }

    // SIGTERM, then the time until it exited, in ms.
    double terminate() {
        REQUIRE_FALSE(stopped_);
        stopped_ = true;
        auto start = std::chrono::steady_clock::now();
        ::kill(child_.pid(), SIGTERM);
        auto r = child_.wait();
        CHECK(r.exit_code == 0);
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count();
    }

    // Ends the server (if it still runs), before a test proves nothing of it is left.
    void stop() {
        if (!stopped_) terminate();
    }

  private:
    static Child start(const TeamHome& home, std::vector<std::string> extra,
                       const TeamHome::Env& env) {
        std::vector<std::string> args{"serve", "--listen", "127.0.0.1:0"};
        args.insert(args.end(), extra.begin(), extra.end());
        return home.env.start(args, home.extra(env));
    }

    const TeamHome& home_;
    Child child_;
    int port_ = 0;
    std::string token_;
    bool stopped_ = false;
};

}  // namespace team::test
