#include "acp/child.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/error.hpp"
#include "proc/pidfd.hpp"
#include "proc/process_table.hpp"
#include "proc/terminate.hpp"

extern char** environ;

namespace team::acp {

namespace {

std::vector<std::string> merged_environment(const std::vector<std::string>& overrides) {
    std::vector<std::string> out;
    for (char** e = environ; *e != nullptr; ++e) {
        std::string entry(*e);
        std::string key = entry.substr(0, entry.find('='));
        bool replaced = false;
        for (const auto& o : overrides) replaced = replaced || o.substr(0, o.find('=')) == key;
        if (!replaced) out.push_back(entry);
    }
    out.insert(out.end(), overrides.begin(), overrides.end());
    return out;
}

void close_fd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
}

}  // namespace

Child start_child(const ChildSpec& spec) {
    if (spec.argv.empty()) throw usage_error("no command to run");
    // Everything the child needs is made before fork: after it only async-signal-safe calls.
    std::vector<std::string> env = merged_environment(spec.env);
    std::vector<char*> argv, envp;
    for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    std::string cwd = spec.cwd.string();

    int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1}, report[2] = {-1, -1};
    auto fail = [&](const char* what) {
        int saved = errno;
        for (int* p : {in, out, err, report}) {
            close_fd(p[0]);
            close_fd(p[1]);
        }
        throw failed(std::string(what) + ": " + std::strerror(saved));
    };
    if (spec.pipe_stdin && ::pipe2(in, O_CLOEXEC) != 0) fail("cannot make a pipe");
    if (::pipe2(out, O_CLOEXEC) != 0) fail("cannot make a pipe");
    if (!spec.merge_stderr && ::pipe2(err, O_CLOEXEC) != 0) fail("cannot make a pipe");
    if (::pipe2(report, O_CLOEXEC) != 0) fail("cannot make a pipe");

    pid_t pid = ::fork();
    if (pid < 0) fail("cannot fork");
    if (pid == 0) {
        ::setpgid(0, 0);
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::signal(s, SIG_DFL);
        int stdin_fd = spec.pipe_stdin ? in[0] : ::open("/dev/null", O_RDONLY);
        ::dup2(stdin_fd, 0);
        ::dup2(out[1], 1);
        ::dup2(spec.merge_stderr ? out[1] : err[1], 2);
        int code = 0;
        if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) {
            code = errno;
        } else {
            ::execvpe(argv[0], argv.data(), envp.data());
            code = errno;
        }
        [[maybe_unused]] auto n = ::write(report[1], &code, sizeof code);
        ::_exit(127);
    }
    ::setpgid(pid, pid);  // also here, so the group exists whichever runs first
    close_fd(in[0]);
    close_fd(out[1]);
    close_fd(err[1]);
    close_fd(report[1]);
    int code = 0;
    ssize_t n;
    do {
        n = ::read(report[0], &code, sizeof code);
    } while (n < 0 && errno == EINTR);
    close_fd(report[0]);
    if (n == static_cast<ssize_t>(sizeof code)) {
        ::waitpid(pid, nullptr, 0);
        for (int* fd : {&in[1], &out[0], &err[0]}) close_fd(*fd);
        throw failed("cannot run " + quote(spec.argv[0]) + ": " + std::strerror(code));
    }
    Child child;
    child.pid = pid;
    child.start_time = proc::start_time_of(pid).value_or(0);
    child.in = in[1];
    child.out = out[0];
    child.err = err[0];
    return child;
}

std::optional<ExitStatus> wait_child(
    pid_t pid, std::optional<std::chrono::steady_clock::time_point> deadline) {
    if (deadline) {
        auto fd = proc::Pidfd::open(pid, 0);
        if (fd) {
            std::vector<proc::Pidfd> one;
            one.push_back(std::move(*fd));
            if (!proc::wait_all_exited(one, *deadline)) return std::nullopt;
        }
    }
    int status = 0;
    pid_t r;
    do {
        r = ::waitpid(pid, &status, 0);
    } while (r < 0 && errno == EINTR);
    ExitStatus out;
    if (r == pid && WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
    if (r == pid && WIFSIGNALED(status)) out.signal = WTERMSIG(status);
    return out;
}

void end_child_tree(const Child& child, const std::string& marker,
                    std::chrono::milliseconds grace) {
    proc::TreeTarget target;
    target.root = child.pid;
    target.root_start = child.start_time;
    target.include_root = true;
    target.pgid = child.pid;
    if (!marker.empty()) target.marker = {marker};
    proc::terminate_tree(target, SIGTERM, grace, true);
}

}  // namespace team::acp
