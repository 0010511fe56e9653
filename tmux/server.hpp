// The home's private tmux server (SPEC 3.1): every home has its own server on its own socket,
// with our own config, so team never talks to the user's default server and never touches a
// pane it did not create. Panes are always targeted by id (%N) and sessions as =NAME: (exact).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tmux/tmux.hpp"

namespace team::tmux {

struct PaneInfo {
    std::string id;  // %N
    pid_t pid = 0;   // the pane's first process
    std::string session;
};

class TmuxServer {
  public:
    explicit TmuxServer(Tmux& tmux) : tmux_(tmux) {}

    // {"-S", "<home>/tmux.sock"}, or {"-L", "team-<hash of home>"} when that path is too long
    // for a Unix socket.
    static std::vector<std::string> socket_args(const std::filesystem::path& home);
    // Whether the home's server answers on its socket, without starting a tmux client: a
    // connect() to the socket (a stale socket of a dead server refuses it).
    static bool server_alive(const std::filesystem::path& home);
    // Writes <home>/tmux.conf (our settings: remain-on-exit, titles, sizes) if missing; returns it.
    static std::filesystem::path ensure_config(const std::filesystem::path& home);
    // Replaces this process with a tmux client attached to `session` of the home's server, with
    // `pane` selected first when it is not empty. Returns only by throwing (no tmux, no exec).
    [[noreturn]] static void exec_attach(const std::filesystem::path& home,
                                         const std::string& session, const std::string& pane);

    // Starts `argv` (executed directly, never through a shell) in a new pane of `session`,
    // creating the session if it does not exist; titles the pane, copies everything it shows to
    // `log` (appending) from its first byte on, and tiles the window. One tmux call (two when
    // the session is new); the focus of an attached user stays where it was.
    PaneInfo open_pane(const std::string& session, const std::vector<std::string>& argv,
                       const std::string& cwd, const std::string& title,
                       const std::filesystem::path& log);

    // Every pane of the server; empty when no server runs.
    std::vector<PaneInfo> list_panes();
    // Kills one pane; false when it was already gone (not an error).
    bool kill_pane(const std::string& pane_id);
    // Kills pane `pane_id` of `session` (found in `panes`, a listing of this server) only if its
    // first process is `first_pid`: pane ids start again at %0 on a new server, so an id alone
    // may name another agent's pane. True when it was killed.
    bool kill_pane_run_by(const std::vector<PaneInfo>& panes, const std::string& pane_id,
                          const std::string& session, pid_t first_pid);
    // Kills the session of that exact name with its panes; false when there was none. The
    // server goes with its last session (exit-empty).
    bool kill_session(const std::string& session);

    // Types `text` into the pane as a person pasting it would: through a paste buffer, bracketed
    // when the program asked for bracketed paste, in one tmux call. Then Enter, separately, once
    // the pane shows the text's last word (or after 1 s: a program may show nothing).
    void type_text(const std::string& pane_id, const std::string& text, bool press_enter);

  private:
    TmuxResult checked(const std::vector<std::string>& args, std::string_view input = {});
    // Runs a kill-pane or kill-session: true when it killed, false when there was nothing
    // (no server, no such target), a `failed` error otherwise.
    bool kill_target(const std::vector<std::string>& args);

    Tmux& tmux_;
};

// tmux says there is no server (or no such session) rather than failing for another reason.
bool is_no_server(const TmuxResult& r);

}  // namespace team::tmux
