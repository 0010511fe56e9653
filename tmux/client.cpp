// The only file that includes Boost.Process (and Asio): it is heavy to compile.
#define BOOST_PROCESS_USE_STD_FS 1
// Boost 1.81 forgets these two with BOOST_PROCESS_USE_STD_FS.
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/writable_pipe.hpp>
#include <boost/asio/write.hpp>
#include <boost/io/quoted.hpp>
#include <boost/optional.hpp>
#include <boost/process/v2/process.hpp>
#include <boost/process/v2/stdio.hpp>

#include <cstdlib>
#include <optional>

#include "base/programs.hpp"
#include "base/umask.hpp"
#include "tmux/tmux.hpp"

namespace team::tmux {

namespace asio = boost::asio;
namespace bp = boost::process::v2;

std::string tmux_binary() {
    static const std::string path = [] {
        const char* env_path = std::getenv("PATH");
        return find_program("tmux", env_path ? env_path : "").value_or("");
    }();
    return path;
}

TmuxClient::TmuxClient(std::vector<std::string> socket_args, std::filesystem::path config,
                       std::chrono::milliseconds timeout)
    : socket_args_(std::move(socket_args)), config_(std::move(config)), timeout_(timeout) {}

TmuxResult TmuxClient::run(const std::vector<std::string>& args, std::string_view input) {
    TmuxResult result;
    std::string exe = tmux_binary();
    if (exe.empty()) {
        result.exit_code = 127;
        result.err = "tmux is not installed (run scripts/setup)";
        return result;
    }
    std::vector<std::string> argv = socket_args_;
    argv.push_back("-f");
    argv.push_back(config_.string());
    argv.insert(argv.end(), args.begin(), args.end());

    // stdout and stderr go to memory files, not pipes: a tmux client that starts the server
    // hands its descriptors down to it, and a pipe held by the server would never reach EOF.
    int out_fd = ::memfd_create("tmux-out", MFD_CLOEXEC);
    int err_fd = ::memfd_create("tmux-err", MFD_CLOEXEC);
    auto read_back = [](int fd) {
        std::string text;
        char buf[4096];
        ssize_t n;
        off_t offset = 0;
        while ((n = ::pread(fd, buf, sizeof buf, offset)) > 0) {
            text.append(buf, static_cast<size_t>(n));
            offset += n;
        }
        return text;
    };

    asio::io_context ctx;
    try {
        asio::writable_pipe in(ctx);
        // A tmux server started by this call keeps the umask for every pane: the user's, not
        // team's own (base/umask.hpp). umask is per process: set around the launch only.
        mode_t own = ::umask(command_umask());
        std::optional<bp::process> launched;
        try {
            launched.emplace(ctx, exe, argv, bp::process_stdio{in, out_fd, err_fd});
        } catch (...) {
            ::umask(own);
            throw;
        }
        ::umask(own);
        bp::process& proc = *launched;
        std::string input_copy(input);
        asio::async_write(in, asio::buffer(input_copy), [&](boost::system::error_code, size_t) {
            boost::system::error_code ignored;
            in.close(ignored);
        });
        bool timed_out = false;
        asio::steady_timer timer(ctx, timeout_);
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
            in.close(ignored);  // tmux did not read it all: do not wait to write the rest
            exit_code = e ? -1 : code;
        });
        ctx.run();
        result.exit_code = exit_code;
        result.out = read_back(out_fd);
        result.err = read_back(err_fd);
        if (timed_out) {
            result.exit_code = 124;
            result.err = "tmux did not answer within " + std::to_string(timeout_.count()) + " ms";
        }
    } catch (const std::exception& e) {
        result.exit_code = 126;
        result.err = std::string("cannot run tmux: ") + e.what();
    }
    ::close(out_fd);
    ::close(err_fd);
    return result;
}

}  // namespace team::tmux
