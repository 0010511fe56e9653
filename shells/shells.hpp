// Background shells (SPEC 8): commands that run detached under their own supervisor, outlive
// the command that started them, and can be listed, watched, waited on, timed out and killed.
//
// `start` records the shell and starts a detached supervisor (`team __supervise ID`,
// shells/supervise.cpp; proc/detach.hpp), which starts the command, writes its output to
// <home>/shells/ID.out (shells/output_file.hpp) and records how it ended. A kill is done by the
// caller itself, on the whole tree below the supervisor, so it works even when the supervisor
// is stuck; the supervisor then records the end. If the supervisor is killed, its command dies
// with it (PR_SET_PDEATHSIG), and the next command that looks at the shell ends what is left
// (found by the TEAM_SHELL_ID in its environment) and records it as killed: nothing runs on
// unrecorded. The records are kept by state/shell_records.hpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/states.hpp"
#include "base/time.hpp"
#include "proc/supervisor.hpp"
#include "state/change_watch.hpp"
#include "state/shell_records.hpp"
#include "state/store.hpp"

namespace team::shells {

using Millis = std::chrono::milliseconds;

// Output kept by default: the last 16 MiB (SPEC 8 leaves it open; a runaway command must not
// fill the disk).
constexpr std::int64_t kDefaultOutputLimit = 16 << 20;

// SPEC 8 "Shell JSON", plus "team" and "error".
nlohmann::json to_json(const ShellRecord& shell);
// {"exitCode": n|null, "signal": "SIGKILL"|null}, or null while running.
nlohmann::json exit_status_json(const ShellRecord& shell);

struct ShellStart {
    std::vector<std::string> argv;
    std::string cwd;
    std::vector<std::string> env;  // "K=V" added to the caller's environment
    std::optional<Millis> timeout;
    std::optional<std::int64_t> output_limit;  // bytes of output kept (the end)
    std::optional<std::int64_t> team_id;
    std::optional<std::string> agent;
    std::string actor;  // who asked, for the activity log
    // A session's command (SPEC 9): `argv` is what is shown (bash -c STRING); what runs is
    // bash reading `script` on fd 3 (sessions/session_state.hpp).
    std::optional<std::string> session;
    std::optional<std::string> script;
};

struct KillResult {
    bool success = false;
    std::string signal_sent = "none";
    bool force_killed = false;
    ShellRecord shell;
    std::optional<std::string> error;
};

// SPEC 13: SIGINT to the whole tree, 5 s, then SIGKILL.
constexpr Millis kTerminateGrace{5000};

// What a terminate did: "terminated" when it ended the shell, "already_finished" when the shell
// had ended by itself first (also when that end met the signal: a race is never an error).
struct Termination {
    std::string status;
    // The exit code, or -N for signal N (as Python's Popen.returncode); none before an end.
    std::optional<int> returncode;
    ShellRecord shell;
    std::optional<std::string> error;  // the end could not be confirmed (KillResult::error)
};

// The returncode of an ended shell, as a Termination gives it.
std::optional<int> returncode_of(const ShellRecord& shell);

struct OutputSlice {
    std::string output;
    bool truncated = false;
};

class Shells {
  public:
    Shells(Store& store, const Clock& clock) : store_(store), records_(store), clock_(clock) {}

    // Starts the shell and returns once its command runs. Throws `failed` (the record stays,
    // status failed) when the command cannot be started, `usage` for bad input.
    ShellRecord start(const ShellStart& request);

    // The shell, brought up to date first (see reconcile). Not found: "Shell not found: ID".
    ShellRecord get(const std::string& id);
    // Running shells (all: finished ones too), oldest first; of one agent or one session.
    std::vector<ShellRecord> list(bool all, const std::optional<std::string>& agent,
                                  const std::optional<std::string>& session = std::nullopt);

    // Signals the whole tree, waits up to `timeout`, then SIGKILL unless !force.
    KillResult kill(const std::string& id, int sig, Millis timeout, bool force,
                    const std::string& actor);
    // Ends the shell as SPEC 13's Execution Termination does: a kill with SIGINT, 5 s of
    // grace, then SIGKILL (shells/terminate.cpp). Logs execution_cancelled with the outcome.
    Termination terminate(const std::string& id, const std::string& actor);
    // Blocks until the shell has ended; nothing when `timeout` ran out first.
    std::optional<ShellRecord> wait(const std::string& id, std::optional<Millis> timeout);
    // Kills it if running, deletes its output and forgets it.
    void release(const std::string& id, const std::string& actor);
    // Releases finished shells that ended more than `older_than` ago; returns their ids.
    std::vector<std::string> gc(Millis older_than, const std::string& actor);

    // What it printed: all of it, or the last `limit` bytes cut on a UTF-8 boundary.
    OutputSlice output(const ShellRecord& shell, std::optional<std::size_t> limit);
    // Follows its output: `on_output` gets what is there (its last `limit` bytes, cut on a
    // character boundary), then each piece that comes, until the shell has ended or `stop`
    // (may be empty) says so. Returns the record as it was last read.
    ShellRecord follow(const std::string& id, std::optional<std::size_t> limit,
                       const std::function<void(std::string_view)>& on_output,
                       const std::function<bool()>& stop = {});

    // The body of the hidden `team __supervise ID` (shells/supervise.cpp): runs the shell's
    // command to its end and records it. `ready_fd` receives "ok PID" or "err MESSAGE" once the
    // command runs or failed.
    static int supervise(Store& store, const std::string& id, int ready_fd);

    std::filesystem::path shells_dir() const { return store_.home() / "shells"; }

  private:
    std::optional<ShellRecord> find(const std::string& id);
    // The kill itself: `logged` is the execution_cancelled entry of the request (null: none).
    KillResult end_tree(const std::string& id, int sig, Millis timeout, bool force,
                        const std::string& actor, const nlohmann::json& logged);
    // The shell once its supervisor has started the command (or it ended, or its start ran
    // out of time).
    ShellRecord await_start(const std::string& id, ChangeWatch& watch);
    // A shell recorded as running whose supervisor is gone: ends what is left of it and
    // records that. True if the record changed.
    bool reconcile(ShellRecord& shell);
    void finish_lost(ShellRecord& shell, const std::string& why);

    Store& store_;
    ShellRecords records_;
    const Clock& clock_;
};

// What the caller's environment loses on its way to a session's bash (prefixes of "K=V"): a
// startup file and options of its own, and the marker of an exec it may run inside. Here, below
// sessions/, because a session's background command is a shell.
std::vector<std::string> session_dropped_environment();

// Records the end of a shell unless something else already did (shell_exited logged). Returns
// the record.
ShellRecord record_end(ShellRecords& records, const Clock& clock, const std::string& id,
                       ShellStatus status, const proc::ExitStatus& exit,
                       const std::optional<std::string>& error, const std::string& actor);

}  // namespace team::shells
