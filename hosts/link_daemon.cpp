// The link's body (hosts/link_daemon.hpp): its ssh started and greeted, the requests of its
// clients forwarded under numbers of its own and answered as the replies come, and the listening
// loop that ends when idle, stopped, or its socket is gone.
#include "hosts/link_daemon.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "base/error.hpp"
#include "hosts/link_socket.hpp"
#include "proc/detach.hpp"

namespace team::hosts {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

namespace {

// The far side's hello, after ssh has connected: its team starts and opens the store.
constexpr auto kHelloWait = std::chrono::seconds(kSshConnectTimeoutS + 8);
// A link whose host has had no request for this long ends (its ssh with it).
constexpr auto kDefaultIdle = std::chrono::seconds(300);

// The last two lines of the ssh's log, on one line: why it could not connect or ended.
std::string last_lines(const fs::path& log) {
    std::string text;
    FILE* f = std::fopen(log.c_str(), "r");
    if (!f) return "";
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
        text.append(buf, n);
        if (text.size() > 8192) text.erase(0, text.size() - 4096);
    }
    std::fclose(f);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    // The last two lines: ssh's own reason ("Permission denied (publickey).", "Connection timed
    // out") is the last.
    auto nl = text.rfind('\n');
    if (nl != std::string::npos && nl > 0) {
        auto before = text.rfind('\n', nl - 1);
        text = text.substr(before == std::string::npos ? 0 : before + 1);
    }
    std::replace(text.begin(), text.end(), '\n', ' ');
    std::replace(text.begin(), text.end(), '\r', ' ');
    return text;
}

// The link's state: its ssh, the requests in flight and their replies.
class Link {
  public:
    Link(fs::path home, LinkTarget target, std::string version, std::string store_url)
        : home_(std::move(home)),
          target_(std::move(target)),
          version_(std::move(version)),
          store_url_(std::move(store_url)),
          log_(hosts_dir(home_) / (target_.name + ".log")) {}

    ~Link() { shut(); }

    // One client's request, answered: its line forwarded under a number of ours, the reply
    // given back with the client's number.
    std::string serve(const std::string& line) {
        touch();
        auto request = nlohmann::json::parse(line, nullptr, false);
        if (request.is_discarded() || !request.is_object()) {
            return R"({"error":"the request is not a JSON object","code":"usage","exit":2})";
        }
        std::unique_lock lock(m_);
        if (!ensure_up(lock)) return nlohmann::json{{"unreachable", down_reason_}}.dump();
        auto id = ++next_id_;
        request["id"] = id;
        Pending pending;
        pending_[id] = &pending;
        lock.unlock();
        bool sent = send(request.dump() + "\n");
        lock.lock();
        if (!sent && !pending.done) {
            pending_.erase(id);
            return nlohmann::json{{"unreachable", "the ssh to host " + quote(target_.name) +
                                                      " closed: " + down_reason_}}
                .dump();
        }
        cv_.wait(lock, [&] { return pending.done; });
        last_use_ = SteadyClock::now();
        if (!pending.reply) return nlohmann::json{{"unreachable", pending.error}}.dump();
        return pending.reply->dump();
    }

    bool idle(std::chrono::seconds limit) {
        std::lock_guard lock(m_);
        return pending_.empty() && SteadyClock::now() - last_use_ > limit;
    }

    void shut() {
        std::unique_lock lock(m_);
        if (pid_ > 0) {
            ::kill(pid_, SIGTERM);
            cv_.wait_for(lock, 3s, [&] { return state_ == State::down; });
        }
        lock.unlock();
        if (reader_.joinable()) reader_.join();
    }

  private:
    enum class State { down, connecting, up };
    struct Pending {
        bool done = false;
        std::optional<nlohmann::json> reply;
        std::string error;
    };

    void touch() {
        std::lock_guard lock(m_);
        last_use_ = SteadyClock::now();
    }

    bool send(const std::string& data) {
        std::lock_guard lock(write_m_);
        if (stdin_fd_ < 0) return false;
        const char* p = data.data();
        size_t left = data.size();
        while (left > 0) {
            ssize_t n = ::write(stdin_fd_, p, left);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return false;
            p += n;
            left -= static_cast<size_t>(n);
        }
        return true;
    }

    // Under the lock: the ssh is up, or connecting by another client (waited for), or started
    // here and said hello. False (down_reason_ says why) when the host cannot be reached or
    // refused.
    bool ensure_up(std::unique_lock<std::mutex>& lock) {
        cv_.wait(lock, [&] { return state_ != State::connecting; });
        if (state_ == State::up) return true;
        state_ = State::connecting;
        lock.unlock();
        std::string reason;
        bool up = connect(reason);
        lock.lock();
        state_ = up ? State::up : State::down;
        if (!up) down_reason_ = reason;
        cv_.notify_all();
        return up;
    }

    // A stale ControlMaster socket (its master killed) is noticed and removed, so that the new
    // ssh becomes the master: `ssh -O check` answers at once on the machine itself.
    void replace_stale_control_socket() {
        auto ctl = hosts_dir(home_) / (target_.name + ".ctl");
        std::error_code ec;
        if (!fs::exists(fs::symlink_status(ctl, ec))) return;
        auto argv = ssh_command(home_, target_, {});
        argv.pop_back();  // the remote command
        argv.insert(argv.end() - 2, {"-O", "check"});
        pid_t pid = ::fork();
        if (pid == 0) {
            int null_fd = ::open("/dev/null", O_RDWR);
            ::dup2(null_fd, 0);
            ::dup2(null_fd, 1);
            ::dup2(null_fd, 2);
            std::vector<char*> args;
            for (auto& a : argv) args.push_back(a.data());
            args.push_back(nullptr);
            ::execv(args[0], args.data());
            ::_exit(127);
        }
        int status = 0;
        if (pid > 0) ::waitpid(pid, &status, 0);
        if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) fs::remove(ctl, ec);
    }

    bool connect(std::string& reason) {
        if (reader_.joinable()) reader_.join();  // the last ssh's reader, ended
        replace_stale_control_socket();
        auto argv = ssh_command(home_, target_, {target_.team_path, "__channel"});
        int in[2], out[2];
        if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) {
            reason = std::string("pipe: ") + std::strerror(errno);
            return false;
        }
        int log_fd = ::open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        pid_t pid = ::fork();
        if (pid == 0) {
            ::dup2(in[0], 0);
            ::dup2(out[1], 1);
            if (log_fd >= 0) ::dup2(log_fd, 2);
            ::syscall(SYS_close_range, 3U, ~0U, 0);
            std::vector<char*> args;
            for (auto& a : argv) args.push_back(a.data());
            args.push_back(nullptr);
            ::execv(args[0], args.data());
            ::_exit(127);
        }
        ::close(in[0]);
        ::close(out[1]);
        if (log_fd >= 0) ::close(log_fd);
        if (pid < 0) {
            ::close(in[1]);
            ::close(out[0]);
            reason = std::string("fork: ") + std::strerror(errno);
            return false;
        }
        {
            std::lock_guard lock(write_m_);
            stdin_fd_ = in[1];
        }
        {
            std::lock_guard lock(m_);
            pid_ = pid;
        }
        // The hello, answered before any request: the far team's version, home and schema.
        std::string buffer, line;
        nlohmann::json hello = {{"id", 0},
                                {"hello", {{"version", version_}, {"store", store_url_}}}};
        bool answered = send(hello.dump() + "\n") &&
                        read_line(out[0], buffer, line, SteadyClock::now() + kHelloWait);
        auto reply = answered ? nlohmann::json::parse(line, nullptr, false) : nlohmann::json();
        bool ok = reply.is_object() && reply.contains("hello") && !reply.contains("error");
        if (ok && reply["hello"].value("version", "") != version_) {
            reason = "host " + quote(target_.name) + " runs team " +
                     reply["hello"].value("version", "?") + ", this is team " + version_ +
                     ": refused (install the same version there)";
            ok = false;
        } else if (!ok && reply.is_object() && reply.contains("error")) {
            reason =
                "host " + quote(target_.name) + " refused: " + reply["error"].get<std::string>();
        } else if (!ok) {
            auto tail = last_lines(log_);
            reason = "cannot reach host " + quote(target_.name) + " (" + target_.ssh +
                     ") over ssh" + (tail.empty() ? std::string() : ": " + tail);
        }
        if (!ok) {
            end_ssh(out[0]);
            return false;
        }
        reader_ = std::thread([this, fd = out[0], rest = buffer]() mutable { read(fd, rest); });
        return true;
    }

    // Ends the ssh that did not say hello, and reaps it.
    void end_ssh(int out_fd) {
        {
            std::lock_guard lock(write_m_);
            if (stdin_fd_ >= 0) ::close(stdin_fd_);
            stdin_fd_ = -1;
        }
        ::close(out_fd);
        pid_t pid;
        {
            std::lock_guard lock(m_);
            pid = pid_;
            pid_ = -1;
        }
        if (pid > 0) {
            ::kill(pid, SIGTERM);
            ::waitpid(pid, nullptr, 0);
        }
    }

    // The ssh's replies, to the requests waiting for them; at its end every waiting request is
    // answered "unreachable".
    void read(int fd, std::string buffer) {
        std::string line;
        while (read_line(fd, buffer, line, SteadyClock::time_point::max())) {
            auto reply = nlohmann::json::parse(line, nullptr, false);
            if (!reply.is_object() || !reply.contains("id") || !reply["id"].is_number_integer()) {
                continue;
            }
            std::lock_guard lock(m_);
            auto it = pending_.find(reply["id"].get<std::int64_t>());
            if (it == pending_.end()) continue;
            reply.erase("id");
            it->second->reply = std::move(reply);
            it->second->done = true;
            pending_.erase(it);
            cv_.notify_all();
        }
        end_ssh(fd);
        auto tail = last_lines(log_);
        std::lock_guard lock(m_);
        down_reason_ = "the ssh to host " + quote(target_.name) + " (" + target_.ssh + ") ended" +
                       (tail.empty() ? std::string() : ": " + tail);
        for (auto& [id, pending] : pending_) {
            pending->error = down_reason_;
            pending->done = true;
        }
        pending_.clear();
        state_ = State::down;
        cv_.notify_all();
    }

    fs::path home_;
    LinkTarget target_;
    std::string version_;
    std::string store_url_;
    fs::path log_;

    std::mutex m_;
    std::condition_variable cv_;
    State state_ = State::down;
    std::string down_reason_;
    pid_t pid_ = -1;
    std::int64_t next_id_ = 0;
    std::map<std::int64_t, Pending*> pending_;
    SteadyClock::time_point last_use_ = SteadyClock::now();
    std::thread reader_;

    std::mutex write_m_;
    int stdin_fd_ = -1;
};

}  // namespace

int run_link(const fs::path& home, const LinkTarget& target, const std::string& version,
             const std::string& store_url, int ready_fd) {
    ::signal(SIGPIPE, SIG_IGN);
    std::error_code ec;
    fs::create_directories(hosts_dir(home), ec);
    ::chmod(hosts_dir(home).c_str(), 0700);
    auto lock_path = hosts_dir(home) / (target.name + ".lock");
    int lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    auto sock = socket_path(home, target.name);
    if (lock_fd < 0) {
        proc::answer_starter(ready_fd, "err " + lock_path.string() + ": " + std::strerror(errno));
        return 1;
    }
    if (::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
        // Another link holds it. One that listens: the starter connects to that one. One that
        // is ending (its socket removed, `host remove`): its lock is ours once it has ended.
        if (int fd = connect_unix(sock); fd >= 0) {
            ::close(fd);
            proc::answer_starter(ready_fd, "ok");
            return 0;
        }
        auto until = SteadyClock::now() + 5s;
        while (::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
            if (SteadyClock::now() > until) {
                proc::answer_starter(ready_fd, "err another link to " + target.name +
                                                   " holds its lock and does not answer");
                return 1;
            }
            std::this_thread::sleep_for(20ms);
        }
    }
    fs::remove(sock, ec);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (sock.string().size() >= sizeof addr.sun_path) {
        proc::answer_starter(ready_fd, "err the socket path " + sock.string() + " is too long");
        return 1;
    }
    std::strcpy(addr.sun_path, sock.c_str());
    int listen_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listen_fd < 0 || ::bind(listen_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listen_fd, 128) != 0) {
        proc::answer_starter(ready_fd, std::string("err listen: ") + std::strerror(errno));
        return 1;
    }
    auto idle = kDefaultIdle;
    if (const char* v = std::getenv("TEAM_LINK_IDLE_S"); v && *v) {
        idle = std::chrono::seconds(std::max(1, std::atoi(v)));
    }
    Link link(home, target, version, store_url);
    proc::answer_starter(ready_fd, "ok");
    std::atomic<bool> stop{false};
    std::atomic<int> clients{0};
    std::mutex done_m;
    std::condition_variable done_cv;
    while (!stop) {
        pollfd p{listen_fd, POLLIN, 0};
        int r = ::poll(&p, 1, 1000);
        if (r < 0 && errno != EINTR) break;
        // Its socket removed (the home deleted, or `host remove`): the link ends.
        if (!fs::exists(fs::symlink_status(sock, ec))) break;
        if (r <= 0) {
            if (clients == 0 && link.idle(std::chrono::duration_cast<std::chrono::seconds>(idle))) {
                break;
            }
            continue;
        }
        int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) continue;
        ++clients;
        std::thread([&, fd] {
            std::string buffer, line;
            if (read_line(fd, buffer, line, SteadyClock::now() + 10s)) {
                if (line == R"({"stop":true})") {
                    // No new client from now on: the next command starts a new link.
                    std::error_code ignored;
                    fs::remove(sock, ignored);
                    stop = true;
                    ::shutdown(listen_fd, SHUT_RDWR);  // wakes the loop's poll at once
                    proc::write_all(fd, "{\"stopped\":true}\n");
                } else {
                    proc::write_all(fd, link.serve(line) + "\n");
                }
            }
            ::close(fd);
            std::lock_guard lock(done_m);
            --clients;
            done_cv.notify_all();
        }).detach();
    }
    ::close(listen_fd);
    fs::remove(sock, ec);
    link.shut();
    // The clients' threads answer from the link's state: they end before it does.
    std::unique_lock lock(done_m);
    if (!done_cv.wait_for(lock, 10s, [&] { return clients == 0; })) {
        std::_Exit(0);  // a client's thread still holds the link: leave without unwinding it
    }
    return 0;
}

}  // namespace team::hosts
