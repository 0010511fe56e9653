// Test support: running the real `team` binary (and other programs) as child processes, each
// test in its own temporary home that is removed however the test ends.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
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

// The environment of this process without TEAM_* variables (and tmux's, and libpq's PG*: a
// test's store is named in full by TEAM_STORE), plus `extra`.
std::map<std::string, std::string> clean_env(const std::map<std::string, std::string>& extra = {});

class PgDatabase;

// A home for one test: a temporary directory with TEAM_HOME inside it. Its store is the home's
// SQLite file, or, when TEAM_TEST_PG names the PostgreSQL rig's socket directory (the `pg` run of
// the tests tagged [pg], tests/support/pg.hpp), a database of its own on that cluster, made by
// the constructor: every `team` it runs then gets TEAM_STORE.
class TeamEnv {
  public:
    TeamEnv();
    // A home on the store `store_url`, passed as TEAM_STORE to every `team` it runs: e.g. a
    // PgDatabase's url() that several homes share, or "sqlite". The store is not this home's to
    // drop.
    explicit TeamEnv(std::string store_url);
    // Kills this home's private tmux server (if one runs), then drops the database the home made
    // for itself (WITH (FORCE)), then removes the home.
    ~TeamEnv();
    const std::filesystem::path& home() const { return home_; }
    const std::filesystem::path& dir() const { return tmp_.path(); }
    // The TEAM_STORE every `team` of this home gets, or nothing (the home's SQLite file).
    const std::optional<std::string>& store_url() const { return store_url_; }
    // The database this home made for itself (TEAM_TEST_PG set), else null: for fault tests
    // (PgDatabase::terminate_sessions).
    const PgDatabase* pg_database() const { return own_database_.get(); }
    // Runs tmux on this home's private server, e.g. {"list-panes", "-a"}.
    RunResult tmux(const std::vector<std::string>& args) const;

    // The environment of this home's `team`: clean_env(extra) with TEAM_HOME and TEAM_STORE
    // (when the home has one) unless `extra` sets them. For a Child started by hand.
    std::map<std::string, std::string> environment(
        const std::map<std::string, std::string>& extra = {}) const;

    // Runs `team ARGS...` with TEAM_HOME (and TEAM_STORE) set, waits, returns what it printed.
    RunResult run(const std::vector<std::string>& args,
                  const std::map<std::string, std::string>& extra_env = {}) const;
    // Starts `team ARGS...` without waiting.
    Child start(const std::vector<std::string>& args,
                const std::map<std::string, std::string>& extra_env = {},
                const std::string& input = "") const;

  private:
    TempDir tmp_;
    std::filesystem::path home_;
    std::optional<std::string> store_url_;
    std::unique_ptr<PgDatabase> own_database_;  // dropped before tmp_ is removed
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
