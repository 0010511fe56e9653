// Figures of ACP agents (SPEC 15): one agent spawned with `team spawn --acp` running
// the scripted ACP agent of tests/acp (node, the official SDK), hosted by `team __acp ID` in its
// pane, and the latencies between the leader's `team` processes and that agent, both ways:
//
//   prompt -> the agent has it             `team prompt a1 'say x'` to session/prompt received
//   permission request -> leader's inbox   the agent's session/request_permission to a waiting
//                                          `team inbox --wait` returning it
//   permission answer -> the agent has it  `team permission allow ID` to the agent's reply received
//   terminal/create -> the command running the agent's request to its response (sent once the
//                                          shell's supervisor has started the command)
//   cancel -> turn ended `cancelled`       `team cancel a1` during a `wait-cancel` turn to a
//                                          waiting `team prompt --wait` returning (exit 130)
//   RSS at idle                            VmRSS of the host, and of node, the agent itself
//
// The agent's side is stamped by the agent (ACP_TEST_STAMP_FILE: "EVENT MS" lines, CLOCK_MONOTONIC
// like now_ms()); the bench's side is the start of a process it spawns or the moment it reaps one.
// All figures share one home and one agent (spawning node costs a second or more); each sample
// starts and ends with the agent idle (no open turn in the store).

#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/harness.hpp"

namespace bench {

namespace {

namespace fs = std::filesystem;

const std::string kSourceDir = TEAM_SOURCE_DIR;
const std::string kAgentScript = kSourceDir + "/tests/acp/agent.mjs";
constexpr double kTimeoutMs = 20'000;

// What the figures share: the stamp file read so far, a read-only connection to the store (to
// see turns end without a `team` process per look), the host's and the agent's pids.
struct AcpState {
    std::string stamps;
    std::size_t consumed = 0;  // lines of `stamps` already matched or skipped
    sqlite3* db = nullptr;
    pid_t host = 0, agent = 0;
    ~AcpState() {
        if (db) sqlite3_close(db);
    }
};

AcpState& state(Env& env) {
    return *static_cast<AcpState*>(env.held.get());
}

std::vector<std::string> team_argv(const Env& env, std::vector<std::string> args) {
    std::vector<std::string> argv{env.team, "--team", "bench"};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

void pause_ms(int ms) {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

// The agent's next stamp of EVENT after those already consumed (others before it are skipped),
// in ms of CLOCK_MONOTONIC; throws after kTimeoutMs.
double wait_stamp(Env& env, const std::string& event) {
    AcpState& s = state(env);
    double until = now_ms() + kTimeoutMs;
    for (;;) {
        // Only whole lines: the agent appends each with one write.
        auto lines = lines_of(read_file(s.stamps));
        for (; s.consumed < lines.size(); ++s.consumed) {
            std::istringstream line(lines[s.consumed]);
            std::string name;
            double ms = 0;
            if (line >> name >> ms && name == event) {
                ++s.consumed;
                return ms;
            }
        }
        if (now_ms() > until)
            throw CommandFailed("the agent did not stamp '" + event + "' within 20 s");
        pause_ms(1);
    }
}

// Every stamp so far counts as seen: a sample matches only what happens after it started.
void skip_stamps(Env& env) {
    AcpState& s = state(env);
    s.consumed = lines_of(read_file(s.stamps)).size();
}

// One integer from the store (the first column of the first row; 0 when no row).
long long query(Env& env, const std::string& sql) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(state(env).db, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK)
        throw CommandFailed("cannot query the store: " +
                            std::string(sqlite3_errmsg(state(env).db)));
    long long v = sqlite3_step(stmt) == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : 0;
    sqlite3_finalize(stmt);
    return v;
}

// Waits until the store says SQL holds (a count > 0).
void wait_store(Env& env, const std::string& sql, const std::string& what) {
    double until = now_ms() + kTimeoutMs;
    while (query(env, sql) == 0) {
        if (now_ms() > until) throw CommandFailed("not within 20 s: " + what);
        pause_ms(2);
    }
}

// The agent idle: no turn queued or running, no permission request open.
void wait_idle(Env& env) {
    wait_store(env,
               "SELECT (SELECT count(*) FROM acp_turns WHERE state IN ('queued', 'running')) + "
               "(SELECT count(*) FROM acp_permissions WHERE state IN ('open', 'answering')) = 0",
               "the ACP agent idle (its turns ended, no permission request open)");
}

// A process started and not waited for, stdout to a pipe (read once it ended: its output is
// small). One a sample gave up on is killed and reaped.
class Started {
  public:
    Started(const Env& env, const std::vector<std::string>& argv) {
        int fds[2];
        if (pipe2(fds, O_CLOEXEC) != 0) throw CommandFailed("pipe");
        pid_ = spawn(argv, env, dev_null(), fds[1], dev_null());
        close(fds[1]);
        out_ = fds[0];
    }
    ~Started() {
        if (pid_ > 0) {
            kill(pid_, SIGKILL);
            wait();
        }
    }
    Started(const Started&) = delete;
    Started& operator=(const Started&) = delete;

    int wait(std::string* output = nullptr) {
        int status = wait_for(pid_);
        pid_ = 0;
        char buf[4096];
        for (ssize_t n; (n = read(out_, buf, sizeof buf)) > 0;)
            if (output) output->append(buf, static_cast<std::size_t>(n));
        close(out_);
        return status;
    }

  private:
    pid_t pid_ = 0;
    int out_ = -1;
};

std::vector<std::string> cmdline_of(pid_t pid) {
    std::string raw = read_file("/proc/" + std::to_string(pid) + "/cmdline");
    std::vector<std::string> out;
    std::size_t at = 0;
    while (at < raw.size()) {
        std::size_t end = raw.find('\0', at);
        if (end == std::string::npos) end = raw.size();
        out.push_back(raw.substr(at, end - at));
        at = end + 1;
    }
    return out;
}

pid_t parent_of(pid_t pid) {
    std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
    auto close_paren = stat.rfind(')');
    if (close_paren == std::string::npos) return 0;
    std::istringstream rest(stat.substr(close_paren + 2));
    char st = 0;
    pid_t ppid = 0;
    rest >> st >> ppid;
    return ppid;
}

std::vector<pid_t> all_pids() {
    std::vector<pid_t> out;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/proc", ec)) {
        const std::string name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") == std::string::npos)
            out.push_back(std::stoi(name));
    }
    return out;
}

// The host of this home's agent (`team __acp --home HOME ID`) and its child, node.
void find_processes(Env& env) {
    AcpState& s = state(env);
    auto pids = all_pids();
    for (pid_t pid : pids) {
        auto argv = cmdline_of(pid);
        if (argv.size() >= 4 && argv[1] == "__acp" && argv[2] == "--home" && argv[3] == env.home)
            s.host = pid;
    }
    if (!s.host) throw CommandFailed("no `team __acp --home " + env.home + "` process");
    for (pid_t pid : pids) {
        if (parent_of(pid) != s.host) continue;
        for (const auto& arg : cmdline_of(pid))
            if (arg.find("agent.mjs") != std::string::npos) s.agent = pid;
    }
    if (!s.agent)
        throw CommandFailed("no node agent.mjs under the host (pid " + std::to_string(s.host) +
                            ")");
}

// VmRSS of PID in MiB.
double rss_mib(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("VmRSS:", 0) != 0) continue;
        std::istringstream v(line.substr(6));
        double kib = 0;
        v >> kib;
        return kib / 1024.0;
    }
    throw CommandFailed("no VmRSS for pid " + std::to_string(pid) + " (has it ended?)");
}

// Set-up of the shared home: team "bench", agent a1 = the scripted agent stamping into
// DIR/stamps, its session ready; the store opened read-only for the waits.
void spawn_acp_agent(Env& env) {
    if (!fs::exists(kSourceDir + "/tests/acp/node_modules/@agentclientprotocol/sdk/package.json"))
        throw CommandFailed("tests/acp/node_modules is missing (scripts/setup installs it)");
    auto s = std::make_shared<AcpState>();
    s->stamps = env.dir + "/stamps";
    std::ofstream(s->stamps).flush();
    env.held = s;
    run_checked(env, {env.team, "create", "bench"});
    run_checked(env,
                team_argv(env, {"spawn", "a1", "--acp", "--cwd", env.dir, "--env",
                                "ACP_TEST_STAMP_FILE=" + s->stamps, "--", "node", kAgentScript}));
    std::string path = env.home + "/team.db";
    if (sqlite3_open_v2(path.c_str(), &s->db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK)
        throw CommandFailed("cannot open " + path + ": " + sqlite3_errmsg(s->db));
    sqlite3_busy_timeout(s->db, 10'000);
    wait_store(env, "SELECT count(*) FROM acp_agents WHERE state = 'ready'",
               "the ACP agent's session ready (node and the handshake)");
    find_processes(env);
    // Let the start settle (the host's first transcript batch, node's JIT of the start-up).
    pause_ms(500);
}

void end_acp_agent(Env& env) {
    run_capture(env, team_argv(env, {"kill-agent", "a1", "--force"}));
    kill_tmux_server(env);
    env.held.reset();
}

// Returns ms once the agent is idle again: every sample ends so (its turn's end recorded).
double idle_after(Env& env, double ms) {
    wait_idle(env);
    return ms;
}

// `team prompt a1 'say x'`: from its start to the agent's session/prompt handler (or, with
// `process`, to the prompt process's exit: the reference of what a `team` process costs).
std::function<double(Env&)> sample_prompt(bool process) {
    return [process](Env& env) {
        wait_idle(env);
        skip_stamps(env);
        double start = now_ms();
        double ran = time_run(env, team_argv(env, {"prompt", "a1", "say x"}));
        double had = wait_stamp(env, "prompt") - start;
        return idle_after(env, process ? ran : had);
    };
}

// The permission id in `team inbox --json` output of permission requests.
long long permission_of(const std::string& out) {
    auto doc = nlohmann::json::parse(out);
    if (!doc.is_array() || doc.empty())
        throw CommandFailed("team inbox --wait returned no permission request: " + out);
    return doc[0].at("data").at("permission").get<long long>();
}

void allow(Env& env, long long id) {
    run_checked(env, team_argv(env, {"permission", "allow", std::to_string(id)}));
}

std::vector<std::string> inbox_wait(const Env& env) {
    return team_argv(env, {"--json", "inbox", "--type", "needs_input", "--unread", "--mark-read",
                           "--wait", "20s"});
}

// The leader's unread permission requests marked read (so a waiting reader sees only the next).
void drain_requests(Env& env) {
    run_checked(env, team_argv(env, {"--json", "inbox", "--type", "needs_input", "--unread",
                                     "--mark-read"}));
}

// The agent's session/request_permission (stamped as it sends it) to a leader's `team inbox
// --type needs_input --unread --mark-read --wait` that was waiting returning it (reaped).
double sample_permission_request(Env& env) {
    wait_idle(env);
    drain_requests(env);
    skip_stamps(env);
    Started reader(env, inbox_wait(env));
    pause_ms(150);  // the reader blocked on its wait (were it later, it would only count more)
    run_checked(env, team_argv(env, {"prompt", "a1", "permission edit"}));
    std::string out;
    int status = reader.wait(&out);
    double returned = now_ms();
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        throw CommandFailed("team inbox --wait failed: " + out);
    double asked = wait_stamp(env, "permission-request");
    allow(env, permission_of(out));
    return idle_after(env, returned - asked);
}

// From the start of `team permission allow ID` to the agent receiving the reply (or, with
// `process`, to the allow process's exit).
std::function<double(Env&)> sample_permission_answer(bool process) {
    return [process](Env& env) {
        wait_idle(env);
        skip_stamps(env);
        run_checked(env, team_argv(env, {"prompt", "a1", "permission edit"}));
        wait_stamp(env, "permission-request");
        wait_store(env, "SELECT count(*) FROM acp_permissions WHERE state = 'open'",
                   "the permission request recorded");
        long long id = query(env, "SELECT max(id) FROM acp_permissions WHERE state = 'open'");
        double start = now_ms();
        double ran = time_run(env, team_argv(env, {"permission", "allow", std::to_string(id)}));
        double had = wait_stamp(env, "permission-answer") - start;
        drain_requests(env);
        return idle_after(env, process ? ran : had);
    };
}

// The agent's terminal/create of `true`: from its request to its response, which the host sends
// once the shell's supervisor has started the command (`ok PID`).
double sample_terminal(Env& env) {
    wait_idle(env);
    skip_stamps(env);
    run_checked(env, team_argv(env, {"prompt", "a1", "terminal - true"}));
    double asked = wait_stamp(env, "terminal-request");
    double ms = wait_stamp(env, "terminal-created") - asked;
    return idle_after(env, ms);
}

// The reference of a terminal: `team shell start -- true` as a whole process, which does what
// terminal/create does in the host (the record, the detached supervisor starting the command)
// plus a `team` process's own start.
double sample_shell_start(Env& env) {
    return time_run(env, team_argv(env, {"shell", "start", "--", "true"}));
}

// `team cancel a1` during a `wait-cancel` turn: from its start to a `team prompt --wait` of that
// turn, waiting all along, returning with the stop reason `cancelled` (exit 130).
double sample_cancel(Env& env) {
    wait_idle(env);
    skip_stamps(env);
    Started waiter(env, team_argv(env, {"--json", "prompt", "a1", "wait-cancel", "--wait",
                                        "--timeout", "20s"}));
    wait_stamp(env, "prompt");
    // The host's writes of the turn's start settled, and the waiter back on its wait. (Not the
    // row's state `running`: the host may miss it, see docs/performance.md.)
    pause_ms(50);
    double start_ms = now_ms();
    try {
        time_run(env, team_argv(env, {"cancel", "a1"}));
    } catch (...) {
        run_capture(env, team_argv(env, {"cancel", "a1"}));
        throw;
    }
    std::string out;
    int status = waiter.wait(&out);
    double ms = now_ms() - start_ms;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 130)
        throw CommandFailed("team prompt --wait of the cancelled turn: exit " +
                            std::to_string(WEXITSTATUS(status)) + " (not 130): " + out);
    return idle_after(env, ms);
}

std::function<double(Env&)> sample_rss(bool host) {
    return [host](Env& env) {
        wait_idle(env);
        pause_ms(10);
        AcpState& s = state(env);
        return rss_mib(host ? s.host : s.agent);
    };
}

}  // namespace

std::vector<Figure> acp_figures(const std::string& team) {
    (void)team;
    std::vector<Figure> list;
    auto figure = [&](std::string name, double goal, std::function<double(Env&)> sample,
                      int max_runs, std::string unit = {}) {
        Figure f{"acp: " + std::move(name), goal, spawn_acp_agent, std::move(sample),
                 end_acp_agent};
        f.max_runs = max_runs;
        f.shared_home = "acp";
        f.unit = std::move(unit);
        list.push_back(std::move(f));
    };
    // Memory first, the agent fresh (its handshake done, no turn yet); again at the end.
    figure("host (team __acp) RSS at idle, fresh", 0, sample_rss(true), 10, "MiB");
    figure("agent (node) RSS at idle, fresh", 0, sample_rss(false), 10, "MiB");
    // Goals: 5 ms for a prompt, a request or an answer to cross; 10 ms for a terminal; 50 ms
    // for a cancel to end the turn.
    // The rows marked "reference" have no goal: the whole `team` process that starts the path
    // above them, alone, in the same home, for the host's share to be read off.
    figure("prompt -> the agent has it", 5.0, sample_prompt(false), 25);
    figure("team prompt process alone (reference)", 0, sample_prompt(true), 15);
    figure("permission request -> leader's inbox --wait", 5.0, sample_permission_request, 25);
    figure("permission allow -> the agent has it", 5.0, sample_permission_answer(false), 25);
    figure("team permission allow process alone (reference)", 0, sample_permission_answer(true),
           15);
    figure("terminal/create -> command running", 10.0, sample_terminal, 25);
    figure("team shell start -- true (reference)", 0, sample_shell_start, 15);
    figure("cancel -> turn ended cancelled (prompt --wait)", 50.0, sample_cancel, 25);
    figure("host (team __acp) RSS at idle, after the turns above", 0, sample_rss(true), 10, "MiB");
    return list;
}

}  // namespace bench
