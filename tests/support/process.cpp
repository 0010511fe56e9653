#include "tests/support/process.hpp"

#include "tests/support/pg.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <fstream>

extern char** environ;

namespace team::test {

namespace fs = std::filesystem;

TempDir::TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/team-test-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) FAIL("mkdtemp: " << std::strerror(errno));
    path_ = tmpl;
}

TempDir::~TempDir() {
    std::error_code ec;
    // A test may have made parts read-only; make them writable again before removing.
    for (auto it = fs::recursive_directory_iterator(path_, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
    }
    fs::remove_all(path_, ec);
}

nlohmann::json RunResult::json() const {
    auto doc = nlohmann::json::parse(out, nullptr, false);
    if (doc.is_discarded())
        FAIL("stdout is not one JSON document: [" << out << "] stderr: " << err);
    return doc;
}

std::map<std::string, std::string> clean_env(const std::map<std::string, std::string>& extra) {
    std::map<std::string, std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
        std::string kv = *e;
        auto eq = kv.find('=');
        if (eq == std::string::npos) continue;
        std::string key = kv.substr(0, eq);
        if (key.rfind("TEAM_", 0) == 0 || key.rfind("PG", 0) == 0 || key == "TMUX" ||
            key == "TMUX_PANE")
            continue;
        env[key] = kv.substr(eq + 1);
    }
    for (const auto& [k, v] : extra) env[k] = v;
    return env;
}

Child::Child(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
             const std::string& input) {
    int out[2], err[2], in[2];
    REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
    REQUIRE(::pipe2(err, O_CLOEXEC) == 0);
    REQUIRE(::pipe2(in, O_CLOEXEC) == 0);
    std::vector<std::string> env_strings;
    for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
    std::vector<char*> cargv, cenv;
    for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    for (auto& e : env_strings) cenv.push_back(e.data());
    cenv.push_back(nullptr);
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
        ::dup2(in[0], 0);
        ::dup2(out[1], 1);
        ::dup2(err[1], 2);
        ::execve(cargv[0], cargv.data(), cenv.data());
        ::_exit(127);
    }
    ::close(out[1]);
    ::close(err[1]);
    ::close(in[0]);
    // Fed from a thread: an input larger than the pipe buffer must not block the start.
    input_writer_ = std::thread([fd = in[1], input] {
        // A child that reads less than it is given closes the pipe: the write must then fail
        // with EPIPE, not raise SIGPIPE, which would end the whole test binary. Blocked in this
        // thread only (an ignored SIGPIPE would be inherited by every program a test starts).
        sigset_t pipe_signal;
        sigemptyset(&pipe_signal);
        sigaddset(&pipe_signal, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
        size_t done = 0;
        while (done < input.size()) {
            ssize_t n = ::write(fd, input.data() + done, input.size() - done);
            if (n <= 0) break;
            done += static_cast<size_t>(n);
        }
        ::close(fd);
    });
    out_fd_ = out[0];
    err_fd_ = err[0];
}

Child::Child(Child&& other) noexcept
    : pid_(other.pid_),
      input_writer_(std::move(other.input_writer_)),
      out_fd_(other.out_fd_),
      err_fd_(other.err_fd_) {
    other.pid_ = -1;
    other.out_fd_ = other.err_fd_ = -1;
}

Child::~Child() {
    if (pid_ > 0) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
    }
    if (input_writer_.joinable()) input_writer_.join();
    if (out_fd_ >= 0) ::close(out_fd_);
    if (err_fd_ >= 0) ::close(err_fd_);
}

RunResult Child::wait() {
    RunResult r;
    pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
    std::string* sinks[2] = {&r.out, &r.err};
    int open_fds = 2;
    char buf[65536];
    while (open_fds > 0) {
        if (::poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || fds[i].revents == 0) continue;
            ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
            if (n > 0) {
                sinks[i]->append(buf, static_cast<size_t>(n));
            } else if (n == 0 || errno != EINTR) {
                fds[i].fd = -1;
                --open_fds;
            }
        }
    }
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    if (input_writer_.joinable()) input_writer_.join();
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return r;
}

namespace {
// The folder of the running test executable (build/tests/).
fs::path own_dir() {
    return fs::read_symlink("/proc/self/exe").parent_path();
}
}  // namespace

std::string team_binary() {
    static const std::string path = [] {
        const char* chosen = std::getenv("TEAM_BINARY");
        if (chosen && *chosen) return std::string(chosen);
        return (own_dir().parent_path() / "team").string();
    }();
    return path;
}

fs::path source_dir() {
    static const fs::path path = []() -> fs::path {
        const char* chosen = std::getenv("TEAM_SOURCE_DIR");
        if (chosen && *chosen) return chosen;
        std::ifstream cache(own_dir().parent_path() / "CMakeCache.txt");
        const std::string key = "team_SOURCE_DIR:STATIC=";
        for (std::string line; std::getline(cache, line);) {
            if (line.rfind(key, 0) == 0) return line.substr(key.size());
        }
        FAIL("cannot tell where the source tree is: set TEAM_SOURCE_DIR");
        return {};
    }();
    return path;
}

std::string test_build_file(const std::string& name) {
    return (own_dir() / name).string();
}

TeamEnv::TeamEnv() : home_(tmp_.path() / "home") {
    if (auto pg = test_pg_dir()) {
        own_database_ = std::make_unique<PgDatabase>(*pg);
        store_url_ = own_database_->url();
    }
}

TeamEnv::TeamEnv(std::string store_url)
    : home_(tmp_.path() / "home"), store_url_(std::move(store_url)) {}

TeamEnv::~TeamEnv() {
    try {
        if (std::filesystem::exists(home_ / "tmux.sock")) tmux({"kill-server"});
    } catch (...) {
        // A destructor must not throw (the test has failed already if tmux could not be run).
    }
}

RunResult TeamEnv::tmux(const std::vector<std::string>& args) const {
    std::vector<std::string> argv{"/usr/bin/tmux", "-S", (home_ / "tmux.sock").string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return Child(argv, clean_env()).wait();
}

RunResult TeamEnv::run(const std::vector<std::string>& args,
                       const std::map<std::string, std::string>& extra_env) const {
    return start(args, extra_env, "").wait();
}

std::map<std::string, std::string> TeamEnv::environment(
    const std::map<std::string, std::string>& extra) const {
    auto env = clean_env(extra);
    if (!env.count("TEAM_HOME")) env["TEAM_HOME"] = home_.string();
    if (store_url_ && !env.count("TEAM_STORE")) env["TEAM_STORE"] = *store_url_;
    return env;
}

Child TeamEnv::start(const std::vector<std::string>& args,
                     const std::map<std::string, std::string>& extra_env,
                     const std::string& input) const {
    std::vector<std::string> argv{team_binary()};
    argv.insert(argv.end(), args.begin(), args.end());
    return Child(argv, environment(extra_env), input);
}

}  // namespace team::test
