// The supervisor of one background shell: the body of the hidden `team __supervise ID`.
#include <fcntl.h>
#include <unistd.h>

#include "base/duration.hpp"
#include "base/error.hpp"
#include "proc/detach.hpp"
#include "proc/pidfd.hpp"
#include "proc/process_table.hpp"
#include "shells/output_file.hpp"
#include "shells/shells.hpp"

namespace team::shells {

namespace fs = std::filesystem;

namespace {

// The supervisor's own environment, then the --env entries (which win), then the marker.
std::vector<std::string> command_environment(const ShellRecord& shell, const fs::path& home,
                                             bool session) {
    std::vector<std::string> overrides = shell.env;
    // The marker that finds what is left of the shell if its supervisor dies: the id, and the
    // home (ids are unique per home only).
    overrides.push_back("TEAM_SHELL_ID=" + shell.id);
    overrides.push_back("TEAM_SHELL_HOME=" + home.string());
    // A shell started from inside a session's exec is not part of that exec: without its
    // marker, cleaning up after that exec never touches the shell.
    // A session's bash starts from the session's state only: no startup file, no options.
    if (session) {
        return proc::merged_environment(overrides, session_dropped_environment());
    }
    return proc::merged_environment(overrides, {"TEAM_SESSION_EXEC="});
}

}  // namespace

std::vector<std::string> session_dropped_environment() {
    return {"BASH_ENV=", "ENV=", "SHELLOPTS=", "BASHOPTS=", "TEAM_SESSION_EXEC="};
}

int Shells::supervise(Store& store, const std::string& id, int ready_fd) {
    // The command must not inherit the channel to the starter: the starter would wait for EOF.
    if (ready_fd >= 0) ::fcntl(ready_fd, F_SETFD, FD_CLOEXEC);
    SystemClock clock;
    ShellRecords records(store);
    auto shell = records.find(id);
    auto reply = [&](const std::string& text) { proc::answer_starter(ready_fd, text); };
    if (!shell || shell->status != ShellStatus::starting) {
        reply("err shell " + id + " is not waiting to start");
        return 1;
    }
    std::string actor = shell->agent.value_or("supervisor");

    proc::Supervisor supervisor;
    proc::LaunchSpec spec;
    spec.argv = shell->command;
    spec.cwd = shell->cwd;
    spec.env = command_environment(*shell, store.home(), shell->session.has_value());
    if (shell->timeout_ms) spec.timeout = Millis(*shell->timeout_ms);
    int script_fd = -1;
    try {
        if (auto script = records.script(id)) {
            // A session's command: bash reads the script that restores the session on fd 3.
            script_fd = proc::memory_file("team-session-script", *script);
            spec.argv = {"bash", "--noprofile", "--norc", "/dev/fd/3"};
            spec.pass_fds = {{script_fd, 3}};
        }
        supervisor.start(spec);
        if (script_fd >= 0) ::close(script_fd);
    } catch (const Error& e) {
        record_end(records, clock, id, ShellStatus::failed, {}, e.what(), actor);
        reply(std::string("err ") + e.what());
        return 1;
    }
    records.mark_running(id, supervisor.child_pid(),
                         static_cast<std::int64_t>(supervisor.child_start_time()), ::getpid(),
                         static_cast<std::int64_t>(proc::start_time_of(::getpid()).value_or(0)));
    reply("ok " + std::to_string(supervisor.child_pid()));

    OutputFile output(shell->output_file, shell->output_limit.value_or(kDefaultOutputLimit));
    proc::RunOutcome outcome = supervisor.run([&](std::string_view chunk) {
        if (output.append(chunk)) {
            records.mark_truncated(id);
        }
    });

    auto now = records.find(id);
    if (now && now->kill_requested_by) actor = *now->kill_requested_by;  // who ended it
    ShellStatus status = ShellStatus::completed;
    std::optional<std::string> error;
    if (outcome.timed_out) {
        status = ShellStatus::timed_out;
        error = "timed out after " + format_duration(Millis(shell->timeout_ms.value_or(0)));
    } else if ((now && now->kill_requested_by) || outcome.interrupted || outcome.status.signal) {
        status = ShellStatus::killed;
    }
    record_end(records, clock, id, status, outcome.status, error, actor);
    return 0;
}

}  // namespace team::shells
