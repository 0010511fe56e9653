#include "sessions/sessions.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "base/error.hpp"
#include "base/names.hpp"
#include "base/text.hpp"
#include "proc/pidfd.hpp"
#include "proc/process_table.hpp"
#include "proc/terminate.hpp"

namespace team::sessions {

using proc::exit_code_of;
using proc::LaunchSpec;
using proc::memory_file;
using proc::merged_environment;
using proc::Pidfd;
using proc::RunOutcome;
using proc::Supervisor;
using proc::take_terminal_back;
using proc::terminal_is_ours;
using proc::terminate_tree;
using proc::terminate_trees;
using proc::TerminateOutcome;
using proc::TreeTarget;
using shells::KillResult;
using shells::Shells;
using shells::ShellStart;

namespace fs = std::filesystem;

namespace {

void check_session_name(const std::string& name) {
    check_name(name, "session name");
}

bool is_directory(const std::string& path) {
    struct stat st {};
    return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Where the caller is, by the name it used ($PWD, when that names the current directory).
std::string caller_cwd() {
    const char* pwd = std::getenv("PWD");
    struct stat named {
    }, here{};
    if (pwd && pwd[0] == '/' && ::stat(pwd, &named) == 0 && ::stat(".", &here) == 0 &&
        named.st_dev == here.st_dev && named.st_ino == here.st_ino) {
        return pwd;
    }
    return fs::current_path().string();
}

// The session's directory, or, when it is gone, $HOME (else /) with a warning.
std::string usable_cwd(const std::string& cwd, std::vector<std::string>& warnings) {
    if (is_directory(cwd)) return cwd;
    const char* home = std::getenv("HOME");
    std::string fallback = home && is_directory(home) ? home : "/";
    warnings.push_back("the session's directory " + quote(cwd) +
                       " no longer exists; the command runs in " + quote(fallback));
    return fallback;
}

SessionRecord from_stored(const StoredSession& stored) {
    SessionRecord s;
    s.id = stored.id;
    s.name = stored.name;
    s.state = session_state_from_json(stored.state);
    s.team_id = stored.team_id;
    s.created_by = stored.created_by;
    s.created_at = stored.created_at;
    s.updated_at = stored.updated_at;
    s.commands = stored.commands;
    return s;
}

// A new session starts where its first command is called from.
NewSession fresh_session() {
    SessionState state;
    state.cwd = caller_cwd();
    return {to_json(state), state.cwd};
}

// The markers that find what is left of an exec whose `team session exec` died.
std::vector<std::string> exec_marker(std::int64_t exec_id, const fs::path& home) {
    return {"TEAM_SESSION_EXEC=" + std::to_string(exec_id), "TEAM_SESSION_HOME=" + home.string()};
}

std::string read_memory_file(int fd) {
    struct stat st {};
    if (::fstat(fd, &st) != 0 || st.st_size <= 0) return {};
    std::string bytes(static_cast<std::size_t>(st.st_size), '\0');
    ssize_t n = ::pread(fd, bytes.data(), bytes.size(), 0);
    bytes.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    return bytes;
}

class Descriptor {
  public:
    explicit Descriptor(int fd) : fd_(fd) {}
    ~Descriptor() {
        if (fd_ >= 0) ::close(fd_);
    }
    Descriptor(const Descriptor&) = delete;
    Descriptor& operator=(const Descriptor&) = delete;
    int get() const { return fd_; }
    // The path a child of this process opens it by.
    std::string path() const {
        return "/proc/" + std::to_string(::getpid()) + "/fd/" + std::to_string(fd_);
    }

  private:
    int fd_;
};

}  // namespace

int SessionExecResult::exit_code() const {
    return exit_code_of(status, timed_out);
}

SessionExecResult Sessions::exec(const SessionExecRequest& request) {
    check_session_name(request.name);
    SessionExecResult result;
    auto [stored, exec_id] =
        records_.open_exec(request.name, request.team_id, request.actor, clock_.now(),
                           fresh_session, request.command, static_cast<std::int64_t>(::getpid()),
                           static_cast<std::int64_t>(proc::start_time_of(::getpid()).value_or(0)));
    SessionRecord session = from_stored(stored);
    // From here on the row is removed whatever happens.
    struct Unregister {
        SessionRecords& records;
        std::int64_t id;
        bool done = false;
        ~Unregister() {
            if (done) return;
            try {
                records.remove_exec(id);
            } catch (...) {
            }
        }
    } unregister{records_, exec_id};

    std::string cwd = usable_cwd(session.state.cwd, result.warnings);
    bool moved = cwd != session.state.cwd;
    if (request.on_warning)
        for (const auto& w : result.warnings) request.on_warning(w);
    Descriptor snapshots(memory_file("team-session-snapshots", ""));
    Descriptor scratch(memory_file("team-session-scratch", ""));
    RestoreScript how;
    how.command = request.command;
    how.snapshot_path = snapshots.path();
    how.scratch_path = scratch.path();
    Descriptor script(memory_file("team-session-script", restore_script(session.state, how)));

    LaunchSpec spec;
    spec.argv = {"bash", "--noprofile", "--norc", "/dev/fd/3"};
    spec.cwd = cwd;
    auto markers = exec_marker(exec_id, store_.home());
    markers.push_back("TEAM_SESSION=" + request.name);
    markers.push_back("PWD=" + cwd);
    spec.env = merged_environment(markers, shells::session_dropped_environment());
    spec.separate_stderr = true;
    spec.null_stdin = false;
    spec.timeout = request.timeout;
    spec.pass_fds = {{script.get(), 3}};
    // On a terminal the command gets it (as the foreground group), as with `team run`.
    bool tty = terminal_is_ours();
    spec.foreground_tty = tty;

    Supervisor supervisor;
    supervisor.start(spec);
    RunOutcome outcome = supervisor.run(
        [&](std::string_view chunk) {
            if (request.on_stdout) request.on_stdout(chunk);
            keep_tail(result.stdout_text, chunk, request.output_limit, result.truncated);
        },
        [&](std::string_view chunk) {
            if (request.on_stderr) request.on_stderr(chunk);
            keep_tail(result.stderr_text, chunk, request.output_limit, result.truncated);
        });
    if (tty) take_terminal_back();
    cut_tail(result.stdout_text, request.output_limit, result.truncated);
    cut_tail(result.stderr_text, request.output_limit, result.truncated);
    result.status = outcome.status;
    result.timed_out = outcome.timed_out;

    // What it changed counts only when it ended by itself (an exit code, whichever).
    std::optional<StateChanges> changes;
    if (!outcome.timed_out && !outcome.interrupted && !outcome.status.signal) {
        ShellCapture capture = parse_capture(read_memory_file(snapshots.get()));
        if (capture.before && capture.after) {
            changes = diff(*capture.before, *capture.after, session.state);
            if (moved) changes->cwd = capture.after->cwd;
        } else {
            result.warnings.push_back(
                "the command left no state to keep (it replaced the shell with exec, or "
                "replaced team's EXIT trap); the session is as it was");
            if (request.on_warning) request.on_warning(result.warnings.back());
        }
    }
    result.cwd = session.state.cwd;
    std::function<std::optional<nlohmann::json>(nlohmann::json)> merge;
    if (changes) {
        // Written over the state as it is now: what another command changed meanwhile stays,
        // unless this one changed the same thing (then the one that ends last wins).
        merge = [&](nlohmann::json stored_now) -> std::optional<nlohmann::json> {
            SessionState now = session_state_from_json(stored_now);
            apply(now, *changes);
            result.cwd = now.cwd;
            result.state_kept = true;
            if (changes->empty()) return std::nullopt;
            return to_json(now);
        };
    }
    records_.finish_exec(exec_id, session.id, merge);
    unregister.done = true;
    return result;
}

std::pair<ShellRecord, std::vector<std::string>> Sessions::start(
    const SessionStartRequest& request) {
    check_session_name(request.name);
    SessionRecord session = from_stored(
        records_.open(request.name, request.team_id, request.actor, clock_.now(), fresh_session));
    std::vector<std::string> warnings;
    std::string cwd = usable_cwd(session.state.cwd, warnings);
    RestoreScript how;
    how.command = request.command;
    ShellStart shell;
    shell.argv = {"bash", "-c", request.command};
    shell.cwd = cwd;
    shell.env = {"PWD=" + cwd, "TEAM_SESSION=" + request.name};
    shell.timeout = request.timeout;
    shell.output_limit = request.output_limit;
    shell.team_id = request.team_id ? request.team_id : session.team_id;
    shell.agent = request.agent;
    shell.actor = request.actor;
    shell.session = request.name;
    shell.script = restore_script(session.state, how);
    Shells shells(store_, clock_);
    return {shells.start(shell), warnings};
}

std::vector<SessionRecord> Sessions::list() {
    std::vector<SessionRecord> sessions;
    for (const auto& stored : records_.list()) sessions.push_back(from_stored(stored));
    return sessions;
}

SessionRecord Sessions::get(const std::string& name) {
    check_session_name(name);
    if (auto session = records_.find(name)) return from_stored(*session);
    std::vector<std::string> names;
    for (const auto& s : list()) names.push_back(s.name);
    throw not_found("session " + quote(name) + " not found" + did_you_mean(name, names));
}

bool Sessions::reconcile(const SessionExec& exec) {
    if (Pidfd::open(static_cast<pid_t>(exec.supervisor_pid),
                    static_cast<std::uint64_t>(exec.supervisor_start))) {
        return false;
    }
    TreeTarget leftovers;
    leftovers.marker = exec_marker(exec.id, store_.home());
    terminate_tree(leftovers, SIGKILL, Millis(0), true);
    records_.remove_exec(exec.id);
    return true;
}

std::vector<SessionExec> Sessions::running_execs(const SessionRecord& session) {
    auto execs = records_.execs(session.id);
    std::erase_if(execs, [&](const SessionExec& e) { return reconcile(e); });
    return execs;
}

std::vector<ShellRecord> Sessions::running_shells(const SessionRecord& session) {
    Shells shells(store_, clock_);
    return shells.list(false, std::nullopt, session.name);
}

SessionCloseResult Sessions::close(const std::string& name, Millis timeout,
                                   const std::string& actor) {
    SessionRecord session = get(name);
    SessionCloseResult result;
    result.name = name;
    // Forgotten first, with what runs in it read in the same transaction: a command started
    // after this makes a new session, which the close leaves alone.
    auto closed = records_.close(name, clock_.now(), actor);
    if (!closed) throw not_found("session " + quote(name) + " not found");
    const auto& execs = closed->execs;
    const auto& shell_ids = closed->shell_ids;

    // The execs: everything below each `team session exec` (a subreaper), which then reports
    // the command as killed and keeps nothing of it.
    std::vector<TreeTarget> targets;
    for (const auto& e : execs) {
        TreeTarget t;
        if (Pidfd::open(static_cast<pid_t>(e.supervisor_pid),
                        static_cast<std::uint64_t>(e.supervisor_start))) {
            t.root = static_cast<pid_t>(e.supervisor_pid);
            t.root_start = static_cast<std::uint64_t>(e.supervisor_start);
        }
        t.marker = exec_marker(e.id, store_.home());
        targets.push_back(std::move(t));
    }
    if (!targets.empty()) {
        TerminateOutcome outcome = terminate_trees(targets, SIGTERM, timeout, true);
        result.execs_killed = static_cast<int>(execs.size());
        result.survivors += outcome.survivors;
    }
    Shells shells(store_, clock_);
    for (const auto& id : shell_ids) {
        KillResult killed = shells.kill(id, SIGTERM, timeout, true, actor);
        if (killed.signal_sent != "none") result.shells_killed.push_back(id);
        if (!killed.success) result.survivors += 1;
    }
    return result;
}

}  // namespace team::sessions
