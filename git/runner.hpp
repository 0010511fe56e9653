// The one door to git. Everything in git/ runs git through a Git: the real runner starts the git
// binary (never a shell) with a cleaned environment and a timeout; unit tests use a strict
// recording fake (tests/support/fake_git.hpp) that fails on a call it was not told to expect.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace team::git {

// One run of git: `git ARGS` in `cwd`, with `env` added to the cleaned environment (such as
// GIT_INDEX_FILE for a temporary index) and `input` on stdin.
struct GitCall {
    std::vector<std::string> args;
    std::filesystem::path cwd;
    std::vector<std::pair<std::string, std::string>> env = {};
    std::string input = {};
    std::chrono::milliseconds timeout = std::chrono::seconds(60);
};

struct GitResult {
    int exit_code = 0;  // git's exit code; 124 for a timeout, 126 when git could not be started
    std::string out;
    std::string err;
    bool ok() const { return exit_code == 0; }
};

class Git {
  public:
    virtual ~Git() = default;
    // Runs one git command to its end. Never throws for a git error: see exit_code and err.
    virtual GitResult run(const GitCall& call) = 0;
};

// The real runner: git started with posix_spawn (nothing of ours runs in the child before exec,
// so any thread may run it), output through memory files, input through a pipe, a timeout on
// every call (past it git is killed, and the result is 124). The child's environment is this
// process's without the variables that would point git elsewhere (GIT_DIR, GIT_WORK_TREE,
// GIT_INDEX_FILE and the rest of `git rev-parse --local-env-vars`), with prompts off, plus the
// call's own.
class GitProcess final : public Git {
  public:
    GitResult run(const GitCall& call) override;
};

// The full path of the git binary (looked up once in PATH), or "" when git is missing.
std::string git_binary();

// The environment a git child gets (before the call's own additions), as NAME=VALUE strings.
std::vector<std::string> clean_git_environment();

// Git's version as {major, minor, patch}, from `git --version`; {0, 0, 0} when unknown.
struct GitVersion {
    int major = 0, minor = 0, patch = 0;
    bool at_least(int ma, int mi) const { return major > ma || (major == ma && minor >= mi); }
};
GitVersion parse_git_version(const std::string& version_output);
// Throws a failed error unless git is at least 2.38 (merge-tree --write-tree).
GitVersion require_git_version(Git& git);

}  // namespace team::git
