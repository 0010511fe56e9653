// The real runner of git (runner.hpp): git started with posix_spawn, so that the child runs
// nothing of ours between its creation and git's exec but the file actions (its descriptors
// set, its directory changed, the rest closed), all of them system calls. No allocation after
// fork, then, and no lock that another thread of this process held at the fork (the allocator's,
// a sanitizer's) for the child to wait on forever: threads may run git side by side anywhere.
// Its input goes through a pipe written here while it runs; its output into memory files, read
// back once it has ended; a pidfd tells when it ends.
#include "git/runner.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "base/error.hpp"
#include "base/programs.hpp"

extern char** environ;

namespace team::git {

namespace {

using SteadyClock = std::chrono::steady_clock;

// What `git rev-parse --local-env-vars` lists (git 2.39), and the variables that would make a
// child git talk to another repository, index or configuration than the one a call names.
constexpr std::array kDropped = {
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_OBJECT_DIRECTORY",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_GRAFT_FILE",
    "GIT_INDEX_FILE",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_REPLACE_REF_BASE",
    "GIT_PREFIX",
    "GIT_SHALLOW_FILE",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_OPTIONAL_LOCKS",
    "GIT_QUARANTINE_PATH",
    "GIT_INTERNAL_SUPER_PREFIX",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_PAGER",
    "GIT_TRACE",
    "GIT_FLUSH",
};

bool dropped(std::string_view entry) {
    auto eq = entry.find('=');
    std::string_view name = entry.substr(0, eq);
    for (const char* d : kDropped) {
        if (name == d) return true;
    }
    // GIT_CONFIG_KEY_n / GIT_CONFIG_VALUE_n go with GIT_CONFIG_COUNT.
    return name.rfind("GIT_CONFIG_KEY_", 0) == 0 || name.rfind("GIT_CONFIG_VALUE_", 0) == 0;
}

std::string read_back(int fd) {
    std::string text;
    char buf[65536];
    ssize_t n;
    off_t offset = 0;
    while ((n = ::pread(fd, buf, sizeof buf, offset)) > 0) {
        text.append(buf, static_cast<size_t>(n));
        offset += n;
    }
    return text;
}

// A descriptor, closed when it goes.
class Fd {
  public:
    explicit Fd(int fd = -1) : fd_(fd) {}
    ~Fd() { reset(); }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return fd_; }
    void reset() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }

  private:
    int fd_;
};

// Writes what the pipe takes of `data` from `offset` on (fd is non-blocking). False when git
// closed its end: the write's EPIPE must not raise SIGPIPE, which would end this process, so
// SIGPIPE is blocked for it and one it raised is taken off before it is unblocked.
bool write_some(int fd, const std::string& data, size_t& offset) {
    sigset_t pipe_only, previous;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe_only, &previous);
    bool open = true;
    while (offset < data.size()) {
        ssize_t n = ::write(fd, data.data() + offset, data.size() - offset);
        if (n > 0) {
            offset += static_cast<size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) break;
        open = false;
        if (errno == EPIPE && !sigismember(&previous, SIGPIPE)) {
            timespec now{0, 0};
            while (::sigtimedwait(&pipe_only, nullptr, &now) < 0 && errno == EINTR) {
            }
        }
        break;
    }
    ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    return open;
}

// Starts `argv` with `envp` in `cwd`: stdin from `in`, stdout and stderr into `out` and `err`,
// every other descriptor closed. Returns the child's pid, or -1 with `reason` set.
pid_t spawn(const std::vector<char*>& argv, const std::vector<char*>& envp, const char* cwd, int in,
            int out, int err, std::string& reason) {
    posix_spawn_file_actions_t actions;
    if (int rc = posix_spawn_file_actions_init(&actions); rc != 0) {
        reason = std::strerror(rc);
        return -1;
    }
    int rc = posix_spawn_file_actions_adddup2(&actions, in, STDIN_FILENO);
    if (rc == 0) rc = posix_spawn_file_actions_adddup2(&actions, out, STDOUT_FILENO);
    if (rc == 0) rc = posix_spawn_file_actions_adddup2(&actions, err, STDERR_FILENO);
    if (rc == 0) rc = posix_spawn_file_actions_addchdir_np(&actions, cwd);
    if (rc == 0) rc = posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
    pid_t pid = -1;
    if (rc == 0) rc = ::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
        reason = std::strerror(rc);
        return -1;
    }
    return pid;
}

// Waits for the child's end (its pidfd readable) until `deadline`, writing `input` to its
// stdin (`in`, closed once all of it is written or git closed its end) meanwhile. False at the
// deadline.
bool wait_writing(int pidfd, Fd& in, const std::string& input, SteadyClock::time_point deadline) {
    size_t written = 0;
    if (input.empty()) in.reset();
    for (;;) {
        auto left =
            std::chrono::ceil<std::chrono::milliseconds>(deadline - SteadyClock::now()).count();
        if (left <= 0) return false;
        pollfd fds[2] = {{pidfd, POLLIN, 0}, {in.get(), POLLOUT, 0}};
        int r = ::poll(fds, in.get() >= 0 ? 2 : 1,
                       static_cast<int>(std::min<long long>(left, 1 << 30)));
        if (r < 0 && errno != EINTR) return false;
        if (r <= 0) continue;
        if (fds[0].revents != 0) return true;
        if (in.get() >= 0 && fds[1].revents != 0) {
            if (!write_some(in.get(), input, written) || written == input.size()) in.reset();
        }
    }
}

}  // namespace

std::string git_binary() {
    static const std::string path = [] {
        const char* env_path = std::getenv("PATH");
        return find_program("git", env_path ? env_path : "").value_or("");
    }();
    return path;
}

std::vector<std::string> clean_git_environment() {
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e) {
        std::string_view entry(*e);
        if (!dropped(entry) && entry.rfind("GIT_TERMINAL_PROMPT=", 0) != 0 &&
            entry.rfind("LC_ALL=", 0) != 0) {
            env.emplace_back(entry);
        }
    }
    env.emplace_back("GIT_TERMINAL_PROMPT=0");  // never wait on a password prompt
    env.emplace_back("LC_ALL=C");               // messages we match are git's own, untranslated
    return env;
}

GitResult GitProcess::run(const GitCall& call) {
    GitResult result;
    std::string exe = git_binary();
    if (exe.empty()) {
        result.exit_code = 127;
        result.err = "git is not installed";
        return result;
    }
    auto cannot = [&](const std::string& what) {
        result.exit_code = 126;
        result.err = "cannot run git: " + what;
        return result;
    };
    // All the child needs, made before it exists.
    std::vector<std::string> env = clean_git_environment();
    for (const auto& [name, value] : call.env) env.push_back(name + "=" + value);
    std::vector<std::string> args = call.args;
    std::vector<char*> argv{exe.data()};
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string cwd = call.cwd.empty() ? std::string(".") : call.cwd.string();

    // Memory files, not pipes, for the output: no reader thread, and a child that hands its
    // descriptors down (a hook starting a daemon) cannot keep us waiting for an end of file.
    Fd out(::memfd_create("git-out", MFD_CLOEXEC));
    Fd err(::memfd_create("git-err", MFD_CLOEXEC));
    if (out.get() < 0 || err.get() < 0)
        return cannot(std::string("memfd: ") + std::strerror(errno));
    int in_pipe[2];
    if (::pipe2(in_pipe, O_CLOEXEC) != 0)
        return cannot(std::string("pipe: ") + std::strerror(errno));
    Fd in_read(in_pipe[0]), in_write(in_pipe[1]);
    ::fcntl(in_write.get(), F_SETFL, O_NONBLOCK);

    std::string reason;
    pid_t pid = spawn(argv, envp, cwd.c_str(), in_read.get(), out.get(), err.get(), reason);
    if (pid < 0) return cannot(cwd + ": " + reason);
    in_read.reset();
    Fd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    bool ended = false;
    if (pidfd.get() < 0) {
        reason = std::string("pidfd_open: ") + std::strerror(errno);
    } else {
        ended = wait_writing(pidfd.get(), in_write, call.input, SteadyClock::now() + call.timeout);
    }
    in_write.reset();
    if (!ended) ::kill(pid, SIGKILL);  // past its timeout (or not to be watched): ended now
    int status = 0;
    pid_t waited;
    while ((waited = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
    }
    if (pidfd.get() < 0) return cannot(reason);
    if (waited != pid) {
        result.exit_code = -1;
    } else if (WIFEXITED(status)) {
        result.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        result.exit_code = WTERMSIG(status);
    } else {
        result.exit_code = status;
    }
    result.out = read_back(out.get());
    result.err = read_back(err.get());
    if (!ended) {
        result.exit_code = 124;
        result.err = "git did not finish within " + std::to_string(call.timeout.count()) + " ms";
    }
    return result;
}
GitVersion parse_git_version(const std::string& text) {
    GitVersion v;
    auto at = text.find("version ");
    if (at == std::string::npos) return v;
    const char* p = text.c_str() + at + 8;
    char* end = nullptr;
    v.major = static_cast<int>(std::strtol(p, &end, 10));
    if (end && *end == '.') v.minor = static_cast<int>(std::strtol(end + 1, &end, 10));
    if (end && *end == '.') v.patch = static_cast<int>(std::strtol(end + 1, &end, 10));
    return v;
}

GitVersion require_git_version(Git& git) {
    GitResult r = git.run({.args = {"--version"}, .cwd = {}});
    if (!r.ok()) throw failed("cannot run git: " + r.err);
    GitVersion v = parse_git_version(r.out);
    if (!v.at_least(2, 38)) {
        throw failed("git 2.38 or later is needed (merge-tree --write-tree); found " +
                     quote(r.out.substr(0, r.out.find('\n'))));
    }
    return v;
}

}  // namespace team::git
