#include "proc/supervisor.hpp"

#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/error.hpp"
#include "base/programs.hpp"
#include "proc/process_table.hpp"
#include "proc/terminate.hpp"

extern char** environ;

namespace team::proc {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kTakenSignals[] = {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGUSR1};

// How long leftovers of a command that ended get to go after SIGTERM, before SIGKILL.
constexpr std::chrono::milliseconds kLeftoverGrace{1000};

std::string env_value(const std::vector<std::string>& env, const std::string& key) {
    for (const auto& kv : env) {
        if (kv.size() > key.size() && kv.compare(0, key.size(), key) == 0 &&
            kv[key.size()] == '=') {
            return kv.substr(key.size() + 1);
        }
    }
    return {};
}

// In the child, between fork and exec: only async-signal-safe calls. Reports errno through
// `error_fd` and exits when a step fails.
[[noreturn]] void exec_child(const LaunchSpec& spec, const char* program, char* const* argv,
                             char* const* envp, int output_fd, int stderr_fd, int error_fd,
                             pid_t supervisor) {
    auto fail = [&](int stage) {
        int report[2] = {stage, errno};
        (void)!::write(error_fd, report, sizeof report);
        ::_exit(127);
    };
    ::setpgid(0, 0);
    ::umask(spec.umask);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != supervisor) ::_exit(127);  // the supervisor died before the prctl
    if (spec.foreground_tty && ::isatty(STDIN_FILENO)) {
        // The command must own the terminal to read from it (interactive programs).
        ::signal(SIGTTOU, SIG_IGN);
        ::tcsetpgrp(STDIN_FILENO, ::getpid());
        ::signal(SIGTTOU, SIG_DFL);
    }
    if (spec.null_stdin) {
        int null_fd = ::open("/dev/null", O_RDONLY);
        if (null_fd < 0) fail(1);
        ::dup2(null_fd, STDIN_FILENO);
        ::close(null_fd);
    }
    if (output_fd >= 0) {
        ::dup2(output_fd, STDOUT_FILENO);
        ::dup2(output_fd, STDERR_FILENO);
    }
    if (stderr_fd >= 0) ::dup2(stderr_fd, STDERR_FILENO);
    if (::chdir(spec.cwd.c_str()) != 0) fail(2);
    // Only stdin, stdout, stderr and the descriptors passed on purpose reach the command: every
    // other descriptor this process holds (inherited from whoever started team) closes at exec.
    // The passed ones are first moved out of the way, so that no target overwrites a source.
    int moved[8];
    std::size_t passed = std::min<std::size_t>(spec.pass_fds.size(), 8);
    for (std::size_t i = 0; i < passed; ++i) {
        moved[i] = ::fcntl(spec.pass_fds[i].first, F_DUPFD_CLOEXEC, 64);
        if (moved[i] < 0) fail(4);
    }
    ::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
    for (std::size_t i = 0; i < passed; ++i) {
        if (::dup2(moved[i], spec.pass_fds[i].second) < 0) fail(4);  // dup2 clears CLOEXEC
    }
    // Restore what the supervisor changed: the signal mask and dispositions.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig = 1; sig < NSIG; ++sig) {
        if (sig != SIGKILL && sig != SIGSTOP) ::signal(sig, SIG_DFL);
    }
    ::execve(program, argv, envp);
    fail(3);
    ::_exit(127);
}

}  // namespace

std::vector<std::string> merged_environment(const std::vector<std::string>& overrides,
                                            const std::vector<std::string>& drop_prefixes) {
    auto key_of = [](const std::string& kv) { return kv.substr(0, kv.find('=')); };
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
        std::string kv = *e;
        bool dropped = false;
        for (const auto& prefix : drop_prefixes) dropped = dropped || kv.rfind(prefix, 0) == 0;
        if (!dropped) env.push_back(kv);
    }
    for (const auto& kv : overrides) {
        auto it = std::find_if(env.begin(), env.end(),
                               [&](const std::string& e) { return key_of(e) == key_of(kv); });
        if (it != env.end()) {
            *it = kv;
        } else {
            env.push_back(kv);
        }
    }
    return env;
}

std::string require_program(const std::string& program, const std::string& path,
                            const std::string& cwd) {
    if (auto found = find_program(program, path, cwd)) return *found;
    std::string full =
        program.empty() || program[0] == '/' || cwd.empty() ? program : cwd + "/" + program;
    bool exists = program.find('/') != std::string::npos && ::access(full.c_str(), F_OK) == 0;
    throw failed("cannot run " + quote(program) + ": " +
                 (exists ? "it is not an executable file" : "command not found"));
}

int exit_code_of(const ExitStatus& status, bool timed_out) {
    if (timed_out) return 124;
    if (status.signal) return 128 + *status.signal;
    return status.exit_code.value_or(1);
}

bool terminal_is_ours() {
    return ::isatty(STDIN_FILENO) && ::tcgetpgrp(STDIN_FILENO) == ::getpgrp();
}

void take_terminal_back() {
    ::signal(SIGTTOU, SIG_IGN);
    ::tcsetpgrp(STDIN_FILENO, ::getpgrp());
    ::signal(SIGTTOU, SIG_DFL);
}

int memory_file(const char* name, std::string_view content) {
    int fd = ::memfd_create(name, MFD_CLOEXEC);
    if (fd < 0) throw failed(std::string("memfd_create: ") + std::strerror(errno));
    while (!content.empty()) {
        ssize_t n = ::write(fd, content.data(), content.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            int saved = errno;
            ::close(fd);
            throw failed(std::string("cannot write a memory file: ") + std::strerror(saved));
        }
        content.remove_prefix(static_cast<std::size_t>(n));
    }
    ::lseek(fd, 0, SEEK_SET);
    return fd;
}

Supervisor::Supervisor() {
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    sigset_t set;
    sigemptyset(&set);
    for (int sig : kTakenSignals) sigaddset(&set, sig);
    ::sigprocmask(SIG_BLOCK, &set, nullptr);
    signal_fd_ = ::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (signal_fd_ < 0) throw failed(std::string("signalfd: ") + std::strerror(errno));
}

Supervisor::~Supervisor() {
    if (signal_fd_ >= 0) ::close(signal_fd_);
    if (output_fd_ >= 0) ::close(output_fd_);
    if (error_fd_ >= 0) ::close(error_fd_);
    sigset_t set;
    sigemptyset(&set);
    for (int sig : kTakenSignals) sigaddset(&set, sig);
    ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
}

pid_t Supervisor::start(const LaunchSpec& spec) {
    spec_ = spec;
    if (spec.argv.empty()) throw usage_error("no command given");
    std::string program = require_program(spec.argv[0], env_value(spec.env, "PATH"), spec.cwd);
    std::vector<char*> argv, envp;
    for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (const auto& e : spec.env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);

    int out[2] = {-1, -1};
    if (spec.capture_output && ::pipe2(out, O_CLOEXEC) != 0) {
        throw failed(std::string("pipe: ") + std::strerror(errno));
    }
    int errout[2] = {-1, -1};
    if (spec.capture_output && spec.separate_stderr && ::pipe2(errout, O_CLOEXEC) != 0) {
        if (out[0] >= 0) ::close(out[0]), ::close(out[1]);
        throw failed(std::string("pipe: ") + std::strerror(errno));
    }
    int err[2];
    if (::pipe2(err, O_CLOEXEC) != 0) throw failed(std::string("pipe: ") + std::strerror(errno));
    if (spec.pass_fds.size() > 8) throw usage_error("at most 8 descriptors can be passed");

    pid_t self = ::getpid();
    pid_t pid = ::fork();
    if (pid < 0) throw failed(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
        exec_child(spec, program.c_str(), argv.data(), envp.data(), out[1], errout[1], err[1],
                   self);
    }

    ::close(err[1]);
    if (out[1] >= 0) ::close(out[1]);
    if (errout[1] >= 0) ::close(errout[1]);
    output_fd_ = out[0];
    error_fd_ = errout[0];
    child_ = pid;
    // Also set here, so the group exists whichever of parent and child runs first.
    ::setpgid(pid, pid);

    int report[2];
    ssize_t n;
    do {
        n = ::read(err[0], report, sizeof report);
    } while (n < 0 && errno == EINTR);
    ::close(err[0]);
    if (n == sizeof report) {
        ::waitpid(pid, nullptr, 0);
        child_ = 0;
        if (report[0] == 4)
            throw failed(std::string("cannot pass a descriptor: ") + std::strerror(report[1]));
        const char* what = report[0] == 2 ? "cannot change to directory " : "cannot run ";
        std::string target = report[0] == 2 ? spec.cwd : spec.argv[0];
        throw failed(what + quote(target) + ": " + std::strerror(report[1]));
    }
    child_start_ = start_time_of(pid).value_or(0);
    return pid;
}

void Supervisor::reap(RunOutcome& outcome) {
    for (;;) {
        int status = 0;
        pid_t pid = ::waitpid(-1, &status, WNOHANG);
        if (pid <= 0) return;
        if (pid == child_) {
            child_done_ = true;
            if (WIFEXITED(status)) {
                outcome.status.exit_code = WEXITSTATUS(status);
            } else if (WIFSIGNALED(status)) {
                outcome.status.signal = WTERMSIG(status);
            }
        }
    }
}

void Supervisor::end_tree(int sig, std::chrono::milliseconds grace) {
    TreeTarget target;
    target.root = ::getpid();
    target.pgid = child_done_ ? 0 : child_;
    terminate_tree(target, sig, grace, true);
}

RunOutcome Supervisor::run(const std::function<void(std::string_view)>& on_output,
                           const std::function<void(std::string_view)>& on_error) {
    RunOutcome outcome;
    // The timeout, while it is still to be enforced.
    bool armed = spec_.timeout.has_value();
    Clock::time_point deadline = armed ? Clock::now() + *spec_.timeout : Clock::time_point::max();
    bool cleaned_up = false;
    // A stop someone planned (a shutdown deadline); max: none.
    constexpr Clock::time_point kNone = Clock::time_point::max();
    Clock::time_point planned = kNone;
    auto consult_plan = [&](bool woken) {
        if (!spec_.stop_plan || child_done_) return;
        StopPlan plan = spec_.stop_plan(woken);
        planned = plan.at.value_or(kNone);
        if (planned <= Clock::now()) {
            planned = kNone;
            end_tree(SIGTERM, plan.grace);
        }
    };
    char buf[65536];
    Clock::time_point bell_tried = Clock::now();

    for (;;) {
        if (child_done_ && !cleaned_up) {
            // The command ended: whatever it left behind (escaped daemons, background jobs)
            // goes too, so that nothing of it runs on unrecorded.
            if (!find_tree({::getpid(), 0, false, 0, {}}).empty())
                end_tree(SIGTERM, kLeftoverGrace);
            cleaned_up = true;
        }
        if (cleaned_up && output_fd_ < 0 && error_fd_ < 0) {
            reap(outcome);
            if (::waitpid(-1, nullptr, WNOHANG) < 0 && errno == ECHILD) return outcome;
        }

        // A closed stream stays in the set as -1, which poll skips.
        int bell = spec_.bell_fd && !child_done_ ? spec_.bell_fd() : -1;
        pollfd fds[4] = {{signal_fd_, POLLIN, 0},
                         {output_fd_, POLLIN, 0},
                         {error_fd_, POLLIN, 0},
                         {bell, POLLIN, 0}};
        int count = 4;
        int wait_ms = -1;
        if (armed && !child_done_) {
            auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now())
                    .count();
            wait_ms = static_cast<int>(std::max<long long>(0, left));
        }
        if (planned != kNone && !child_done_) {
            auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(planned - Clock::now())
                    .count();
            int until_plan = static_cast<int>(std::max<long long>(0, left));
            wait_ms = wait_ms < 0 ? until_plan : std::min(wait_ms, until_plan);
        }
        bool bell_lost = spec_.bell_fd && !child_done_ && bell < 0;
        if (bell_lost) {
            int retry = static_cast<int>(spec_.bell_retry.count());
            wait_ms = wait_ms < 0 ? retry : std::min(wait_ms, retry);
        }
        if (cleaned_up && output_fd_ < 0 && error_fd_ < 0) wait_ms = 50;  // still being reaped
        int rc = ::poll(fds, count, wait_ms);
        if (rc < 0 && errno != EINTR) throw failed(std::string("poll: ") + std::strerror(errno));

        if (armed && !child_done_ && Clock::now() >= deadline) {
            outcome.timed_out = true;
            armed = false;
            end_tree(spec_.timeout_signal, spec_.grace);
        }
        if (planned != kNone && !child_done_ && Clock::now() >= planned) consult_plan(false);
        if (rc > 0 && (fds[0].revents & POLLIN)) {
            signalfd_siginfo info;
            bool wake = false;
            while (::read(signal_fd_, &info, sizeof info) == sizeof info) {
                int sig = static_cast<int>(info.ssi_signo);
                if (sig == SIGCHLD) continue;
                if (sig == SIGUSR1) {
                    wake = true;
                    continue;
                }
                if (sig == SIGHUP) outcome.hung_up = true;
                if (!child_done_) {
                    outcome.interrupted = true;
                    end_tree(sig == SIGINT ? SIGINT : SIGTERM, spec_.grace);
                }
            }
            reap(outcome);
            if (wake) consult_plan(true);
        }
        auto drain = [&](int& fd, short revents,
                         const std::function<void(std::string_view)>& deliver) {
            if (fd < 0 || !(revents & (POLLIN | POLLHUP | POLLERR))) return;
            ssize_t n = ::read(fd, buf, sizeof buf);
            if (n > 0) {
                if (deliver) deliver(std::string_view(buf, static_cast<size_t>(n)));
            } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
                ::close(fd);
                fd = -1;
            }
        };
        // A lost bell tries to get its connection back every bell_retry (a ring sent meanwhile
        // is lost, so getting it back counts as one).
        bool retry_due = bell_lost && Clock::now() >= bell_tried + spec_.bell_retry;
        if ((retry_due || (rc > 0 && fds[3].revents != 0)) && !child_done_ && spec_.bell_rang) {
            if (retry_due) bell_tried = Clock::now();
            if (spec_.bell_rang()) consult_plan(true);
        }
        drain(output_fd_, fds[1].revents, on_output);
        drain(error_fd_, fds[2].revents, on_error ? on_error : on_output);
        reap(outcome);
    }
}

}  // namespace team::proc
