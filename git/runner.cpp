// The only file of git/ that includes Boost.Process (and Asio): it is heavy to compile.
#define BOOST_PROCESS_USE_STD_FS 1
// Boost 1.81 forgets these two with BOOST_PROCESS_USE_STD_FS.
#include <sys/mman.h>
#include <unistd.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/writable_pipe.hpp>
#include <boost/asio/write.hpp>
#include <boost/io/quoted.hpp>
#include <boost/optional.hpp>
#include <boost/process/v2/process.hpp>
#include <boost/process/v2/start_dir.hpp>
#include <boost/process/v2/stdio.hpp>

#include <array>
#include <cstdlib>
#include <string_view>

#include "base/error.hpp"
#include "base/programs.hpp"
#include "git/runner.hpp"

extern char** environ;

namespace team::git {

namespace asio = boost::asio;
namespace bp = boost::process::v2;

namespace {

// What `git rev-parse --local-env-vars` lists (git 2.39), and the variables that would make a
// child git talk to another repository, index or configuration than the one a call names.
constexpr std::array kDropped = {
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT", "GIT_OBJECT_DIRECTORY", "GIT_DIR", "GIT_WORK_TREE",
    "GIT_IMPLICIT_WORK_TREE", "GIT_GRAFT_FILE", "GIT_INDEX_FILE", "GIT_NO_REPLACE_OBJECTS",
    "GIT_REPLACE_REF_BASE", "GIT_PREFIX", "GIT_SHALLOW_FILE", "GIT_COMMON_DIR",
    "GIT_NAMESPACE", "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_OPTIONAL_LOCKS", "GIT_QUARANTINE_PATH", "GIT_INTERNAL_SUPER_PREFIX", "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR", "GIT_PAGER", "GIT_TRACE", "GIT_FLUSH",
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
    std::vector<std::string> env = clean_git_environment();
    for (const auto& [name, value] : call.env) env.push_back(name + "=" + value);

    // Memory files, not pipes, for the output: no reader thread, and a child that hands its
    // descriptors down (a hook starting a daemon) cannot keep us waiting for an end of file.
    int out_fd = ::memfd_create("git-out", MFD_CLOEXEC);
    int err_fd = ::memfd_create("git-err", MFD_CLOEXEC);
    asio::io_context ctx;
    try {
        asio::writable_pipe in(ctx);
        std::filesystem::path cwd = call.cwd.empty() ? std::filesystem::path(".") : call.cwd;
        // The launcher's own environment pointer, not bp::process_environment: Boost 1.81's
        // environment.hpp does not compile on its own.
        std::vector<const char*> envp;
        for (const std::string& e : env) envp.push_back(e.c_str());
        envp.push_back(nullptr);
        bp::default_process_launcher launcher;
        launcher.env = envp.data();
        bp::process proc = launcher(ctx, exe, call.args, bp::process_stdio{in, out_fd, err_fd},
                                    bp::process_start_dir(cwd));
        std::string input_copy = call.input;
        asio::async_write(in, asio::buffer(input_copy), [&](boost::system::error_code, size_t) {
            boost::system::error_code ignored;
            in.close(ignored);
        });
        bool timed_out = false;
        asio::steady_timer timer(ctx, call.timeout);
        timer.async_wait([&](boost::system::error_code e) {
            if (e) return;
            timed_out = true;
            boost::system::error_code ignored;
            proc.terminate(ignored);
            in.close(ignored);
        });
        int exit_code = -1;
        proc.async_wait([&](boost::system::error_code e, int code) {
            timer.cancel();
            boost::system::error_code ignored;
            in.close(ignored);  // git did not read it all: do not wait to write the rest
            exit_code = e ? -1 : code;
        });
        ctx.run();
        result.exit_code = exit_code;
        result.out = read_back(out_fd);
        result.err = read_back(err_fd);
        if (timed_out) {
            result.exit_code = 124;
            result.err = "git did not finish within " + std::to_string(call.timeout.count()) + " ms";
        }
    } catch (const std::exception& e) {
        result.exit_code = 126;
        result.err = std::string("cannot run git: ") + e.what();
    }
    ::close(out_fd);
    ::close(err_fd);
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
