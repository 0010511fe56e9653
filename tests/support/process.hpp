// Test support: running the real `team` binary (and other programs) as child processes, each
// test in its own temporary home that is removed however the test ends.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace team::test {

// A private temporary directory, removed with everything in it when the object goes.
class TempDir {
  public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return path_; }

  private:
    std::filesystem::path path_;
};

struct RunResult {
    int exit_code = -1;  // the exit status, or 128+signal
    std::string out;
    std::string err;
    // stdout parsed as JSON (fails the test if it is not).
    nlohmann::json json() const;
};

// A started child process whose stdout and stderr are captured.
class Child {
  public:
    Child(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
          const std::string& input = "");
    ~Child();  // kills (SIGKILL) and reaps the child if it was not waited for
    Child(Child&&) noexcept;
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;
    RunResult wait();
    pid_t pid() const { return pid_; }

  private:
    pid_t pid_ = -1;
    std::thread input_writer_;
    int out_fd_ = -1;
    int err_fd_ = -1;
};

// The environment of this process without TEAM_* variables, plus `extra`.
std::map<std::string, std::string> clean_env(const std::map<std::string, std::string>& extra = {});

// A home for one test: a temporary directory with TEAM_HOME inside it.
class TeamEnv {
  public:
    TeamEnv();
    // Kills this home's private tmux server (if one runs), then removes the home.
    ~TeamEnv();
    const std::filesystem::path& home() const { return home_; }
    const std::filesystem::path& dir() const { return tmp_.path(); }
    // Runs tmux on this home's private server, e.g. {"list-panes", "-a"}.
    RunResult tmux(const std::vector<std::string>& args) const;

    // Runs `team ARGS...` with TEAM_HOME set, waits, returns what it printed.
    RunResult run(const std::vector<std::string>& args,
                  const std::map<std::string, std::string>& extra_env = {}) const;
    // Starts `team ARGS...` without waiting.
    Child start(const std::vector<std::string>& args,
                const std::map<std::string, std::string>& extra_env = {},
                const std::string& input = "") const;

  private:
    TempDir tmp_;
    std::filesystem::path home_;
};

// The path of the binary under test: $TEAM_BINARY when set (scripts/test --sanitize points the
// plain build's tests at the sanitized binary), else the `team` of the build these tests are in.
// Found at run time, not compiled in, so no object holds the build directory's path and a
// compiler cache hits from a clone anywhere.
std::string team_binary();

// The source tree: $TEAM_SOURCE_DIR when set, else the one the build these tests are in was
// configured from (its CMakeCache.txt says), found at run time for the same reason.
std::filesystem::path source_dir();

// A file the build put beside the test executables (e.g. "libclock_jump.so").
std::string test_build_file(const std::string& name);

}  // namespace team::test
