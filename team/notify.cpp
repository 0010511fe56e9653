#include "team/notify.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <iterator>
#include <optional>
#include <vector>

#include "base/duration.hpp"
#include "base/programs.hpp"
#include "base/time.hpp"
#include "proc/detach.hpp"
#include "proc/pidfd.hpp"
#include "proc/signals.hpp"
#include "proc/supervisor.hpp"
#include "state/activity.hpp"
#include "state/teams.hpp"
#include "team/config.hpp"

namespace team {

using nlohmann::json;

void notify_after_commit(Store& store, const json& event) {
    try {
        auto command = config_value(store, std::nullopt, "notify");
        if (!command) return;
        auto bound = config_duration(store, std::nullopt, "notify-timeout");
        std::filesystem::path home = store.home();
        store.after_commit([home, command = *command, event, bound] {
            start_notify(home, command, event, bound);
        });
    } catch (const std::exception&) {
        // no notify: the event is in the log and the inbox all the same
    }
}

void start_notify(const std::filesystem::path& home, const std::string& command, const json& event,
                  std::chrono::milliseconds bound) {
    try {
        std::string binary = own_binary();
        std::string text = event.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
        std::vector<std::string> argv{binary,        "__notify", "--home",
                                      home.string(), command,    std::to_string(bound.count())};
        std::vector<char*> args;
        for (auto& a : argv) args.push_back(a.data());
        args.push_back(nullptr);
        // The runner's environment: ours without the agent's identity, so that nothing it
        // starts counts as the agent's (a kill's sweep finds an agent's processes by it).
        auto env = proc::merged_environment({}, {"TEAM_"});
        std::vector<char*> envp;
        for (auto& e : env) envp.push_back(e.data());
        envp.push_back(nullptr);
        int in[2];
        if (::pipe2(in, O_CLOEXEC) != 0) return;
        pid_t child = ::fork();
        if (child < 0) {
            ::close(in[0]);
            ::close(in[1]);
            return;
        }
        if (child == 0) {
            // The middle process: a session of its own, then the runner, then gone, so that
            // the runner is nobody's child here.
            ::setsid();
            pid_t runner = ::fork();
            if (runner == 0) {
                ::dup2(in[0], 0);
                int null_fd = ::open("/dev/null", O_RDWR);
                ::dup2(null_fd, 1);
                ::dup2(null_fd, 2);
                ::syscall(SYS_close_range, 3U, ~0U, 0);
                sigset_t none;
                sigemptyset(&none);
                ::sigprocmask(SIG_SETMASK, &none, nullptr);
                // This very program, even when its file was replaced since it started.
                ::execve("/proc/self/exe", args.data(), envp.data());
                ::_exit(127);
            }
            ::_exit(0);
        }
        ::close(in[0]);
        // An event is a few hundred bytes: the pipe takes it whole, and the runner reads it.
        proc::write_all(in[1], text);
        ::close(in[1]);
        int status = 0;
        while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
        }
    } catch (const std::exception&) {
    }
}

namespace {

void log_failure(const std::filesystem::path& home, const json& event, json details) {
    try {
        Store store(home);
        SystemClock clock;
        std::optional<std::int64_t> team_id;
        if (event.is_object() && event.contains("team") && event["team"].is_string()) {
            if (auto team = find_team(store, event["team"].get<std::string>())) team_id = team->id;
        }
        details["event"] = event.is_object() ? event.value("event", "") : "";
        if (event.is_object() && event.contains("agentId")) details["agentId"] = event["agentId"];
        store.write([&] {
            append_activity(store.db(), team_id, clock.now(), "team", "notify_failed", details);
        });
    } catch (const std::exception& e) {
        std::cerr << "team: notify failed and could not be logged: " << e.what() << "\n";
    }
}

}  // namespace

int run_notify(const std::filesystem::path& home, const std::string& command,
               std::chrono::milliseconds bound) {
    std::string text{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
    json event = json::parse(text, nullptr, false);
    int in[2], err[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
        log_failure(home, event, {{"reason", std::string("pipe: ") + std::strerror(errno)}});
        return 1;
    }
    pid_t pid = ::fork();
    if (pid < 0) {
        log_failure(home, event, {{"reason", std::string("fork: ") + std::strerror(errno)}});
        return 1;
    }
    if (pid == 0) {
        ::setpgid(0, 0);
        ::dup2(in[0], 0);
        ::dup2(err[1], 2);
        int null_fd = ::open("/dev/null", O_RDWR);
        ::dup2(null_fd, 1);
        ::syscall(SYS_close_range, 3U, ~0U, 0);
        ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    ::setpgid(pid, pid);
    ::close(in[0]);
    ::close(err[1]);
    // A command that does not read its stdin must not block the runner: the write does not
    // wait, and what does not fit is dropped.
    ::fcntl(in[1], F_SETFL, O_NONBLOCK);
    proc::write_all(in[1], text);
    ::close(in[1]);
    std::optional<proc::Pidfd> handle;
    try {
        handle = proc::Pidfd::open(pid, 0);
    } catch (const std::exception&) {
    }
    std::string stderr_tail;
    auto deadline = std::chrono::steady_clock::now() + bound;
    bool timed_out = false;
    bool err_open = true;
    while (true) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            timed_out = true;
            break;
        }
        pollfd p[2] = {{err_open ? err[0] : -1, POLLIN, 0},
                       {handle ? handle->fd() : -1, POLLIN, 0}};
        int n = ::poll(p, 2, static_cast<int>(left.count()) + 1);
        if (n < 0 && errno == EINTR) continue;
        if (p[0].revents) {
            char buf[4096];
            ssize_t got = ::read(err[0], buf, sizeof buf);
            if (got > 0) {
                stderr_tail.append(buf, static_cast<std::size_t>(got));
                if (stderr_tail.size() > 2048) stderr_tail.erase(0, stderr_tail.size() - 2048);
            } else if (got == 0 || errno != EINTR) {
                err_open = false;
            }
        }
        if (!handle && !err_open) break;  // no pidfd: the end of its stderr is its end
        if (handle && handle->exited()) break;
    }
    if (timed_out) ::kill(-pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    ::close(err[0]);
    json details = {{"command", command}};
    if (timed_out) {
        details["reason"] = "it ran longer than " + format_duration(bound) + " and was killed";
    } else if (WIFSIGNALED(status)) {
        details["reason"] = "it was killed by " + proc::signal_name(WTERMSIG(status));
    } else if (WEXITSTATUS(status) == 127) {
        details["reason"] = "it could not be run (exit 127)";
    } else if (WEXITSTATUS(status) != 0) {
        details["reason"] = "it exited with " + std::to_string(WEXITSTATUS(status));
    } else {
        return 0;
    }
    details["stderr"] = stderr_tail;
    log_failure(home, event, details);
    return 1;
}

}  // namespace team
