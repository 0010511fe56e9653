// The one door to tmux. Everything that talks to tmux goes through a Tmux: the real client runs
// the tmux binary on the home's private socket; tests use a strict recording fake
// (tests/support/fake_tmux.hpp) that fails on any call it was not told to expect.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace team::tmux {

struct TmuxResult {
    int exit_code = 0;
    std::string out;
    std::string err;
    bool ok() const { return exit_code == 0; }
};

class Tmux {
  public:
    virtual ~Tmux() = default;
    // Runs one tmux client with these arguments (after the socket and config options). Several
    // commands can be batched in one call by separating them with a ";" argument. `input` goes
    // to tmux's stdin (for load-buffer -). Never throws for a tmux error: see exit_code and err.
    virtual TmuxResult run(const std::vector<std::string>& args, std::string_view input = {}) = 0;
};

// The real client: `tmux -S <socket> -f <config> ARGS` (or `-L <name>` when the socket path
// is too long for a Unix socket), each call with a timeout, run with Boost.Process v2.
class TmuxClient final : public Tmux {
  public:
    // `socket_args` are the arguments that select the server: {"-S", path} or {"-L", name}.
    TmuxClient(std::vector<std::string> socket_args, std::filesystem::path config,
               std::chrono::milliseconds timeout = std::chrono::seconds(10));
    TmuxResult run(const std::vector<std::string>& args, std::string_view input = {}) override;

  private:
    std::vector<std::string> socket_args_;
    std::filesystem::path config_;
    std::chrono::milliseconds timeout_;
};

// The full path of the tmux binary (looked up once in PATH), or "" when tmux is missing.
std::string tmux_binary();

}  // namespace team::tmux
