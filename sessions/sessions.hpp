// Sessions (SPEC 9): a named state (cwd, variables, functions, aliases, options) that lasts
// between commands, each of which runs in a fresh bash of its own (sessions/session_state.hpp).
//
// `exec` runs a command in the foreground under a Supervisor in the calling process, with the
// command in its own process group, and writes back what it changed when it ends by itself
// (any exit code), not when it is killed or timed out. `start` is a background shell (SPEC 8)
// that starts from the session's state and never writes back, like `cmd &` in a shell. Session
// names are per home. A session is made by its first exec or start.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/time.hpp"
#include "proc/supervisor.hpp"
#include "sessions/session_state.hpp"
#include "shells/shells.hpp"
#include "state/session_records.hpp"
#include "state/store.hpp"

namespace team::sessions {

using shells::Millis;

struct SessionRecord {
    std::int64_t id = 0;
    std::string name;
    SessionState state;
    std::optional<std::int64_t> team_id;
    std::string created_by;
    EpochMs created_at = 0, updated_at = 0;
    std::int64_t commands = 0;
};

struct SessionExecRequest {
    std::string name;
    std::string command;
    std::optional<Millis> timeout;
    std::size_t output_limit = 16 << 20;  // bytes kept of each of stdout and stderr (the end)
    std::optional<std::int64_t> team_id;  // of a new session
    std::string actor;
    // Each chunk of output as it arrives (may be empty).
    std::function<void(std::string_view)> on_stdout, on_stderr;
    // Each warning when it arises (before the command runs, for a lost cwd).
    std::function<void(const std::string&)> on_warning;
};

struct SessionExecResult {
    proc::ExitStatus status;
    bool timed_out = false;
    bool state_kept = false;  // what it changed was written back
    std::string stdout_text, stderr_text;
    bool truncated = false;
    std::string cwd;  // the session's cwd after the command
    std::vector<std::string> warnings;
    // What `team session exec` returns: the command's code, 128+N for signal N, 124 on timeout.
    int exit_code() const;
};

struct SessionStartRequest {
    std::string name;
    std::string command;
    std::optional<Millis> timeout;
    std::optional<std::int64_t> output_limit;
    std::optional<std::int64_t> team_id;
    std::optional<std::string> agent;
    std::string actor;
};

struct SessionCloseResult {
    std::string name;
    int execs_killed = 0;
    std::vector<std::string> shells_killed;
    int survivors = 0;  // processes left after the timeout (only without force)
};

class Sessions {
  public:
    Sessions(Store& store, const Clock& clock) : store_(store), records_(store), clock_(clock) {}

    SessionExecResult exec(const SessionExecRequest& request);
    // The shell started (returns once its command runs), and the warnings (a lost cwd).
    std::pair<ShellRecord, std::vector<std::string>> start(const SessionStartRequest& request);

    std::vector<SessionRecord> list();
    // Not found: `not_found` with a did-you-mean.
    SessionRecord get(const std::string& name);
    // What of it runs now: its execs (those whose process is gone are cleaned up first) and its
    // background shells.
    std::vector<SessionExec> running_execs(const SessionRecord& session);
    std::vector<ShellRecord> running_shells(const SessionRecord& session);

    // Forgets the session, then ends its running commands: SIGTERM, SIGKILL after `timeout`.
    SessionCloseResult close(const std::string& name, Millis timeout, const std::string& actor);

  private:
    // An exec whose `team session exec` process is gone: what is left of its command is killed
    // and its row removed. True if it was gone.
    bool reconcile(const SessionExec& exec);

    Store& store_;
    SessionRecords records_;
    const Clock& clock_;
};

}  // namespace team::sessions
