#include "proc/shells.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <cerrno>
#include <cstring>

#include "base/duration.hpp"
#include "base/error.hpp"
#include "base/names.hpp"
#include "base/text.hpp"
#include "base/umask.hpp"
#include "proc/pidfd.hpp"
#include "proc/session_state.hpp"
#include "proc/signals.hpp"
#include "proc/terminate.hpp"
#include "state/activity.hpp"
#include "state/change_watch.hpp"
#include "state/sql.hpp"

namespace team::proc {

namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;

namespace {

// Output kept by default: the last 16 MiB (SPEC 8 leaves it open; a runaway command must not
// fill the disk).
constexpr std::int64_t kDefaultOutputLimit = 16 << 20;
// How long `start` waits for the supervisor to say the command runs.
constexpr auto kStartTimeout = std::chrono::seconds(10);
// How long `kill` waits for the supervisor to record the end after the tree is gone.
constexpr auto kRecordTimeout = std::chrono::seconds(3);

const char* const kColumns = R"sql(
    id, team_id, agent, command, cwd, env, status, pid, pid_start, supervisor_pid,
    supervisor_start, timeout_ms, output_limit, output_file, output_truncated, kill_requested_by,
    started_at, ended_at, exit_code, signal, error, session
)sql";

ShellRecord read_shell(SQLite::Statement& row) {
    ShellRecord s;
    s.id = row.getColumn(0).getString();
    s.team_id = column_or_null<std::int64_t>(row.getColumn(1));
    s.agent = column_or_null<std::string>(row.getColumn(2));
    s.command = nlohmann::json::parse(row.getColumn(3).getString()).get<std::vector<std::string>>();
    s.cwd = row.getColumn(4).getString();
    s.env = nlohmann::json::parse(row.getColumn(5).getString()).get<std::vector<std::string>>();
    s.status = state_from<ShellStatus>(row.getColumn(6).getString());
    s.pid = column_or_null<std::int64_t>(row.getColumn(7));
    s.pid_start = column_or_null<std::int64_t>(row.getColumn(8));
    s.supervisor_pid = column_or_null<std::int64_t>(row.getColumn(9));
    s.supervisor_start = column_or_null<std::int64_t>(row.getColumn(10));
    s.timeout_ms = column_or_null<std::int64_t>(row.getColumn(11));
    s.output_limit = column_or_null<std::int64_t>(row.getColumn(12));
    s.output_file = row.getColumn(13).getString();
    s.output_truncated = row.getColumn(14).getInt() != 0;
    s.kill_requested_by = column_or_null<std::string>(row.getColumn(15));
    s.started_at = row.getColumn(16).getInt64();
    s.ended_at = column_or_null<EpochMs>(row.getColumn(17));
    s.exit_code = column_or_null<int>(row.getColumn(18));
    s.signal = column_or_null<std::string>(row.getColumn(19));
    s.error = column_or_null<std::string>(row.getColumn(20));
    s.session = column_or_null<std::string>(row.getColumn(21));
    return s;
}

std::optional<ShellRecord> select_shell(SQLite::Database& db, const std::string& id) {
    SQLite::Statement select(db, std::string("SELECT ") + kColumns + " FROM shells WHERE id = ?");
    select.bind(1, id);
    if (!select.executeStep()) return std::nullopt;
    return read_shell(select);
}

std::string new_shell_id() {
    unsigned char bytes[3];
    if (::getrandom(bytes, sizeof bytes, 0) != sizeof bytes) throw failed("getrandom failed");
    static const char* hex = "0123456789abcdef";
    std::string id = "bg-";
    for (unsigned char b : bytes) {
        id += hex[b >> 4];
        id += hex[b & 15];
    }
    return id;
}

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
    if (session) return merged_environment(overrides, session_dropped_environment());
    return merged_environment(overrides, {"TEAM_SESSION_EXEC="});
}

void write_all(int fd, std::string_view data) {
    while (!data.empty()) {
        ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        data.remove_prefix(static_cast<size_t>(n));
    }
}

// Appends output to the shell's file, keeping at most the last `limit` bytes: when the file
// grows past twice the limit, its end is copied to a new file that replaces it.
class OutputFile {
  public:
    OutputFile(fs::path path, std::int64_t limit) : path_(std::move(path)), limit_(limit) {
        open();
    }
    ~OutputFile() {
        if (fd_ >= 0) ::close(fd_);
    }
    // True when this write dropped older output for the first time.
    bool append(std::string_view chunk) {
        write_all(fd_, chunk);
        size_ += static_cast<std::int64_t>(chunk.size());
        if (size_ <= 2 * limit_) return false;
        compact();
        bool first = !truncated_;
        truncated_ = true;
        return first;
    }

  private:
    void open() {
        fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        struct stat st {};
        size_ = fd_ >= 0 && ::fstat(fd_, &st) == 0 ? st.st_size : 0;
    }
    void compact() {
        std::string tail(static_cast<size_t>(limit_), '\0');
        int in = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
        ssize_t n = ::pread(in, tail.data(), tail.size(), size_ - limit_);
        ::close(in);
        tail.resize(n > 0 ? static_cast<size_t>(n) : 0);
        fs::path tmp = path_;
        tmp += ".tmp";
        int out = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        write_all(out, tail);
        ::close(out);
        ::rename(tmp.c_str(), path_.c_str());
        ::close(fd_);
        open();
    }

    fs::path path_;
    std::int64_t limit_;
    int fd_ = -1;
    std::int64_t size_ = 0;
    bool truncated_ = false;
};

void set_running(Store& store, const std::string& id, pid_t pid, std::uint64_t pid_start) {
    store.write([&] {
        SQLite::Statement up(store.db(), R"sql(
            UPDATE shells SET status = 'running', pid = ?, pid_start = ?, supervisor_pid = ?,
                              supervisor_start = ?, script = NULL
            WHERE id = ? AND status = 'starting'
        )sql");
        up.bind(1, static_cast<std::int64_t>(pid));
        up.bind(2, static_cast<std::int64_t>(pid_start));
        up.bind(3, static_cast<std::int64_t>(::getpid()));
        up.bind(4, static_cast<std::int64_t>(start_time_of(::getpid()).value_or(0)));
        up.bind(5, id);
        up.exec();
    });
}

nlohmann::json status_details(const ShellRecord& s) {
    return {{"shellId", s.id},
            {"status", str(s.status)},
            {"exitCode", s.exit_code ? nlohmann::json(*s.exit_code) : nullptr},
            {"signal", s.signal ? nlohmann::json(*s.signal) : nullptr}};
}

// Records the end of a shell unless something else already did. Returns the record.
ShellRecord record_end(Store& store, const Clock& clock, const std::string& id, ShellStatus status,
                       const ExitStatus& exit, const std::optional<std::string>& error,
                       const std::string& actor) {
    return store.write([&] {
        auto shell = select_shell(store.db(), id);
        if (!shell) throw not_found("Shell not found: " + id);
        if (!shell->running()) return *shell;
        shell->status = status;
        shell->ended_at = clock.now();
        shell->exit_code = exit.exit_code;
        shell->signal = exit.signal ? std::optional(signal_name(*exit.signal)) : std::nullopt;
        shell->error = error;
        SQLite::Statement up(store.db(), R"sql(
            UPDATE shells SET status = ?, ended_at = ?, exit_code = ?, signal = ?, error = ?
            WHERE id = ?
        )sql");
        up.bind(1, str(shell->status));
        up.bind(2, *shell->ended_at);
        bind_or_null(up, 3, shell->exit_code);
        bind_or_null(up, 4, shell->signal);
        bind_or_null(up, 5, shell->error);
        up.bind(6, id);
        up.exec();
        append_activity(store.db(), shell->team_id, *shell->ended_at, actor, "shell_exited",
                        status_details(*shell));
        return *shell;
    });
}

// The tree of a shell: below its supervisor while that lives; its process group while its
// command lives; processes carrying its marker when `use_marker` (the supervisor is gone).
TreeTarget shell_tree(const ShellRecord& s, const fs::path& home, bool use_marker) {
    std::vector<std::string> marker;
    if (use_marker) marker = {"TEAM_SHELL_ID=" + s.id, "TEAM_SHELL_HOME=" + home.string()};
    return tree_of_record(s.supervisor_pid, s.supervisor_start, s.pid, s.pid_start,
                          std::move(marker));
}

// The shell's supervisor while it runs (a zombie left unreaped by init counts as gone).
std::optional<Pidfd> supervisor_of(const ShellRecord& s) {
    return Pidfd::live(s.supervisor_pid, s.supervisor_start);
}

}  // namespace

nlohmann::json exit_status_json(const ShellRecord& s) {
    if (s.running()) return nullptr;
    return {{"exitCode", s.exit_code ? nlohmann::json(*s.exit_code) : nullptr},
            {"signal", s.signal ? nlohmann::json(*s.signal) : nullptr}};
}

nlohmann::json to_json(const ShellRecord& s) {
    auto or_null = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
    return {{"id", s.id},
            {"pid", or_null(s.pid)},
            {"command", s.command},
            {"cwd", s.cwd},
            {"agent", or_null(s.agent)},
            {"status", str(s.status)},
            {"startedAt", iso8601(s.started_at)},
            {"endedAt", s.ended_at ? nlohmann::json(iso8601(*s.ended_at)) : nullptr},
            {"exitCode", or_null(s.exit_code)},
            {"signal", or_null(s.signal)},
            {"timeout",
             s.timeout_ms ? nlohmann::json(format_duration(Millis(*s.timeout_ms))) : nullptr},
            {"outputFile", s.output_file},
            {"error", or_null(s.error)},
            {"session", or_null(s.session)}};
}

ShellRecord Shells::start(const ShellStart& request) {
    if (request.argv.empty())
        throw usage_error("no command given: team shell start -- CMD [ARGS...]");
    struct stat st {};
    if (::stat(request.cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        throw usage_error("--cwd " + quote(request.cwd) + " is not an existing directory");
    }
    for (const auto& kv : request.env) {
        if (!is_env_entry(kv)) throw usage_error("invalid --env " + quote(kv) + ": use KEY=VALUE");
    }
    if (request.output_limit && *request.output_limit <= 0) {
        throw usage_error("--output-limit must be more than zero");
    }
    fs::create_directories(shells_dir());
    ::chmod(shells_dir().c_str(), 0700);

    ShellRecord shell;
    shell.command = request.argv;
    shell.cwd = fs::canonical(request.cwd).string();
    shell.env = request.env;
    shell.team_id = request.team_id;
    shell.agent = request.agent;
    shell.status = ShellStatus::starting;
    shell.started_at = clock_.now();
    if (request.timeout) shell.timeout_ms = request.timeout->count();
    shell.output_limit = request.output_limit.value_or(kDefaultOutputLimit);
    store_.write([&] {
        for (int attempt = 0;; ++attempt) {
            shell.id = new_shell_id();
            if (!select_shell(store_.db(), shell.id)) break;
            if (attempt > 100) throw failed("cannot find a free shell id");
        }
        shell.output_file = (shells_dir() / (shell.id + ".out")).string();
        SQLite::Statement insert(store_.db(), R"sql(
            INSERT INTO shells (id, team_id, agent, command, cwd, env, status, timeout_ms,
                                output_limit, output_file, started_at, session, script)
            VALUES (?, ?, ?, ?, ?, ?, 'starting', ?, ?, ?, ?, ?, ?)
        )sql");
        insert.bind(1, shell.id);
        bind_or_null(insert, 2, shell.team_id);
        bind_or_null(insert, 3, shell.agent);
        insert.bind(4, nlohmann::json(shell.command).dump());
        insert.bind(5, shell.cwd);
        insert.bind(6, nlohmann::json(shell.env).dump());
        bind_or_null(insert, 7, shell.timeout_ms);
        insert.bind(8, *shell.output_limit);
        insert.bind(9, shell.output_file);
        insert.bind(10, shell.started_at);
        bind_or_null(insert, 11, request.session);
        bind_or_null(insert, 12, request.script);
        insert.exec();
        append_activity(
            store_.db(), shell.team_id, shell.started_at, request.actor, "shell_started",
            {{"shellId", shell.id},
             {"command", shell.command},
             {"cwd", shell.cwd},
             {"agent", shell.agent ? nlohmann::json(*shell.agent) : nullptr},
             {"session", request.session ? nlohmann::json(*request.session) : nullptr}});
    });
    shell.session = request.session;
    // The output file exists from the start, so it can be read (empty) at once.
    ::close(::open(shell.output_file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));

    // The supervisor: a new session, detached from our terminal, reporting on fd 3.
    int ready[2];
    if (::pipe2(ready, O_CLOEXEC) != 0) throw failed(std::string("pipe: ") + std::strerror(errno));
    std::string home = store_.home().string();
    pid_t pid = ::fork();
    if (pid < 0) throw failed(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
        ::setsid();
        ::umask(command_umask());  // the supervisor keeps it for the command
        ::dup2(ready[1], 3);       // dup2 clears close-on-exec
        int null_fd = ::open("/dev/null", O_RDWR);
        ::dup2(null_fd, 0);
        ::dup2(null_fd, 1);
        ::dup2(null_fd, 2);
        // Nothing else of ours (or of whoever started us) stays open in the supervisor: a pipe
        // kept open there could make a caller wait for an EOF that never comes.
        ::syscall(SYS_close_range, 4U, ~0U, 0);
        ::execl("/proc/self/exe", "team", "__supervise", "--home", home.c_str(), "--ready-fd", "3",
                shell.id.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    ::close(ready[1]);
    std::string reply;
    char buf[4096];
    pollfd p{ready[0], POLLIN, 0};
    auto deadline = SteadyClock::now() + kStartTimeout;
    while (SteadyClock::now() < deadline) {
        int left = static_cast<int>(
            std::chrono::duration_cast<Millis>(deadline - SteadyClock::now()).count());
        if (::poll(&p, 1, left + 1) <= 0) continue;
        ssize_t n = ::read(ready[0], buf, sizeof buf);
        if (n > 0) {
            reply.append(buf, static_cast<size_t>(n));
            if (reply.find('\n') != std::string::npos) break;  // one line is the whole answer
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        break;
    }
    ::close(ready[0]);
    if (reply.rfind("ok ", 0) == 0) return *find(shell.id);
    if (reply.rfind("err ", 0) == 0) {
        throw failed(reply.substr(
            4, reply.find('\n') == std::string::npos ? std::string::npos : reply.find('\n') - 4));
    }
    record_end(store_, clock_, shell.id, ShellStatus::failed, {},
               "the supervisor did not start the command", request.actor);
    throw failed("the supervisor of " + shell.id + " did not start the command");
}

int Shells::supervise(Store& store, const std::string& id, int ready_fd) {
    // The command must not inherit the channel to the starter: the starter would wait for EOF.
    if (ready_fd >= 0) ::fcntl(ready_fd, F_SETFD, FD_CLOEXEC);
    SystemClock clock;
    auto shell = select_shell(store.db(), id);
    auto reply = [&](const std::string& text) {
        if (ready_fd < 0) return;
        write_all(ready_fd, text + "\n");
        ::close(ready_fd);
        ready_fd = -1;
    };
    if (!shell || shell->status != ShellStatus::starting) {
        reply("err shell " + id + " is not waiting to start");
        return 1;
    }
    std::string actor = shell->agent.value_or("supervisor");

    Supervisor supervisor;
    LaunchSpec spec;
    spec.argv = shell->command;
    spec.cwd = shell->cwd;
    spec.env = command_environment(*shell, store.home(), shell->session.has_value());
    if (shell->timeout_ms) spec.timeout = Millis(*shell->timeout_ms);
    int script_fd = -1;
    try {
        SQLite::Statement select(store.db(), "SELECT script FROM shells WHERE id = ?");
        select.bind(1, id);
        if (select.executeStep() && !select.getColumn(0).isNull()) {
            // A session's command: bash reads the script that restores the session on fd 3.
            script_fd = memory_file("team-session-script", select.getColumn(0).getString());
            spec.argv = {"bash", "--noprofile", "--norc", "/dev/fd/3"};
            spec.pass_fds = {{script_fd, 3}};
        }
        supervisor.start(spec);
        if (script_fd >= 0) ::close(script_fd);
    } catch (const Error& e) {
        record_end(store, clock, id, ShellStatus::failed, {}, e.what(), actor);
        reply(std::string("err ") + e.what());
        return 1;
    }
    set_running(store, id, supervisor.child_pid(), supervisor.child_start_time());
    reply("ok " + std::to_string(supervisor.child_pid()));

    OutputFile output(shell->output_file, shell->output_limit.value_or(kDefaultOutputLimit));
    RunOutcome outcome = supervisor.run([&](std::string_view chunk) {
        if (output.append(chunk)) {
            store.write([&] {
                SQLite::Statement up(store.db(),
                                     "UPDATE shells SET output_truncated = 1 WHERE id = ?");
                up.bind(1, id);
                up.exec();
            });
        }
    });

    auto now = select_shell(store.db(), id);
    if (now && now->kill_requested_by) actor = *now->kill_requested_by;  // who ended it
    ShellStatus status = ShellStatus::completed;
    std::optional<std::string> error;
    if (outcome.timed_out) {
        status = ShellStatus::timed_out;
        error = "timed out after " + format_duration(Millis(shell->timeout_ms.value_or(0)));
    } else if ((now && now->kill_requested_by) || outcome.interrupted || outcome.status.signal) {
        status = ShellStatus::killed;
    }
    record_end(store, clock, id, status, outcome.status, error, actor);
    return 0;
}

std::optional<ShellRecord> Shells::find(const std::string& id) {
    auto shell = select_shell(store_.db(), id);
    if (shell) reconcile(*shell);
    return shell;
}

ShellRecord Shells::get(const std::string& id) {
    auto shell = find(id);
    if (!shell) throw not_found("Shell not found: " + id);
    return *shell;
}

std::vector<ShellRecord> Shells::list(bool all, const std::optional<std::string>& agent,
                                      const std::optional<std::string>& session) {
    std::string sql = std::string("SELECT ") + kColumns + " FROM shells WHERE 1";
    if (!all) sql += " AND status IN ('starting', 'running')";
    if (agent) sql += " AND agent = ?";
    if (session) sql += " AND session = ?";
    sql += " ORDER BY started_at, id";
    SQLite::Statement select(store_.db(), sql);
    int index = 0;
    if (agent) select.bind(++index, *agent);
    if (session) select.bind(++index, *session);
    std::vector<ShellRecord> shells;
    while (select.executeStep()) shells.push_back(read_shell(select));
    for (auto& s : shells) reconcile(s);
    if (!all) std::erase_if(shells, [](const ShellRecord& s) { return !s.running(); });
    return shells;
}

bool Shells::reconcile(ShellRecord& shell) {
    if (!shell.running()) return false;
    if (supervisor_of(shell)) return false;
    if (shell.status == ShellStatus::starting && !shell.supervisor_pid) {
        // Not yet started: give a starting supervisor its time before calling it lost.
        if (clock_.now() - shell.started_at <
            2 * std::chrono::duration_cast<Millis>(kStartTimeout).count()) {
            return false;
        }
    }
    finish_lost(shell,
                "its supervisor ended unexpectedly; what was left of the command was killed");
    return true;
}

void Shells::finish_lost(ShellRecord& shell, const std::string& why) {
    terminate_tree(shell_tree(shell, store_.home(), true), SIGKILL, Millis(0), true);
    ExitStatus exit;
    exit.signal = SIGKILL;  // PR_SET_PDEATHSIG, or ours just now
    shell = record_end(
        store_, clock_, shell.id,
        shell.status == ShellStatus::starting ? ShellStatus::failed : ShellStatus::killed,
        shell.status == ShellStatus::starting ? ExitStatus{} : exit, why, "team");
}

KillResult Shells::kill(const std::string& id, int sig, Millis timeout, bool force,
                        const std::string& actor) {
    KillResult result;
    result.shell = get(id);
    if (!result.shell.running()) {
        result.success = true;
        std::string how =
            result.shell.status == ShellStatus::timed_out ? "timed out" : str(result.shell.status);
        result.error = "Shell already " + how;
        return result;
    }
    ChangeWatch watch(store_.home());  // before the kill, so the end cannot be missed
    store_.write([&] {
        SQLite::Statement up(
            store_.db(),
            "UPDATE shells SET kill_requested_by = ? WHERE id = ? AND kill_requested_by IS NULL");
        up.bind(1, actor);
        up.bind(2, id);
        up.exec();
        append_activity(store_.db(), result.shell.team_id, clock_.now(), actor,
                        "execution_cancelled",
                        {{"shellId", id},
                         {"signal", signal_name(sig)},
                         {"force", force},
                         {"timeout", format_duration(timeout)}});
    });
    auto supervisor = supervisor_of(result.shell);
    TerminateOutcome outcome =
        terminate_tree(shell_tree(result.shell, store_.home(), !supervisor), sig, timeout, force);
    result.signal_sent = signal_name(sig);
    result.force_killed = outcome.force_killed;

    // The supervisor records the end once it has reaped everything, then exits; wait for both,
    // so that when the kill returns no process of the shell is left, its supervisor included.
    auto deadline = SteadyClock::now() + kRecordTimeout;
    for (;;) {
        result.shell = get(id);
        if (outcome.survivors > 0) break;
        bool supervisor_gone = !supervisor || supervisor->exited();
        if (!result.shell.running() && supervisor_gone) break;
        std::vector<int> others;
        if (!supervisor_gone) others.push_back(supervisor->fd());
        if (!watch.wait_until(deadline, others) && SteadyClock::now() >= deadline) {
            result.shell = get(id);
            break;
        }
    }
    if (outcome.survivors > 0) {
        result.error = std::to_string(outcome.survivors) + " process" +
                       (outcome.survivors == 1 ? "" : "es") + " still running after " +
                       format_duration(timeout) + (force ? "" : "; not forced (--no-force)");
        return result;
    }
    if (result.shell.running()) {
        result.error = "the processes are gone but the supervisor has not recorded the end yet";
    }
    result.success = true;
    return result;
}

std::optional<ShellRecord> Shells::wait(const std::string& id, std::optional<Millis> timeout) {
    ChangeWatch watch(store_.home());
    auto deadline = timeout ? SteadyClock::now() + *timeout : SteadyClock::time_point::max();
    for (;;) {
        ShellRecord shell = get(id);
        if (!shell.running()) return shell;
        auto supervisor = supervisor_of(shell);
        std::vector<int> others;
        if (supervisor) others.push_back(supervisor->fd());
        if (!watch.wait_until(deadline, others) && SteadyClock::now() >= deadline) {
            shell = get(id);
            if (!shell.running()) return shell;
            return std::nullopt;
        }
    }
}

void Shells::release(const std::string& id, const std::string& actor) {
    ShellRecord shell = get(id);
    if (shell.running()) {
        auto killed = kill(id, SIGTERM, Millis(5000), true, actor);
        if (!killed.success)
            throw failed("cannot release " + id + ": " + killed.error.value_or("kill failed"));
    }
    store_.write([&] {
        SQLite::Statement del(store_.db(), "DELETE FROM shells WHERE id = ?");
        del.bind(1, id);
        if (del.exec() == 0) throw not_found("Shell not found: " + id);
        append_activity(store_.db(), shell.team_id, clock_.now(), actor, "shell_released",
                        {{"shellId", id}});
    });
    ::unlink(shell.output_file.c_str());
}

std::vector<std::string> Shells::gc(Millis older_than, const std::string& actor) {
    EpochMs cutoff = clock_.now() - older_than.count();
    std::vector<std::string> ids;
    for (const auto& s : list(true, std::nullopt)) {
        if (!s.running() && s.ended_at && *s.ended_at <= cutoff) ids.push_back(s.id);
    }
    for (const auto& id : ids) release(id, actor);
    return ids;
}

std::pair<std::string, std::size_t> Shells::output_from(const ShellRecord& shell,
                                                        std::size_t offset) {
    int fd = ::open(shell.output_file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return {"", 0};
    struct stat st {};
    ::fstat(fd, &st);
    auto size = static_cast<std::size_t>(st.st_size);
    if (size < offset) offset = 0;
    std::string bytes(size - offset, '\0');
    ssize_t n = ::pread(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset));
    ::close(fd);
    bytes.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    return {bytes, offset + bytes.size()};
}

OutputSlice Shells::output(const ShellRecord& shell, std::optional<std::size_t> limit) {
    OutputSlice slice;
    slice.truncated = shell.output_truncated;
    int fd = ::open(shell.output_file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return slice;
    struct stat st {};
    ::fstat(fd, &st);
    auto size = static_cast<std::size_t>(st.st_size);
    // The file may hold up to twice --output-limit between compactions: never return more.
    if (shell.output_limit && size > static_cast<std::size_t>(*shell.output_limit)) {
        auto keep = static_cast<std::size_t>(*shell.output_limit);
        limit = limit ? std::min(*limit, keep) : keep;
        slice.truncated = true;
    }
    // Read a little more than the limit, so the cut can move to a character boundary.
    std::size_t want = limit ? std::min(size, *limit + 3) : size;
    slice.output.resize(want);
    ssize_t n = ::pread(fd, slice.output.data(), want, static_cast<off_t>(size - want));
    ::close(fd);
    slice.output.resize(n > 0 ? static_cast<size_t>(n) : 0);
    if (limit && slice.output.size() > *limit) {
        slice.output = std::string(utf8_tail(slice.output, *limit));
        slice.truncated = true;
    } else if (limit && size > want) {
        slice.truncated = true;
    }
    return slice;
}

}  // namespace team::proc
