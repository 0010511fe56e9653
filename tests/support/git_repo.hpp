// Test support for git/: real repositories made by the test in a temporary directory (git init,
// a few commits), git run through the real runner, and fingerprints of a checkout (every file's
// bytes and mode, and the index's bytes) to prove that an operation left it byte-identical.
#pragma once

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "git/repository.hpp"
#include "git/runner.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/process.hpp"

namespace team::test {

// Runs real git in `cwd` and requires it to succeed; returns its stdout.
inline std::string git_ok(const std::filesystem::path& cwd, std::vector<std::string> args,
                          const std::string& input = "") {
    git::GitProcess runner;
    git::GitResult r = runner.run({.args = args, .cwd = cwd, .input = input});
    std::string line;
    for (const auto& a : args) line += " " + a;
    INFO("git" << line << " in " << cwd << ": " << r.err);
    REQUIRE(r.exit_code == 0);
    return r.out;
}

// The same, without the requirement.
inline git::GitResult git_try(const std::filesystem::path& cwd, std::vector<std::string> args) {
    git::GitProcess runner;
    return runner.run({.args = std::move(args), .cwd = cwd});
}

// A new repository at `path` (made if absent): branch main, an identity of its own, commits
// unsigned; no commit yet.
inline void init_repo(const std::filesystem::path& path) {
    std::filesystem::create_directories(path);
    git_ok(path, {"init", "--quiet", "--initial-branch=main"});
    git_ok(path, {"config", "user.name", "Test"});
    git_ok(path, {"config", "user.email", "test@example.com"});
    git_ok(path, {"config", "commit.gpgsign", "false"});
}

inline void write_file(const std::filesystem::path& path, const std::string& content) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << content;
}

// Every file under `dir` (but .git) with its bytes and mode; directories as "<dir>/".
inline std::map<std::string, std::string> fingerprint(const std::filesystem::path& dir) {
    namespace fs = std::filesystem;
    std::map<std::string, std::string> out;
    for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator();
         ++it) {
        if (it->path().filename() == ".git") {
            if (it->is_directory()) it.disable_recursion_pending();
            out[".git"] = it->is_directory() ? "dir" : slurp(it->path());
            continue;
        }
        std::string rel = fs::relative(it->path(), dir).string();
        struct stat st {};
        ::lstat(it->path().c_str(), &st);
        if (it->is_symlink()) {
            out[rel] = "link:" + fs::read_symlink(it->path()).string();
        } else if (it->is_directory()) {
            out[rel + "/"] = "dir";
        } else {
            out[rel] = std::to_string(st.st_mode) + ":" + slurp(it->path());
        }
    }
    return out;
}

// A repository on a temporary directory whose path has a space, a quote and unicode in it:
// branch `main`, an identity, and a first commit of a few files (one in a subdirectory).
struct TestRepo {
    TempDir tmp;
    std::filesystem::path dir = tmp.path() / "my repo 'q' é";
    std::filesystem::path home = tmp.path() / "home";
    git::GitProcess runner;
    git::Repository repo;

    explicit TestRepo(bool with_commit = true) {
        std::filesystem::create_directories(dir);
        std::filesystem::create_directories(home);
        git_ok(dir, {"init", "--quiet", "--initial-branch=main"});
        git_ok(dir, {"config", "user.name", "Test"});
        git_ok(dir, {"config", "user.email", "test@example.com"});
        git_ok(dir, {"config", "commit.gpgsign", "false"});
        if (with_commit) {
            write_file(dir / "README.md", "hello\n");
            write_file(dir / "src/a.txt", "one\ntwo\nthree\n");
            write_file(dir / "src/b.txt", "bee\n");
            write_file(dir / ".gitignore", ".env\nbuild/\n");
            commit_all("first");
        }
        repo = git::resolve_repository(runner, dir);
    }

    std::string git(std::vector<std::string> args, const std::filesystem::path& cwd = {}) {
        return git_ok(cwd.empty() ? dir : cwd, std::move(args));
    }
    std::string commit_all(const std::string& message, const std::filesystem::path& cwd = {}) {
        git({"add", "-A"}, cwd);
        git({"commit", "--quiet", "-m", message}, cwd);
        return head(cwd);
    }
    std::string head(const std::filesystem::path& cwd = {}) {
        return git::first_line(git({"rev-parse", "HEAD"}, cwd));
    }
    std::string status(const std::filesystem::path& cwd = {}) {
        return git({"status", "--porcelain=v2", "-z", "--untracked-files=all"}, cwd);
    }
};

}  // namespace team::test
