#include "shells/shells.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/duration.hpp"
#include "base/error.hpp"
#include "base/names.hpp"
#include "base/text.hpp"
#include "proc/detach.hpp"
#include "proc/pidfd.hpp"
#include "proc/signals.hpp"
#include "proc/terminate.hpp"
#include "shells/output_file.hpp"
#include "state/change_watch.hpp"

namespace team::shells {

namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;
using proc::ExitStatus;
using proc::Pidfd;
using proc::signal_name;
using proc::terminate_tree;
using proc::TerminateOutcome;
using proc::TreeTarget;

namespace {

// How long `start` waits for the supervisor to say the command runs.
constexpr auto kStartTimeout = std::chrono::seconds(10);
// How long `kill` waits for the supervisor to record the end after the tree is gone.
constexpr auto kRecordTimeout = std::chrono::seconds(3);

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

nlohmann::json status_details(const ShellRecord& s) {
    return {{"shellId", s.id},
            {"status", str(s.status)},
            {"exitCode", s.exit_code ? nlohmann::json(*s.exit_code) : nullptr},
            {"signal", s.signal ? nlohmann::json(*s.signal) : nullptr}};
}

// The tree of a shell: below its supervisor while that lives; its process group while its
// command lives; processes carrying its marker when `use_marker` (the supervisor is gone).
TreeTarget shell_tree(const ShellRecord& s, const fs::path& home, bool use_marker) {
    std::vector<std::string> marker;
    if (use_marker) marker = {"TEAM_SHELL_ID=" + s.id, "TEAM_SHELL_HOME=" + home.string()};
    return proc::tree_of_record(s.supervisor_pid, s.supervisor_start, s.pid, s.pid_start,
                                std::move(marker));
}

// The shell's supervisor while it runs (a zombie left unreaped by init counts as gone).
std::optional<Pidfd> supervisor_of(const ShellRecord& s) {
    return Pidfd::live(s.supervisor_pid, s.supervisor_start);
}

}  // namespace

ShellRecord record_end(ShellRecords& records, const Clock& clock, const std::string& id,
                       ShellStatus status, const ExitStatus& exit,
                       const std::optional<std::string>& error, const std::string& actor) {
    ShellEnd end;
    end.status = status;
    end.at = clock.now();
    end.exit_code = exit.exit_code;
    end.signal = exit.signal ? std::optional(signal_name(*exit.signal)) : std::nullopt;
    end.error = error;
    return records.mark_finished(id, end, actor, status_details);
}

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
    shell.session = request.session;
    records_.insert(shell, request.script, new_shell_id, shells_dir(), request.actor,
                    {{"command", shell.command},
                     {"cwd", shell.cwd},
                     {"agent", shell.agent ? nlohmann::json(*shell.agent) : nullptr},
                     {"session", request.session ? nlohmann::json(*request.session) : nullptr}});
    // The output file exists from the start, so it can be read (empty) at once.
    ::close(::open(shell.output_file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));

    // The supervisor: a new session, detached from our terminal, answering on fd 3.
    std::string reply = proc::start_detached(
        "/proc/self/exe",
        {"team", "__supervise", "--home", store_.home().string(), "--ready-fd", "3", shell.id},
        kStartTimeout);
    if (reply.rfind("ok ", 0) == 0) return *find(shell.id);
    if (reply.rfind("err ", 0) == 0) throw failed(reply.substr(4));
    record_end(records_, clock_, shell.id, ShellStatus::failed, {},
               "the supervisor did not start the command", request.actor);
    throw failed("the supervisor of " + shell.id + " did not start the command");
}

std::optional<ShellRecord> Shells::find(const std::string& id) {
    auto shell = records_.find(id);
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
    std::vector<ShellRecord> shells = records_.list(!all, agent, session);
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
        records_, clock_, shell.id,
        shell.status == ShellStatus::starting ? ShellStatus::failed : ShellStatus::killed,
        shell.status == ShellStatus::starting ? ExitStatus{} : exit, why, "team");
}

KillResult Shells::kill(const std::string& id, int sig, Millis timeout, bool force,
                        const std::string& actor) {
    return end_tree(id, sig, timeout, force, actor,
                    {{"shellId", id},
                     {"signal", signal_name(sig)},
                     {"force", force},
                     {"timeout", format_duration(timeout)}});
}

ShellRecord Shells::await_start(const std::string& id, ChangeWatch& watch) {
    // As long as reconcile gives a starting supervisor before calling it lost.
    auto deadline = clock_.steady() + 2 * kStartTimeout;
    for (;;) {
        ShellRecord shell = get(id);
        if (shell.status != ShellStatus::starting || clock_.steady() >= deadline) return shell;
        watch.wait_until(deadline);
    }
}

KillResult Shells::end_tree(const std::string& id, int sig, Millis timeout, bool force,
                            const std::string& actor, const nlohmann::json& logged) {
    KillResult result;
    result.shell = get(id);
    auto already = [&] {
        result.success = true;
        std::string how =
            result.shell.status == ShellStatus::timed_out ? "timed out" : str(result.shell.status);
        result.error = "Shell already " + how;
        return result;
    };
    if (!result.shell.running()) return already();
    ChangeWatch watch(store_.home());  // before the kill, so the end cannot be missed
    records_.request_kill(result.shell, clock_.now(), actor, logged);
    // Recorded, but its supervisor has not started the command yet (its pids are unknown): the
    // kill waits for the command to run, then ends it. The request is recorded first, so the
    // supervisor records the end as killed whichever way it goes.
    if (result.shell.status == ShellStatus::starting) {
        result.shell = await_start(id, watch);
        if (!result.shell.running()) return already();
    }
    auto supervisor = supervisor_of(result.shell);
    TerminateOutcome outcome =
        terminate_tree(shell_tree(result.shell, store_.home(), !supervisor), sig, timeout, force);
    result.signal_sent = signal_name(sig);
    result.force_killed = outcome.force_killed;

    // The supervisor records the end once it has reaped everything, then exits; wait for both,
    // so that when the kill returns no process of the shell is left, its supervisor included.
    auto deadline = clock_.steady() + kRecordTimeout;
    for (;;) {
        result.shell = get(id);
        if (outcome.survivors > 0) break;
        bool supervisor_gone = !supervisor || supervisor->exited();
        if (!result.shell.running() && supervisor_gone) break;
        std::vector<int> others;
        if (!supervisor_gone) others.push_back(supervisor->fd());
        if (!watch.wait_until(deadline, others) && clock_.steady() >= deadline) {
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
    AskedWait asked;  // a stopping server ends it (base/cancel.hpp)
    ChangeWatch watch(store_.home());
    auto deadline = timeout ? clock_.steady() + *timeout : SteadyClock::time_point::max();
    for (;;) {
        ShellRecord shell = get(id);
        if (!shell.running()) return shell;
        auto supervisor = supervisor_of(shell);
        std::vector<int> others;
        if (supervisor) others.push_back(supervisor->fd());
        if (!watch.wait_until(deadline, others) && clock_.steady() >= deadline) {
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
    if (!records_.remove(shell, clock_.now(), actor)) throw not_found("Shell not found: " + id);
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

OutputSlice Shells::output(const ShellRecord& shell, std::optional<std::size_t> limit) {
    OutputRead read = read_output(shell.output_file, shell.output_limit, limit);
    return {std::move(read.output), shell.output_truncated || read.truncated};
}

ShellRecord Shells::follow(const std::string& id, std::optional<std::size_t> limit,
                           const std::function<void(std::string_view)>& on_output,
                           const std::function<bool()>& stop) {
    ShellRecord s = get(id);
    fs::path file = s.output_file;
    ChangeWatch file_watch(file.parent_path(), file.filename().string());
    ChangeWatch store_watch(store_.home());
    // First what is there (its last `limit` bytes, cut on a character boundary), then only
    // what the file gains: each wake-up reads from where the last one stopped.
    auto [fresh, offset] = read_output_from(s.output_file, 0);
    if (limit) fresh = std::string(utf8_tail(fresh, *limit));
    for (;;) {
        s = get(id);
        bool ended = !s.running();
        auto [more, end] = read_output_from(s.output_file, offset);
        fresh += more;
        offset = end;
        if (!fresh.empty()) {
            on_output(fresh);
            fresh.clear();
        }
        if (ended || (stop && stop())) return s;
        file_watch.wait_until(clock_.steady() + std::chrono::seconds(5), {store_watch.fd()});
    }
}

}  // namespace team::shells
