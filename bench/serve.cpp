// Figures of `team serve` (SPEC 13): a read through the API while 50 event streams are open, and
// the time from a commit by another `team` process to its event at a stream's reader.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/harness.hpp"

namespace bench {

namespace {

// The server of a figure and the streams it keeps open.
struct Served {
    pid_t pid = -1;
    int port = 0;
    std::string token;
    std::vector<int> streams;
    std::string pending;  // what the first stream has read and not yet parsed
};
std::unique_ptr<Served> g_served;

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

int connect_to(int port) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        throw CommandFailed("cannot connect to team serve");
    }
    return fd;
}

void send_all(int fd, const std::string& data) {
    if (::send(fd, data.data(), data.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(data.size())) {
        throw CommandFailed("send to team serve failed");
    }
}

std::string get_text(const std::string& target) {
    return "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " +
           g_served->token + "\r\nConnection: close\r\n\r\n";
}

// Reads into `data` until it holds `marker` (empty: until the peer closes); throws after 10 s.
void read_for(int fd, std::string& data, const std::string& marker) {
    auto deadline = now_ms() + 10000;
    char buf[65536];
    while (marker.empty() || data.find(marker) == std::string::npos) {
        pollfd p{fd, POLLIN, 0};
        int left = static_cast<int>(deadline - now_ms());
        if (left <= 0 || ::poll(&p, 1, left) <= 0) throw CommandFailed("team serve: no answer");
        ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) {
            if (marker.empty()) return;
            throw CommandFailed("team serve closed the connection");
        }
        data.append(buf, static_cast<std::size_t>(n));
    }
}

// Starts `team serve` on a free port and opens `streams` event streams.
void start_server(Env& env, int streams) {
    run_checked(env, {env.team, "create", "bench"});
    run_checked(env, {env.team, "--team", "bench", "spawn", "a-000", "--", "sleep", "1000"});
    g_served = std::make_unique<Served>();
    g_served->pid = spawn({env.team, "serve", "--listen", "127.0.0.1:0"}, env, dev_null(),
                          dev_null(), dev_null());
    auto deadline = now_ms() + 10000;
    std::string record;
    while ((record = slurp(env.home + "/serve.json")).empty()) {
        if (now_ms() > deadline) throw CommandFailed("team serve did not start");
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::string url = nlohmann::json::parse(record).at("url");
    g_served->port = std::stoi(url.substr(url.rfind(':') + 1));
    g_served->token = slurp(env.home + "/serve.token");
    g_served->token.resize(64);
    for (int i = 0; i < streams; ++i) {
        int fd = connect_to(g_served->port);
        send_all(fd, get_text("/api/events"));
        std::string head;
        read_for(fd, head, "\r\n\r\n");
        if (i == 0) g_served->pending = head.substr(head.find("\r\n\r\n") + 4);
        g_served->streams.push_back(fd);
    }
}

void stop_server(Env& env) {
    if (!g_served) return;
    for (int fd : g_served->streams) ::close(fd);
    ::kill(g_served->pid, SIGTERM);
    wait_for(g_served->pid);
    g_served.reset();
    kill_tmux_server(env);
}

// One GET on a new connection, in ms.
double sample_get(const std::string& target) {
    double start = now_ms();
    int fd = connect_to(g_served->port);
    send_all(fd, get_text(target));
    std::string data;
    read_for(fd, data, "");  // to the end: Connection: close
    ::close(fd);
    double took = now_ms() - start;
    if (data.compare(0, 12, "HTTP/1.1 200") != 0) throw CommandFailed("GET failed: " + data);
    return took;
}

double wall_ms() {
    return std::chrono::duration<double, std::milli>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// Milliseconds since the epoch of an ISO-8601 UTC time with milliseconds.
double epoch_ms(const std::string& iso) {
    std::tm tm{};
    strptime(iso.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
    double ms = static_cast<double>(timegm(&tm)) * 1000.0;
    auto dot = iso.find('.');
    if (dot != std::string::npos) ms += std::stod(iso.substr(dot + 1, 3));
    return ms;
}

// `team send` from another process; the time from its commit (the entry's `at`, taken inside
// the write transaction) to the event's arrival at the first stream.
double sample_event(Env& env) {
    run_checked(env, {env.team, "--team", "bench", "send", "leader", "ping"});
    int fd = g_served->streams.front();
    std::string& data = g_served->pending;
    for (;;) {
        read_for(fd, data, "\n\n");
        double arrived = wall_ms();
        auto end = data.find("\n\n");
        std::string block = data.substr(0, end);
        data.erase(0, end + 2);
        auto at = block.find("\ndata: ");
        if (at == std::string::npos) continue;  // retry:, keep-alive
        auto row = nlohmann::json::parse(block.substr(at + 7));
        if (row.at("type") != "message_sent") continue;
        return arrived - epoch_ms(row.at("at"));
    }
}

}  // namespace

std::vector<Figure> serve_figures(const std::string& /*team*/) {
    std::vector<Figure> list;
    // GET /api/teams/bench/agents (one agent, checked against tmux and the OS) through the
    // server while 50 event streams are open, on a new connection each time.
    // Goal: median <= 1 ms.
    list.push_back({"serve: GET /api/teams/T/agents, 50 event streams open", 1.0,
                    [](Env& env) { start_server(env, 50); },
                    [](Env&) { return sample_get("/api/teams/bench/agents"); }, stop_server});
    // A `team send` by another process, from its commit to its event at a stream's reader
    // (the wall clock, millisecond resolution). Goal: median <= 20 ms.
    list.push_back({"serve: commit by a team process -> event at a stream", 20.0,
                    [](Env& env) { start_server(env, 50); }, sample_event, stop_server});
    return list;
}

}  // namespace bench
