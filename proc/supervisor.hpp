// Runs one command to its end and leaves nothing of it behind, in the manner of podman's conmon.
//
// The Supervisor makes its process a child subreaper, so every descendant of the command that
// escapes (setsid, double fork) is reparented to it and can be found and reaped. The command
// runs in a process group of its own, with PR_SET_PDEATHSIG so that it dies if the supervisor
// is killed. Its stdout and stderr go to a pipe that the supervisor reads (or, for a command
// that owns a terminal, straight to that terminal). The supervisor enforces the timeout
// (signal, grace, SIGKILL), and when the command ends, by itself or killed, it ends and reaps
// whatever is left below it. Waits are instant: a signalfd for SIGCHLD, never a sleep loop.
//
// Used by `team run` (in the foreground), by `team shell start` (in a detached process, see
// shells.hpp) and, for agents, inside their tmux panes.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/programs.hpp"
#include "base/umask.hpp"

namespace team::proc {

// When the supervisor should end its command on someone's request (SPEC 7: a confirmed
// shutdown, a --force-after deadline): asked again whenever SIGUSR1 reaches the supervisor and
// when a planned stop comes due. `at` none: no stop planned; `at` now or past: stop now.
struct StopPlan {
    std::optional<std::chrono::steady_clock::time_point> at;
    std::chrono::milliseconds grace{5000};  // SIGTERM, then SIGKILL after this
};

struct LaunchSpec {
    std::vector<std::string> argv;  // argv[0] is looked up in the PATH of `env`
    std::string cwd;
    std::vector<std::string> env;  // the command's whole environment, "K=V"
    bool capture_output = true;    // stdout+stderr to the supervisor; false: inherited
    bool separate_stderr = false;  // with capture_output: stderr to its own callback
    bool null_stdin = true;        // stdin from /dev/null; false: inherited
    bool foreground_tty = false;   // make the command the terminal's foreground group
    std::optional<std::chrono::milliseconds> timeout;
    int timeout_signal = 15;  // SIGTERM
    std::chrono::milliseconds grace{5000};
    // Asked on SIGUSR1 (`woken` true) and when a planned stop comes due (none: SIGUSR1 is
    // ignored).
    std::function<StopPlan(bool woken)> stop_plan;
    // A bell that wakes the stop plan as SIGUSR1 does, for those who cannot signal this process
    // (a shared store's listener: state/supervisor_bell.hpp). `bell_fd()` is polled with the
    // signals (-1: not now); when it is readable, or every `bell_retry` while it is -1,
    // `bell_rang()` reads it and says whether it rang.
    std::function<int()> bell_fd;
    std::function<bool()> bell_rang;
    std::chrono::milliseconds bell_retry{200};
    // Descriptors of the supervisor handed to the command: {ours, the number it gets there}
    // (numbers from 3 up; every other descriptor is closed at exec).
    std::vector<std::pair<int, int>> pass_fds;
    mode_t umask = command_umask();  // the user's, not team's own 077
};

// How a process ended: exactly one of the two is set.
struct ExitStatus {
    std::optional<int> exit_code;
    std::optional<int> signal;
};

// The exit code a command that waits for another returns (`team run`, `session exec`): the
// command's own, 128+N for signal N, 124 when timed out.
int exit_code_of(const ExitStatus& status, bool timed_out);

// Whether the command can be handed the terminal (stdin is one and our group is in front), and
// the terminal taken back to our group after it ran there.
bool terminal_is_ours();
void take_terminal_back();

struct RunOutcome {
    ExitStatus status;
    bool timed_out = false;    // the supervisor's timeout ended it
    bool interrupted = false;  // SIGTERM, SIGINT or SIGHUP to the supervisor ended it
    bool hung_up = false;      // a SIGHUP reached the supervisor (its terminal went)
};

// The same, or a `failed` error that says why not ("command not found", "not an executable
// file").
std::string require_program(const std::string& program, const std::string& path,
                            const std::string& cwd);

// This process's environment without the variables whose names start with one of
// `drop_prefixes`, then `overrides` ("K=V") applied in order: each key appears once, and for a
// key given twice the last value counts.
std::vector<std::string> merged_environment(const std::vector<std::string>& overrides,
                                            const std::vector<std::string>& drop_prefixes = {});

// A descriptor of an anonymous memory file holding `content`, at offset 0, close-on-exec (for
// LaunchSpec::pass_fds, or for a child to open as /proc/PID/fd/N).
int memory_file(const char* name, std::string_view content);

class Supervisor {
  public:
    // Makes this process a child subreaper and takes SIGCHLD, SIGTERM, SIGINT, SIGHUP and
    // SIGUSR1 into a signalfd. One Supervisor per process.
    Supervisor();
    ~Supervisor();
    Supervisor(const Supervisor&) = delete;
    Supervisor& operator=(const Supervisor&) = delete;

    // Starts the command. Throws a `failed` error saying why when it cannot be run (not found,
    // not executable, bad cwd); then nothing was left running.
    pid_t start(const LaunchSpec& spec);
    pid_t child_pid() const { return child_; }
    std::uint64_t child_start_time() const { return child_start_; }

    // Runs until the command has ended and nothing below the supervisor is left; passes every
    // chunk of output to `on_output` as it arrives (stderr to `on_error` instead when the spec
    // keeps it separate).
    RunOutcome run(const std::function<void(std::string_view)>& on_output,
                   const std::function<void(std::string_view)>& on_error = {});

    // Ends the command and everything below the supervisor now (SIGTERM with SIGCONT, SIGKILL
    // after `grace`), for a command that must not run on (its record was taken from it).
    void stop(std::chrono::milliseconds grace) { end_tree(15, grace); }

  private:
    void reap(RunOutcome& outcome);
    void end_tree(int sig, std::chrono::milliseconds grace);

    LaunchSpec spec_;
    int signal_fd_ = -1;
    int output_fd_ = -1;
    int error_fd_ = -1;  // stderr, when kept apart
    pid_t child_ = 0;
    std::uint64_t child_start_ = 0;
    bool child_done_ = false;
    std::vector<int> blocked_;  // the signals taken into the signalfd
};

}  // namespace team::proc
