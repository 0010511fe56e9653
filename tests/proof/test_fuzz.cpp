// Issue 8, fuzzing the command line: random argument vectors and hostile strings, run by the real
// binary on a home with real state (two teams, live agents, tasks in every status, messages, an
// open shutdown request, a background shell, a session). For every call: no crash, no sanitizer
// or exception report, an exit code of SPEC 1.4, the output of SPEC 1.4 (with --json exactly one
// JSON document, an error as {"success": false, "error", "code"} or the command's own result
// shape; without it `team: error: ...` on stderr), no command injection (a CANARY file that the
// hostile strings try to create never exists), and, on exit 2, 3 or 4, not one row of any table
// of the database changed.
//
// Three test cases: random argvs (every command and subcommand of `team --help`, their real
// options, random option names, hostile values, global options in random places, TEAM_AGENT_ID
// now and then, and random mutations of the result); every option and argument of every command
// given the hostile values in turn, then paths that try to run a command (a home and a working
// directory named `$(touch "$FZC") ...`, a session's saved state holding them) and empty values
// glued to their option (`--opt=`); and the placement of the global options (anywhere before or
// after the command, the same result).
//
// A state change on exit 2-4 is confirmed before it is a failure: agents and shells started by
// earlier calls end by themselves and are recorded by their supervisors at any moment, so the
// call is run again on a database that has stopped changing, and only a change that comes again
// fails the test.
//
// Replay: a failure names the seed, the call's number and its argv quoted for the shell;
// TEAM_FUZZ_SEED=<seed> reruns the same sequence. TEAM_FUZZ_SCALE multiplies the number of calls
// (0.1 for a quick look, 10 for a long run). TEAM_FUZZ_REPORT=1 prints what was seen (exit codes
// per command, the messages of exit 1, state changes that did not repeat) on stderr;
// TEAM_FUZZ_TRACE=1 prints every call as it runs.
//
// Safety (this runs on CI machines): every call has the test's own TEAM_HOME and TEAM_NAME, and
// --home only ever names a directory in the test's temporary directory; attach and the hidden
// commands are never generated; what a command runs (after --: spawn, run, shell start, session
// exec and start) is a fixed harmless command, and no generated value can become part of it (the
// argvs of those commands are well formed: every option has its value, no stray word, no
// mutation); every --wait, --timeout and --grace of a command that blocks is at most 1 s; every
// call is killed after 15 s (60 s under AddressSanitizer), and a hang is a failure.
#include <SQLiteCpp/SQLiteCpp.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/agents_home.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/process.hpp"

namespace {

using namespace team::test;
namespace fs = std::filesystem;
using Argv = std::vector<std::string>;
using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

// ------------------------------------------------------------------------------------------------
// Running one call, bounded.

// A call still running after 15 s (60 s under AddressSanitizer) is killed: a hang.
const int kHangMs = bound(15000);
constexpr int kFollowMs = 1000;  // a --follow stream runs until interrupted: SIGINT after this
const int kHeldOpenMs = bound(2000);

struct Outcome {
    int exit_code = -1;      // when it exited
    int signal = 0;          // when a signal ended it
    bool hung = false;       // killed by us after kHangMs
    bool held_open = false;  // its stdout or stderr stayed open after it exited
    bool interrupted = false;
    std::string out, err;
};

// Runs argv with exactly `env`, feeding `input` on stdin. SIGPIPE is blocked in this thread
// while stdin is written (and drained after), never ignored: an ignored signal would be inherited
// by `team` and everything it starts.
Outcome run_bounded(const Argv& argv, const std::map<std::string, std::string>& env,
                    const std::string& input, bool follow) {
    Outcome o;
    int out[2], err[2], in[2];
    REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
    REQUIRE(::pipe2(err, O_CLOEXEC) == 0);
    REQUIRE(::pipe2(in, O_CLOEXEC) == 0);
    std::vector<std::string> env_strings;
    for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
    std::vector<char*> cargv, cenv;
    for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    for (auto& e : env_strings) cenv.push_back(e.data());
    cenv.push_back(nullptr);

    sigset_t pipe_signal, old_mask;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_signal, &old_mask);
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
        ::dup2(in[0], 0);
        ::dup2(out[1], 1);
        ::dup2(err[1], 2);
        ::execve(cargv[0], cargv.data(), cenv.data());
        ::_exit(127);
    }
    ::close(out[1]);
    ::close(err[1]);
    ::close(in[0]);
    int fds[3] = {out[0], err[0], in[1]};  // stdout, stderr, stdin
    std::string* sinks[2] = {&o.out, &o.err};
    size_t written = 0;
    if (input.empty()) {
        ::close(fds[2]);
        fds[2] = -1;
    } else {
        ::fcntl(fds[2], F_SETFL, O_NONBLOCK);
    }
    auto start = Clock::now();
    bool exited = false;
    int status = 0;
    Clock::time_point exited_at;
    char buf[65536];
    for (;;) {
        auto now = Clock::now();
        auto ms = [&](Clock::time_point since) {
            return std::chrono::duration_cast<std::chrono::milliseconds>(now - since).count();
        };
        if (!exited && ::waitpid(pid, &status, WNOHANG) == pid) {
            exited = true;
            exited_at = now;
        }
        if (!exited && follow && !o.interrupted && ms(start) > kFollowMs) {
            ::kill(pid, SIGINT);
            o.interrupted = true;
        }
        if (!exited && ms(start) > kHangMs) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            o.hung = exited = true;
            exited_at = now;
        }
        if (fds[0] < 0 && fds[1] < 0) {
            if (exited) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
            continue;
        }
        if (exited && ms(exited_at) > kHeldOpenMs) {
            o.held_open = true;
            break;
        }
        pollfd p[3];
        int n = 0;
        int which[3];
        for (int i = 0; i < 3; ++i) {
            if (fds[i] < 0) continue;
            p[n] = {fds[i], static_cast<short>(i == 2 ? POLLOUT : POLLIN), 0};
            which[n++] = i;
        }
        if (::poll(p, static_cast<nfds_t>(n), 20) < 0 && errno != EINTR) break;
        for (int k = 0; k < n; ++k) {
            int i = which[k];
            if (p[k].revents == 0) continue;
            if (i == 2) {
                size_t chunk = std::min<size_t>(65536, input.size() - written);
                ssize_t w = ::write(fds[2], input.data() + written, chunk);
                if (w > 0) written += static_cast<size_t>(w);
                if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == input.size()) {
                    ::close(fds[2]);
                    fds[2] = -1;
                }
                continue;
            }
            ssize_t r = ::read(fds[i], buf, sizeof buf);
            if (r > 0) {
                sinks[i]->append(buf, static_cast<size_t>(r));
            } else if (r == 0 || errno != EINTR) {
                ::close(fds[i]);
                fds[i] = -1;
            }
        }
    }
    for (int& fd : fds) {
        if (fd >= 0) ::close(fd);
    }
    if (!exited) ::waitpid(pid, &status, 0);
    timespec zero{};
    while (::sigtimedwait(&pipe_signal, nullptr, &zero) > 0) {
    }
    pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    if (WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
    return o;
}

// TEAM_FUZZ_TRACE=1: every call, its exit and the start of what it said, on stderr.
bool trace() {
    static const bool on = [] {
        const char* env = std::getenv("TEAM_FUZZ_TRACE");
        return env != nullptr && *env != '\0';
    }();
    return on;
}

// ------------------------------------------------------------------------------------------------
// Showing argvs and texts in a report.

// One word as the shell reads it: $'...' with every byte that is not plain ASCII escaped, so that
// a failing call can be pasted back into a shell as it was.
std::string shell_word(const std::string& s) {
    if (s.size() > 200) {
        bool same = std::all_of(s.begin(), s.end(), [&](char c) { return c == s[0]; });
        if (same && std::isalnum(static_cast<unsigned char>(s[0]))) {
            return "\"$(head -c " + std::to_string(s.size()) + " /dev/zero | tr '\\0' " + s[0] +
                   ")\"";
        }
        return shell_word(s.substr(0, 100)) + "...(" + std::to_string(s.size()) + " bytes)";
    }
    bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("@%+=:,./_-", c);
    });
    if (plain) return s;
    std::string out = "$'";
    for (unsigned char c : s) {
        if (c == '\'' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c >= 0x20 && c < 0x7f) {
            out += static_cast<char>(c);
        } else {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02x", c);
            out += hex;
        }
    }
    return out + "'";
}

std::string shown(const Argv& argv) {
    std::string out = "team";
    for (const auto& a : argv) out += " " + shell_word(a);
    return out;
}

// A text cut to `max` bytes, control characters escaped.
std::string excerpt(const std::string& s, size_t max = 1500) {
    std::string out;
    for (size_t i = 0; i < s.size() && i < max; ++i) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        if (c == '\n') {
            out += "\\n";
        } else if (c < 0x20 || c == 0x7f) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02x", c);
            out += hex;
        } else {
            out += static_cast<char>(c);
        }
    }
    if (s.size() > max) out += "...(" + std::to_string(s.size()) + " bytes)";
    return out;
}

// ------------------------------------------------------------------------------------------------
// The database, row by row.

// Every row of every table of the database (read-only, in one read transaction), one line per
// row. A long value is shown by its start, its length and a hash of all of it (messages and
// descriptions of 1 MiB would otherwise make every snapshot megabytes long). Nothing is left
// out: an inbox read that is only a read changes nothing, so it needs no exclusion either.
std::string snapshot(const fs::path& db_path) {
    std::error_code ec;
    if (!fs::exists(db_path, ec)) return "";  // the same as a database with no rows
    SQLite::Database db(db_path.string(), SQLite::OPEN_READONLY);
    db.setBusyTimeout(20000);
    db.exec("BEGIN");
    std::vector<std::string> tables;
    {
        SQLite::Statement list(db,
                               "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
        while (list.executeStep()) tables.push_back(list.getColumn(0).getString());
    }
    std::string out;
    for (const auto& table : tables) {
        SQLite::Statement select(db, "SELECT * FROM \"" + table + "\"");
        while (select.executeStep()) {
            out += table + ":";
            for (int i = 0; i < select.getColumnCount(); ++i) {
                auto c = select.getColumn(i);
                std::string v = c.isNull() ? "<null>" : c.getString();
                if (v.size() > 160) {
                    v = v.substr(0, 60) + "...(" + std::to_string(v.size()) + " bytes #" +
                        std::to_string(std::hash<std::string>{}(v)) + ")";
                }
                out += excerpt(v, 400) + "|";
            }
            out += '\n';
        }
    }
    db.exec("COMMIT");
    return out;
}

// The rows only in `a` (-) and only in `b` (+), a dozen at most.
std::string diff(const std::string& a, const std::string& b) {
    auto lines = [](const std::string& s) {
        std::multiset<std::string> out;
        std::istringstream in(s);
        std::string line;
        while (std::getline(in, line)) out.insert(line);
        return out;
    };
    auto la = lines(a), lb = lines(b);
    std::vector<std::string> gone, added;
    std::set_difference(la.begin(), la.end(), lb.begin(), lb.end(), std::back_inserter(gone));
    std::set_difference(lb.begin(), lb.end(), la.begin(), la.end(), std::back_inserter(added));
    std::string out;
    int shown_lines = 0;
    for (const auto& l : gone) {
        if (shown_lines++ < 6) out += "\n  - " + l.substr(0, 300);
    }
    for (const auto& l : added) {
        if (shown_lines++ < 12) out += "\n  + " + l.substr(0, 300);
    }
    return out;
}

// ------------------------------------------------------------------------------------------------
// The commands, as `team --help` and `team COMMAND --help` declare them.

enum class Kind {
    flag,
    text,      // free text ('-': stdin)
    team,      // a team name
    agent,     // an agent name or id
    task,      // a task id
    message,   // a message id
    shell,     // a shell id
    request,   // a shutdown request id
    session,   // a session name
    duration,  // a duration that does not block the command (a deadline, an age)
    wait,      // a duration the command may block for: at most 1 s
    count,
    bytes,
    signal,
    status,
    color,
    msg_type,
    act_type,
    env,  // K=V
    json,
    dir,
    act_id,
};

struct Option {
    std::string name;
    Kind kind;
    bool required = false;
};

enum class Arity { optional, required, many };

struct Positional {
    Kind kind;
    Arity arity;
};

// What follows "--": nothing, a fixed argv, or a fixed bash command string.
enum class Tail { none, argv, script };

struct Command {
    Argv words;
    std::vector<Positional> positionals;
    std::vector<Option> options;
    Tail tail = Tail::none;
    double weight = 1;
    std::string path() const {
        std::string p;
        for (const auto& w : words) p += (p.empty() ? "" : " ") + w;
        return p;
    }
};

const std::vector<Command>& commands() {
    using K = Kind;
    using A = Arity;
    constexpr Tail none = Tail::none;
    // clang-format off
    static const std::vector<Command> all{
        {{"create"}, {{K::team, A::required}},
         {{"--description", K::text}, {"--cwd", K::dir}, {"--leader", K::agent}}, none, 0.5},
        {{"list"}, {}, {{"--all", K::flag}}},
        {{"status"}, {{K::team, A::optional}}, {}},
        {{"delete"}, {{K::team, A::required}}, {}, none, 0.2},
        {{"activity"}, {}, {{"--type", K::act_type}, {"--since", K::act_id}, {"--limit", K::count},
                            {"--all", K::flag}, {"--follow", K::flag}}},
        {{"spawn"}, {{K::agent, A::required}},
         {{"--role", K::text}, {"--cwd", K::dir}, {"--env", K::env}, {"--color", K::color}},
         Tail::argv, 0.5},
        {{"agents"}, {}, {{"--all", K::flag}}},
        {{"logs"}, {{K::agent, A::required}},
         {{"-n", K::count}, {"--lines", K::count}, {"--follow", K::flag}}},
        {{"prompt"}, {{K::agent, A::required}, {K::text, A::required}}, {{"--no-enter", K::flag}}},
        {{"send"}, {{K::agent, A::optional}, {K::text, A::optional}},
         {{"--all", K::flag}, {"--type", K::msg_type}, {"--data", K::json}, {"--notify", K::flag}}},
        {{"inbox"}, {}, {{"--agent", K::agent}, {"--unread", K::flag}, {"--type", K::msg_type},
                         {"--since", K::message}, {"--limit", K::count}, {"--mark-read", K::flag},
                         {"--wait", K::wait}}},
        {{"inbox", "ack"}, {{K::message, A::many}}, {}},
        {{"task"}, {}, {}, none, 0.1},
        {{"task", "add"}, {{K::text, A::required}},
         {{"--description", K::text}, {"--owner", K::agent}, {"--blocked-by", K::task}}},
        {{"task", "list"}, {},
         {{"--owner", K::agent}, {"--status", K::status}, {"--available", K::flag}}},
        {{"task", "show"}, {{K::task, A::required}}, {}},
        {{"task", "claim"}, {{K::task, A::optional}}, {}},
        {{"task", "update"}, {{K::task, A::required}},
         {{"--status", K::status}, {"--owner", K::agent}, {"--unassign", K::flag},
          {"--subject", K::text}, {"--description", K::text}}},
        {{"task", "done"}, {{K::task, A::required}}, {}},
        {{"kill-agent"}, {{K::agent, A::required}},
         {{"--force", K::flag}, {"--reason", K::text}, {"--wait", K::flag}, {"--timeout", K::wait},
          {"--force-after", K::duration}, {"--grace", K::wait}, {"--reassign-to", K::agent}},
         none, 0.5},
        {{"shutdown"}, {}, {}, none, 0.1},
        {{"shutdown", "approve"}, {}, {{"--request", K::request}}},
        {{"shutdown", "reject"}, {}, {{"--reason", K::text, true}, {"--request", K::request}}},
        {{"shutdown", "confirm"}, {}, {{"--request", K::request}}, none, 0.5},
        {{"shutdown", "status"}, {{K::agent, A::optional}}, {}},
        {{"teardown"}, {{K::team, A::optional}},
         {{"--grace", K::wait}, {"--reason", K::text}, {"--purge", K::flag}}, none, 0.15},
        {{"shell"}, {}, {}, none, 0.1},
        {{"shell", "start"}, {},
         {{"--agent", K::agent}, {"--cwd", K::dir}, {"--env", K::env},
          {"--timeout", K::duration}, {"--output-limit", K::bytes}},
         Tail::argv},
        {{"shell", "list"}, {}, {{"--all", K::flag}, {"--agent", K::agent}}},
        {{"shell", "status"}, {{K::shell, A::required}}, {}},
        {{"shell", "output"}, {{K::shell, A::required}},
         {{"--limit", K::bytes}, {"--follow", K::flag}}},
        {{"shell", "wait"}, {{K::shell, A::required}}, {{"--timeout", K::wait}}},
        {{"shell", "kill"}, {{K::shell, A::required}},
         {{"--signal", K::signal}, {"--timeout", K::wait}, {"--no-force", K::flag}}},
        {{"shell", "release"}, {{K::shell, A::required}}, {}, none, 0.5},
        {{"shell", "gc"}, {}, {{"--older-than", K::duration}}},
        {{"session"}, {}, {}, none, 0.1},
        {{"session", "exec"}, {{K::session, A::required}},
         {{"--timeout", K::duration}, {"--output-limit", K::bytes}}, Tail::script},
        {{"session", "start"}, {{K::session, A::required}},
         {{"--timeout", K::duration}, {"--output-limit", K::bytes}}, Tail::script},
        {{"session", "list"}, {}, {}},
        {{"session", "show"}, {{K::session, A::required}}, {}},
        {{"session", "close"}, {{K::session, A::required}}, {{"--timeout", K::wait}}, none, 0.5},
        // No agent here has a worktree: a land refuses or finds nothing, and no check ever runs.
        {{"land"}, {{K::agent, A::many}},
         {{"--check", K::text}, {"--into", K::text}, {"--strategy", K::text},
          {"--check-timeout", K::duration}, {"--stop-on-failure", K::flag}, {"--dry-run", K::flag}},
         none, 0.3},
        {{"lands"}, {}, {{"--limit", K::count}}},
        {{"run"}, {},
         {{"--timeout", K::duration}, {"--output-limit", K::bytes}, {"--signal", K::signal},
          {"--grace", K::wait}},
         Tail::argv},
    };
    // clang-format on
    return all;
}

const std::set<std::string> kCommandWords{
    "create", "list",    "status", "delete", "activity", "spawn",       "agents",   "attach",
    "logs",   "prompt",  "send",   "inbox",  "task",     "kill-agent",  "shutdown", "teardown",
    "shell",  "session", "run",    "land",   "lands",    "__supervise", "__agent"};
const std::set<std::string> kSubcommands{
    "ack",    "add",   "list",   "show", "claim", "update",  "done", "approve", "reject", "confirm",
    "status", "start", "output", "wait", "kill",  "release", "gc",   "exec",    "close"};
const std::set<std::string> kForbidden{"attach", "__supervise", "__agent"};
const std::set<std::string> kGlobalValueOptions{"--home", "-t", "--team", "--as"};

// Every option that takes a value, of any command or global.
const std::set<std::string>& value_options() {
    static const std::set<std::string> all = [] {
        std::set<std::string> out = kGlobalValueOptions;
        for (const auto& c : commands()) {
            for (const auto& o : c.options) {
                if (o.kind != Kind::flag) out.insert(o.name);
            }
        }
        return out;
    }();
    return all;
}

// Durations a blocking command may get: at most 1 s, or not a duration at all.
const Argv kShortWaits{"1ms", "10ms", "100ms", "250ms", "0.2", "1s", "1"};

// Whether a value cannot make a command block for longer than 1 s: a short wait, or not a
// number at all (empty, a word, a negative number). Anything else that starts like a number
// ("0x10", "2", "1h") might be read as a long duration, and is kept from blocking options.
bool short_wait(const std::string& v) {
    if (std::find(kShortWaits.begin(), kShortWaits.end(), v) != kShortWaits.end()) return true;
    if (v.empty()) return true;
    return !std::strchr("+.0123456789", v[0]);
}

// ------------------------------------------------------------------------------------------------
// A call and what is checked about it.

struct Call {
    Argv argv;
    std::string input;  // stdin
    std::string command;
    bool runner = false;   // runs a command after --
    bool follow = false;   // a --follow stream: interrupted after kFollowMs
    std::string agent_id;  // TEAM_AGENT_ID, when set
};

bool starts_with(const std::string& s, const std::string& prefix) {
    return s.rfind(prefix, 0) == 0;
}

// The tokens before the first "--".
size_t options_end(const Argv& argv) {
    auto it = std::find(argv.begin(), argv.end(), "--");
    return static_cast<size_t>(it - argv.begin());
}

// Whether `name` stands at i as an option of its own: not where the option before it would
// take it as its value.
bool clean_at(const Argv& argv, size_t i) {
    return i == 0 || !value_options().count(argv[i - 1]);
}

bool has_clean(const Argv& argv, const std::string& name, size_t end) {
    for (size_t i = 0; i < end && i < argv.size(); ++i) {
        if (argv[i] == name && clean_at(argv, i)) return true;
    }
    return false;
}

// The command word as `team` finds it (cli/app.cpp: the first word that is not an option or the
// value of a global option), and its index.
std::pair<std::string, size_t> command_word(const Argv& argv) {
    for (size_t i = 0; i < argv.size(); ++i) {
        const auto& a = argv[i];
        if (a == "--") break;
        if (kGlobalValueOptions.count(a)) {
            ++i;
            continue;
        }
        if (!a.empty() && a[0] == '-') continue;
        return {a, i};
    }
    return {"", argv.size()};
}

// Whether output is a JSON document (or JSON Lines), and whether that is certain: a clean
// --json before the first "--" asks for it for sure; one that may be an option's value, or that
// stands after "--", may or may not.
enum class Mode { human, json, either };

Mode output_mode(const Argv& argv, bool runner) {
    size_t end = options_end(argv);
    if (has_clean(argv, "--json", end)) return Mode::json;
    // CLI11 also takes --json=1 (or =true...) as the flag.
    size_t scan = runner ? end : argv.size();
    for (size_t i = 0; i < scan; ++i) {
        if (argv[i] == "--json" || starts_with(argv[i], "--json=")) return Mode::either;
    }
    return Mode::human;
}

// CLI11 takes `--help=X`, `--version=X`, `-hX` and `-h=X` for the flag too (the value is
// ignored).
bool asks_help(const Argv& argv) {
    for (const auto& a : argv) {
        if (a == "--help" || a == "--version" || starts_with(a, "--help=") ||
            starts_with(a, "--version=") || starts_with(a, "-h"))
            return true;
    }
    return false;
}

// Commands whose JSON result keeps its own shape on an error (SPEC 1.4), with or without a code.
bool own_shape(const std::string& command) {
    return command == "kill-agent" || command == "shell kill" || command == "teardown" ||
           command == "session close";
}

// What is wrong with one outcome (empty when nothing is): pairs of a kind and the details.
std::vector<std::pair<std::string, std::string>> problems(const Call& call, const Outcome& o) {
    std::vector<std::pair<std::string, std::string>> out;
    auto add = [&](const std::string& kind, const std::string& detail = "") {
        out.emplace_back(kind, detail);
    };
    if (o.hung) add("hang: still running after " + std::to_string(kHangMs / 1000) + " s");
    if (o.held_open) add("stdout or stderr held open after team exited");
    if (o.signal != 0 && !(o.interrupted && o.signal == SIGINT))
        add("killed by signal " + std::to_string(o.signal));
    static const std::set<int> kExits{0, 1, 2, 3, 4, 124};
    if (o.signal == 0 && !o.hung && !kExits.count(o.exit_code) &&
        !(o.interrupted && o.exit_code == 128 + SIGINT))
        add("exit code " + std::to_string(o.exit_code) + " is not one of SPEC 1.4");
    for (const char* marker : {"AddressSanitizer", "LeakSanitizer", "runtime error:",
                               "terminate called", "Assertion", "what():", "std::"}) {
        if (o.err.find(marker) != std::string::npos || o.out.find(marker) != std::string::npos)
            add(std::string("report on stderr or stdout: ") + marker);
    }
    // Help and version are text for a person, even with --json; `team` alone prints the help
    // on stderr and exits 2 (docs/guide.md).
    if (o.hung || o.signal != 0 || asks_help(call.argv) || call.argv.empty()) return out;

    Mode mode = output_mode(call.argv, call.runner);
    int code = o.exit_code;
    bool error = code >= 1 && code <= 4;
    auto check_json = [&](const Json& doc) {
        if (!error) return;
        if (!doc.is_object() || doc.value("success", true) != false || !doc.contains("error") ||
            !doc["error"].is_string()) {
            add("JSON error is not {success: false, error}", o.out.substr(0, 400));
            return;
        }
        if (doc.contains("code")) {
            if (doc["code"] != error_code_name(code))
                add("JSON code does not match exit " + std::to_string(code), o.out.substr(0, 400));
        } else if (!own_shape(call.command)) {
            add("JSON error without a code", o.out.substr(0, 400));
        }
        if (o.err.find("team: error:") != std::string::npos)
            add("JSON error also printed on stderr", excerpt(o.err, 400));
    };
    auto human_error_ok = [&] {
        // Warnings may come first; the error is one line `team: error: ...`.
        std::istringstream lines(o.err);
        std::string line;
        while (std::getline(lines, line)) {
            if (starts_with(line, "team: error: ")) return true;
            if (!starts_with(line, "team: warning: ")) return false;
        }
        return false;
    };
    if (call.follow || (o.interrupted && mode != Mode::human)) {
        if (mode == Mode::json) {
            std::istringstream lines(o.out);
            std::string line;
            while (std::getline(lines, line)) {
                if (line.empty()) continue;
                if (Json::parse(line, nullptr, false).is_discarded())
                    add("--follow --json line is not JSON", excerpt(line, 300));
            }
        }
        return out;
    }
    Json doc = Json::parse(o.out, nullptr, false);
    if (mode == Mode::json) {
        if (doc.is_discarded()) {
            add("with --json, stdout is not exactly one JSON document", excerpt(o.out, 400));
        } else {
            check_json(doc);
        }
    } else if (mode == Mode::either && !doc.is_discarded()) {
        check_json(doc);
    } else if (error && !human_error_ok()) {
        add("error without 'team: error:' on stderr", excerpt(o.err, 400));
    }
    return out;
}

// ------------------------------------------------------------------------------------------------
// The home: real state, the value pools drawn from it, the generator and the checks.

class FuzzHome {
  public:
    // `seed` is TEAM_FUZZ_SEED; each test case draws from seed + `offset`.
    FuzzHome(const std::string& label, std::uint32_t seed, std::uint32_t offset)
        : label_(label), seed_(seed), rng_(seed + offset), h_("fz") {
        canary_ = h_.env.dir() / "CANARY";
        // Directories whose names try to run `touch $FZC` (FZC, the canary's path, is in the
        // environment of every call, so of the tmux server and every shell team starts): the
        // second home, and a working directory.
        const std::string name = "$(touch \"$FZC\") `touch $FZC` #(touch $FZC) 'x";
        home2_ = h_.env.dir() / ("home2 " + name);
        hostile_dir_ = h_.env.dir() / ("cwd " + name);
        fs::create_directories(h_.env.dir() / "sub");
        fs::create_directories(hostile_dir_);
        build_hostile();
        build_state();
    }

    const fs::path& dir() const { return h_.env.dir(); }

    bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
    size_t below(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
    template <class V>
    const typename V::value_type& pick(const V& v) {
        return v[below(v.size())];
    }

    // ---- values

    // A value of that kind: a plausible one (by default half the time) (a real agent, a real task
    // id, a valid duration...), else a hostile one. Never "--" for a command that runs one (it
    // would end the options early), and never a possibly long duration where the command blocks.
    std::string value(Kind kind, bool runner, double plausible_share = 0.5) {
        for (;;) {
            std::string v = chance(plausible_share) ? plausible(kind) : pick(hostile_);
            if (runner && v == "--") continue;
            if (kind == Kind::wait && !short_wait(v)) continue;
            return v;
        }
    }

    // The next value of the hostile list (shuffled once), skipping what `kind` may not take.
    std::string next_hostile(Kind kind, bool runner) {
        if (hostile_order_.empty()) {
            hostile_order_ = hostile_;
            std::shuffle(hostile_order_.begin(), hostile_order_.end(), rng_);
        }
        for (;;) {
            const std::string& v = hostile_order_[next_++ % hostile_order_.size()];
            if (runner && v == "--") continue;
            if (kind == Kind::wait && !short_wait(v)) continue;
            return v;
        }
    }

    std::string plausible(Kind kind) {
        using K = Kind;
        auto from = [&](Argv pool, const Argv& more) {
            pool.insert(pool.end(), more.begin(), more.end());
            return pick(pool);
        };
        switch (kind) {
            case K::flag:
            case K::text:
                return pick(Argv{"hello", "two words", "-", "done: #3", "line 1\nline 2", ""});
            case K::team:
                return pick(Argv{"fz", "fz2", "nope", "Fz", "fz@fz"});
            case K::agent:
                // A fresh name now and then, so that a spawn can succeed.
                return from(agents_, {"leader", "nope", "w1@fz", "w1@fz2", "leader@fz",
                                      "n" + std::to_string(below(100000))});
            case K::task:
                return from(tasks_, {"999", "0", "01"});
            case K::message:
                return from(messages_, {"999999", "0"});
            case K::shell:
                return from(shells_, {"bg-000000", "bg-ABCDEF", "bg-"});
            case K::request:
                return from(requests_, {"999", "0"});
            case K::session:
                return from(sessions_, {"s", "s2", "new-one"});
            case K::duration:
                return pick(Argv{"1ms", "250ms", "1", "1.5s", "2m", "1h", "720h", "721h", "0.5",
                                 "+1s", "1 s", "0x10", "1e3"});
            case K::wait:
                return pick(kShortWaits);
            case K::count:
                return pick(Argv{"1", "2", "5", "100", "0", "-1", "18446744073709551616", "1.5"});
            case K::bytes:
                return pick(Argv{"0", "1", "16", "4096", "1048576", "-1", "99999999999999999999"});
            case K::signal:
                return pick(Argv{"SIGTERM", "SIGINT", "SIGKILL", "TERM", "KILL", "9", "15",
                                 "SIGSTOP", "SIGHUP", "SIGFOO", "sigkill", "0"});
            case K::status:
                return pick(
                    Argv{"pending", "in_progress", "completed", "deleted", "done", "Pending"});
            case K::color:
                return pick(Argv{"blue", "green", "teal", "pink", "black", "BLUE"});
            case K::msg_type:
                return pick(
                    Argv{"message", "status", "shutdown_request", "shutdown_confirmed", "x y"});
            case K::act_type:
                return pick(Argv{"team_created", "agent_spawned", "shell_started", "nope"});
            case K::env:
                return pick(Argv{"A=1", "A=", "=1", "A", "A=b=c", "1A=x", "A B=1",
                                 "TEAM_AGENT_ID=x@y", "A=$(touch " + canary_.string() + ")"});
            case K::json:
                return pick(Argv{"{}", "[1,2]", "null", "\"s\"", "{bad", "1e309",
                                 "{\"a\":\"\\u0000\"}",
                                 std::string(3000, '[') + std::string(3000, ']'), "{\"a\":1}{}",
                                 "\"\\ud800\"", "{\"k\":[1,{\"x\":null}]}"});
            case K::dir:
                return pick(Argv{dir().string(), (dir() / "sub").string(), hostile_dir_.string(),
                                 "/", "/nonexistent", "relative", "/etc/passwd", "~"});
            case K::act_id:
                return pick(Argv{"0", "1", "3", "999999", "-1"});
        }
        return "";
    }

    std::string global_team(bool runner) {
        return chance(0.6) ? pick(Argv{"fz", "fz2"}) : value(Kind::team, runner);
    }
    std::string caller(bool runner) {
        return chance(0.6) ? pick(agents_) : value(Kind::agent, runner);
    }

    // One global option (with its value): --json, --no-color, -t/--team, --as, rarely --home
    // (a second home inside the test's directory).
    Argv global_option(bool runner) {
        switch (below(9)) {
            case 0:
            case 1:
                return {"--json"};
            case 2:
                return {"--no-color"};
            case 3:
                return {"-t", global_team(runner)};
            case 4:
                return {"--team", global_team(runner)};
            case 5:
                return {"--team=" + global_team(runner)};
            case 6:
                return {"--as", caller(runner)};
            case 7:
                return {"--as=" + caller(runner)};
            default:
                return chance(0.2) ? Argv{"--home", home2_.string()} : Argv{"--json"};
        }
    }

    // An option with its value (or a flag), as separate words or as --name=value.
    Argv option_unit(const Option& o, bool runner, double plausible_share = 0.5) {
        if (o.kind == Kind::flag) return {o.name};
        std::string v = value(o.kind, runner, plausible_share);
        if (o.name.size() > 2 && chance(0.15)) return {o.name + "=" + v};
        return {o.name, v};
    }

    std::string random_option_name() {
        static const Argv extra{"--bogus",   "-z",   "---",    "--=x",     "--json=1",
                                "--no-such", "-tfz", "--Team", "--all=1",  "-",
                                "--",        "-h",   "--help", "--version"};
        if (chance(0.5)) return pick(extra);
        const auto& c = pick(commands());
        if (c.options.empty()) return "--all";
        return pick(c.options).name;
    }

    const Command& pick_command() {
        double total = 0;
        for (const auto& c : commands()) total += c.weight;
        double r = std::uniform_real_distribution<double>(0, total)(rng_);
        for (const auto& c : commands()) {
            if ((r -= c.weight) <= 0) return c;
        }
        return commands().back();
    }

    Argv fixed_tail(Tail tail) {
        if (tail == Tail::argv)
            return chance(0.5) ? Argv{"--", "true"} : Argv{"--", "sleep", "0.1"};
        return {"--", chance(0.5) ? "true" : "cd /tmp"};
    }

    // ---- calls

    // Random calls draw plausible values three times in four, so that many get past the
    // checks of their arguments and reach the state (the hostile-values case does the rest).
    static constexpr double kPlausible = 0.85;

    // A random call: a command, some of its positionals and options (valid or hostile values),
    // global options anywhere, for most commands random option names and mutations too.
    Call random_call() {
        for (;;) {
            const Command& c = pick_command();
            Call call;
            call.command = c.path();
            call.runner = c.tail != Tail::none;
            std::vector<Argv> units, positionals;
            for (const auto& p : c.positionals) {
                int n = p.arity == Arity::many       ? 1 + static_cast<int>(below(3))
                        : p.arity == Arity::required ? (chance(0.92) ? 1 : 0)
                                                     : (chance(0.5) ? 1 : 0);
                for (int i = 0; i < n; ++i)
                    positionals.push_back({value(p.kind, call.runner, kPlausible)});
            }
            for (const auto& o : c.options) {
                if (chance(o.required ? 0.9 : 0.3))
                    units.push_back(option_unit(o, call.runner, kPlausible));
            }
            if (chance(0.5)) units.push_back({"--json"});
            for (size_t n = below(3); n > 0; --n) units.push_back(global_option(call.runner));
            if (!call.runner && chance(0.1)) units.push_back({random_option_name()});
            call.argv = assemble(c, units, positionals);
            if (!call.runner && chance(0.2)) mutate(call.argv, c);
            // The caller from the environment, as in an agent's pane (an empty one is unset).
            if (chance(0.1)) call.agent_id = chance(0.7) ? pick(agents_) + "@fz" : pick(hostile_);
            if (make_safe(call, c)) return call;
        }
    }

    // Words, then units and positionals interleaved at random (positionals in their order),
    // some globals before the words; the fixed command last.
    Argv assemble(const Command& c, std::vector<Argv> units, const std::vector<Argv>& positionals) {
        std::shuffle(units.begin(), units.end(), rng_);
        Argv argv;
        size_t before = units.empty() ? 0 : below(units.size() + 1) / 2;
        for (size_t i = 0; i < before; ++i)
            argv.insert(argv.end(), units[i].begin(), units[i].end());
        argv.insert(argv.end(), c.words.begin(), c.words.end());
        std::vector<std::pair<bool, size_t>> order;  // (positional?, index)
        for (size_t i = before; i < units.size(); ++i) order.emplace_back(false, i);
        for (size_t i = 0; i < positionals.size(); ++i) {
            size_t at = below(order.size() + 1);
            // Keep positionals in order: never before an earlier positional.
            for (size_t k = 0; k < order.size(); ++k) {
                if (order[k].first && k >= at) at = k + 1;
            }
            order.insert(order.begin() + static_cast<long>(at), {true, i});
        }
        for (const auto& [is_pos, i] : order) {
            const Argv& u = is_pos ? positionals[i] : units[i];
            argv.insert(argv.end(), u.begin(), u.end());
        }
        if (c.tail != Tail::none) {
            Argv tail = fixed_tail(c.tail);
            argv.insert(argv.end(), tail.begin(), tail.end());
        }
        return argv;
    }

    // Random edits of the words (never of a command that runs one): a word dropped, doubled,
    // swapped with the next, replaced by or followed by a hostile value or an option name, a
    // "--" slipped in, "=value" glued to an option.
    void mutate(Argv& argv, const Command& c) {
        Argv original = argv;
        for (size_t n = 1 + below(3); n > 0; --n) {
            size_t at = below(argv.size() + 1);
            switch (below(8)) {
                case 0:
                    if (!argv.empty())
                        argv.erase(argv.begin() + static_cast<long>(below(argv.size())));
                    break;
                case 1:
                    argv.insert(argv.begin() + static_cast<long>(at), value(Kind::text, false));
                    break;
                case 2:
                    argv.insert(argv.begin() + static_cast<long>(at), random_option_name());
                    break;
                case 3:
                    if (!argv.empty())
                        argv.insert(argv.begin() + static_cast<long>(at), pick(argv));
                    break;
                case 4:
                    if (!argv.empty()) argv[below(argv.size())] = pick(hostile_);
                    break;
                case 5:
                    if (argv.size() > 1) {
                        size_t i = below(argv.size() - 1);
                        std::swap(argv[i], argv[i + 1]);
                    }
                    break;
                case 6:
                    argv.insert(argv.begin() + static_cast<long>(at), "--");
                    break;
                default:
                    for (auto& a : argv) {
                        if (starts_with(a, "--") && a.size() > 2 &&
                            a.find('=') == std::string::npos && chance(0.5)) {
                            a += "=" + pick(hostile_);
                            break;
                        }
                    }
            }
        }
        // A mutation may not turn the call into another real command (one that runs a command,
        // or attach): then the call stays as it was.
        auto [word, at] = command_word(argv);
        bool other = word != c.words[0] && kCommandWords.count(word);
        if (!other && c.words.size() == 2) {
            for (size_t i = at + 1; i < argv.size(); ++i) {
                if (argv[i] != c.words[1] && kSubcommands.count(argv[i])) other = true;
            }
        }
        if (other) argv = original;
    }

    // The safety rules, applied to the final argv; false when the call must be drawn again.
    bool make_safe(Call& call, const Command& c) {
        Argv& argv = call.argv;
        for (const auto& a : argv) {
            if (kForbidden.count(a)) return false;
        }
        auto [word, word_at] = command_word(argv);
        if (kForbidden.count(word)) return false;
        if (call.runner) {
            // Well formed by construction; make sure: the fixed command is the only thing after
            // the one "--", and nothing before it is a stray word.
            size_t end = options_end(argv);
            Argv tail(argv.begin() + static_cast<long>(end), argv.end());
            if (tail != Argv{"--", "true"} && tail != Argv{"--", "sleep", "0.1"} &&
                tail != Argv{"--", "cd /tmp"})
                return false;
        }
        // --home only ever names the second home, in the test's directory.
        for (size_t i = 0; i < argv.size(); ++i) {
            if (argv[i] == "--home") {
                if (i + 1 < argv.size()) {
                    argv[i + 1] = home2_.string();
                } else {
                    argv.push_back(home2_.string());
                }
            } else if (starts_with(argv[i], "--home=")) {
                argv[i] = "--home=" + home2_.string();
            }
        }
        // Waits of blocking commands: at most 1 s.
        bool inbox = c.words[0] == "inbox";
        auto blocking = [&](const std::string& name) {
            if (name == "--wait") return inbox;
            if (!call.runner) return name == "--timeout" || name == "--grace";
            return name == "--grace" && c.words[0] == "run";
        };
        for (size_t i = 0; i < argv.size(); ++i) {
            if (blocking(argv[i]) && i + 1 < argv.size() && !short_wait(argv[i + 1]))
                argv[i + 1] = pick(kShortWaits);
            auto eq = argv[i].find('=');
            if (eq != std::string::npos && blocking(argv[i].substr(0, eq)) &&
                !short_wait(argv[i].substr(eq + 1)))
                argv[i] = argv[i].substr(0, eq + 1) + pick(kShortWaits);
        }
        // Commands that would otherwise wait for good get a short bound, right after the
        // command's words (where no option can take it as its value).
        std::string path = call.command;
        bool waits = false;
        for (const auto& a : argv) waits = waits || a == "--wait" || starts_with(a, "--wait=");
        auto add_bound = [&](const std::string& name) {
            if (has_clean(argv, name, options_end(argv))) return;
            size_t at = word_at + c.words.size();
            if (word != c.words[0] || at > argv.size()) return;
            argv.insert(argv.begin() + static_cast<long>(at), {name, pick(kShortWaits)});
        };
        if (path == "kill-agent" && waits) add_bound("--timeout");
        if (path == "shell wait") add_bound("--timeout");
        if (path == "teardown") add_bound("--grace");
        // --follow=1 (or =true...) is the flag too.
        for (const auto& a : argv) call.follow = call.follow || starts_with(a, "--follow");
        // "-" reads the text from stdin: sometimes give it one.
        if (std::find(argv.begin(), argv.end(), "-") != argv.end()) {
            switch (below(6)) {
                case 0:
                    call.input = "from stdin\n";
                    break;
                case 1:
                    call.input = std::string(1 << 20, 'm');
                    break;
                case 2:
                    call.input = std::string((1 << 20) + 1, 'm');
                    break;
                case 3:
                    call.input = std::string("nul\0inside", 10);
                    break;
                case 4:
                    call.input = "\xff\xfe invalid";
                    break;
                default:
                    break;
            }
        }
        // Linux takes at most 2 MiB of arguments and environment in all.
        size_t bytes = 0;
        for (const auto& a : argv) bytes += a.size();
        return bytes < (1 << 20);
    }

    // ---- running and checking

    std::map<std::string, std::string> environment() const {
        auto env = clean_env(h_.extra());
        env["TEAM_HOME"] = h_.env.home().string();
        env["FZC"] = canary_.string();
        return env;
    }

    Outcome run(const Call& call) {
        Argv argv{team_binary()};
        argv.insert(argv.end(), call.argv.begin(), call.argv.end());
        auto env = environment();
        if (!call.agent_id.empty()) env["TEAM_AGENT_ID"] = call.agent_id;
        return run_bounded(argv, env, call.input, call.follow);
    }

    std::string state() const {
        return snapshot(h_.env.home() / "team.db") + "== home2\n" + snapshot(home2_ / "team.db");
    }

    // Waits until the database stops changing (an agent or shell that ends by itself, a
    // deadline, is recorded a moment later by its supervisor); returns it then.
    std::string settled() const {
        std::string last = state();
        for (int i = 0; i < 20; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(bound(300)));
            std::string now = state();
            if (now == last) return now;
            last = now;
        }
        return last;
    }

    Outcome check(const Call& call) {
        ++calls_;
        std::string before = state();
        Outcome o = run(call);
        auto seen = problems(call, o);
        if (canary_wait_ms_ > 0 && !fs::exists(canary_))
            std::this_thread::sleep_for(std::chrono::milliseconds(canary_wait_ms_));
        if (fs::exists(canary_)) {
            // What tmux runs (#()) runs a moment later: it may be the call before's doing.
            seen.emplace_back("command injection: CANARY was created",
                              "by this call or the one before: " + shown(last_argv_));
            fs::remove(canary_);
        }
        last_argv_ = call.argv;
        if (trace()) {
            std::string said = o.exit_code == 0 ? o.out : o.err.empty() ? o.out : o.err;
            std::fprintf(stderr, "#%d %s -> %d %s\n", calls_,
                         shown(call.argv).substr(0, 300).c_str(), o.exit_code,
                         excerpt(said, 200).c_str());
        }
        int code = o.hung ? -1000 : o.signal != 0 ? -o.signal : o.exit_code;
        ++exits_[call.command][code];  // a hang as -1000, a signal as its negative
        if (code == 1) {
            auto msg = o.err.empty() ? o.out : o.err;
            ++failed_messages_[call.command + ": " + excerpt(msg, 160)];
        }
        if (code >= 2 && code <= 4) {
            std::string after = state();
            if (after != before) {
                // Something may have ended by itself meanwhile: the call is run again on a
                // settled database, and only a change that comes again is a failure. (One that
                // does not is listed in the report, TEAM_FUZZ_REPORT=1.)
                std::string first = diff(before, after);
                std::string s0 = settled();
                Outcome again = run(call);
                std::string s1 = state();
                int code2 = again.hung          ? -1000
                            : again.signal != 0 ? -again.signal
                                                : again.exit_code;
                if (code2 >= 2 && code2 <= 4 && s0 != s1) {
                    seen.emplace_back("state changed on exit " + std::to_string(code2),
                                      diff(s0, s1));
                } else {
                    unrepeated_.push_back(shown(call.argv) + " -> " + std::to_string(code) + first);
                }
            }
        } else if (code == 1) {
            // Exit 1 may have tried something: noted, not a failure.
            if (state() != before) ++failed_with_change_[call.command];
        }
        for (const auto& [kind, detail] : seen) fail(kind, call, o, detail);
        if (code == 0 || code == 1 || code == 124 || calls_ % 40 == 0) ensure_state();
        return o;
    }

    void fail(const std::string& kind, const Call& call, const Outcome& o,
              const std::string& detail) {
        std::string key = kind + " / " + call.command;
        if (++failures_[key] > 2) return;  // the first two of each kind are shown in full
        std::ostringstream m;
        m << label_ << ": " << kind << "\n  seed " << seed_ << " (TEAM_FUZZ_SEED), call #" << calls_
          << "\n  "
          << (call.agent_id.empty() ? "" : "TEAM_AGENT_ID=" + shell_word(call.agent_id) + " ")
          << shown(call.argv);
        if (!call.input.empty()) m << "\n  stdin: " << excerpt(call.input, 80);
        m << "\n  exit " << o.exit_code << (o.signal ? " signal " + std::to_string(o.signal) : "")
          << "\n  stdout: " << excerpt(o.out, 600) << "\n  stderr: " << excerpt(o.err, 600);
        if (!detail.empty()) m << "\n  details: " << detail;
        FAIL_CHECK(m.str());
    }

    // Paths that try to run a command where team may hand them to a shell (tmux's pipe-pane,
    // a session's saved state, tmux's formats): a second home and a working directory named
    // `$(touch "$FZC") \`touch $FZC\` #(touch $FZC) 'x`. The command strings after -- are fixed,
    // and quote what they set: only team's own handling could run what the names say.
    void hostile_paths() {
        const std::string home2 = "--home=" + home2_.string();
        canary_wait_ms_ = bound(300);
        auto call = [&](Argv argv, bool runner = false) {
            Call c;
            c.command = "hostile paths: " + command_word(argv).first;
            c.argv = std::move(argv);
            c.runner = runner;
            check(c);
        };
        // The home's path alone (a1), then the working directory too (a2).
        call({home2, "create", "hx", "--cwd", dir().string()});
        call({home2, "-t", "hx", "spawn", "a1", "--json", "--", "sleep", "0.1"}, true);
        call({home2, "-t", "hx", "spawn", "a2", "--cwd", hostile_dir_.string(), "--", "true"},
             true);
        call({home2, "-t", "hx", "agents", "--all", "--json"});
        call({home2, "-t", "hx", "logs", "a1"});
        call({home2, "-t", "hx", "shell", "start", "--cwd", hostile_dir_.string(), "--", "true"},
             true);
        call({home2, "-t", "hx", "shell", "list", "--all"});
        call({home2, "-t", "hx", "status"});
        // A session whose saved state holds the hostile directory, a variable, a function and an
        // alias whose values are command substitutions (single-quoted: never run by these
        // strings), restored into the next commands of the session.
        call({"session", "exec", "hs", "--", "cd " + sq(hostile_dir_)}, true);
        call({"session", "exec", "hs", "--",
              R"(export V='$(touch "$FZC")'; W='`touch $FZC`'; f() { echo '$(touch "$FZC")'; })"},
             true);
        call({"session", "exec", "hs", "--", R"(alias a='echo $(touch "$FZC")')"}, true);
        call({"session", "exec", "hs", "--json", "--", "true"}, true);
        call({"session", "start", "hs", "--", "true"}, true);
        call({"session", "show", "hs", "--json"});
        call({"session", "list"});
        call({home2, "-t", "hx", "session", "exec", "hs", "--", "cd " + sq(hostile_dir_)}, true);
        call({home2, "-t", "hx", "session", "exec", "hs", "--", "true"}, true);
        call({home2, "-t", "hx", "spawn", "a3", "--", "sleep", "1000"}, true);
        call({home2, "-t", "hx", "prompt", "a3", "$(touch \"$FZC\")"});
        call({home2, "-t", "hx", "send", "a3", "`touch $FZC`", "--notify", "--type", "note"});
        call({home2, "-t", "hx", "teardown", "--grace", "1s", "--json"});
        canary_wait_ms_ = 0;
    }

    // ---- the state the calls work on

    void build_hostile() {
        // Quotes and shell syntax; attempts to run `touch CANARY` through a shell, tmux's #()
        // and a line break; control bytes, Unicode (RTL mark, zero-width joiner) and invalid
        // UTF-8 (a lone byte, a cut sequence, a surrogate, past U+10FFFF, an overlong form).
        // clang-format off
        hostile_ = {"", " ", "  two  spaces  ", "'", "\"", "`", ";", "|", "&&", "a\nb", "\ttab",
                    "\r", "é", "日本", "😀", "\u200f", "a\u200db", "\xff", "\xc3\x28",
                    "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc0\xaf", "\x01\x02\x1b[31m", "\x7f"};
        for (const char* form : {"$(touch %)", "`touch %`", "; touch %", "| touch %", "&& touch %",
                                 "x'; touch %; '", "x\"; touch %; \"", "#(touch %)"}) {
            std::string v = form;
            v.replace(v.find('%'), 1, canary_.string());
            hostile_.push_back(v);
        }
        hostile_.push_back("\ntouch " + canary_.string() + "\n");
        hostile_.push_back("\n");
        // Option-like words, numbers and durations at and past their limits.
        for (const char* v : {"-", "--", "-x", "--json", "-1", "0", "1", "2", "9223372036854775808",
                              "18446744073709551616", "1e309", "0x10", "NaN", "inf", "1ms", "0s",
                              "-1s", "1h", "99999999999h", "1.5s", "s"}) {
            hostile_.push_back(v);
        }
        // Names and paths: ids, @ and /, .., format strings, globs, JSON-looking words.
        for (const char* v : {"a@b", "w1@fz2", "@", "a/b", "../..", "..", ".", "/", "%s%n",
                              "#{pane_id}", "${HOME}", "*", "[a,b]", "{}", "null", "true", "x=y"}) {
            hostile_.push_back(v);
        }
        // clang-format on
        // Lengths: past 64 (names), 256, 4096, and 100 KiB (under Linux's 128 KiB per
        // argument; 1 MiB texts come through stdin, see make_safe()).
        for (size_t n : {64, 65, 256, 4096, 100 * 1024}) hostile_.push_back(std::string(n, 'c'));
    }

    void build_state() {
        h_.ok({"create", "fz2", "--cwd", dir().string()});
        for (const char* name : {"w1", "w2", "w3"}) spawn_worker(name);
        h_.ok({"task", "add", "first"});   // 1 pending
        h_.ok({"task", "add", "second"});  // 2 in progress
        h_.ok({"task", "claim", "2"}, h_.as("w1"));
        h_.ok({"task", "add", "third"});  // 3 completed
        h_.ok({"task", "done", "3"});
        h_.ok({"task", "add", "fourth"});  // 4 deleted
        h_.ok({"task", "update", "4", "--status", "deleted"});
        h_.ok({"task", "add", "fifth", "--blocked-by", "1", "--owner", "w2"});  // 5 blocked
        h_.ok({"send", "w1", "hello"});
        h_.ok({"send", "leader", "from w2", "--data", R"({"k":[1,2]})"}, h_.as("w2"));
        h_.ok({"send", "w2", "read me"});
        h_.ok({"inbox", "--agent", "w2", "--mark-read"});
        h_.ok({"shell", "start", "--", "sleep", "1000"});
        h_.ok({"session", "exec", "s", "--", "cd /tmp"});
        h_.ok({"kill-agent", "w3", "--reason", "fuzz"});  // shutting_down, an open request
        refresh();
    }

    void spawn_worker(const std::string& name) { h_.spawn(name, {"sleep", "1000"}); }

    std::vector<std::string> query(const std::string& sql) const {
        std::vector<std::string> out;
        SQLite::Database db((h_.env.home() / "team.db").string(), SQLite::OPEN_READONLY);
        db.setBusyTimeout(20000);
        SQLite::Statement select(db, sql);
        while (select.executeStep()) {
            out.push_back(select.getColumn(0).isNull() ? "" : select.getColumn(0).getString());
        }
        return out;
    }

    // The pools of real names and ids, from the database.
    void refresh() {
        const std::string fz =
            "JOIN teams t ON t.id = x.team_id WHERE t.name = 'fz' AND "
            "t.status = 'active'";
        agents_ = query("SELECT x.name FROM agents x " + fz);
        if (agents_.empty()) agents_ = {"leader"};
        tasks_ = query("SELECT x.id FROM tasks x " + fz);
        messages_ = query("SELECT id FROM messages ORDER BY id DESC LIMIT 30");
        shells_ = query("SELECT id FROM shells ORDER BY rowid DESC LIMIT 30");
        requests_ = query("SELECT id FROM shutdown_requests ORDER BY id DESC LIMIT 10");
        sessions_ = query("SELECT name FROM sessions");
    }

    // Puts back what the calls used up: both teams, two live agents that wait (sleep 1000),
    // a pending and an in-progress task, a running shell and the session.
    void ensure_state() {
        auto count = [&](const std::string& sql) { return std::stoi(query(sql).at(0)); };
        auto team_live = [&](const std::string& name) {
            return count("SELECT count(*) FROM teams WHERE status = 'active' AND name = '" + name +
                         "'") > 0;
        };
        if (!team_live("fz")) h_.ok({"create", "fz", "--cwd", dir().string()});
        if (!team_live("fz2")) h_.ok({"create", "fz2", "--cwd", dir().string()});
        const std::string fz =
            " JOIN teams t ON t.id = x.team_id WHERE t.name = 'fz' AND "
            "t.status = 'active' AND ";
        auto live = query("SELECT x.name FROM agents x" + fz +
                          "x.status = 'active' AND x.is_leader = 0 AND x.command LIKE '%1000%'");
        for (size_t n = live.size(); n < 2; ++n) {
            std::string name;
            do {
                name = "w" + std::to_string(++spawned_);
            } while (count("SELECT count(*) FROM agents x" + fz + "x.name = '" + name +
                           "' AND x.status != 'terminated'") > 0);
            spawn_worker(name);
            live.push_back(name);
        }
        if (count("SELECT count(*) FROM tasks x" + fz + "x.status = 'pending'") == 0)
            h_.ok({"task", "add", "more work"});
        if (count("SELECT count(*) FROM tasks x" + fz + "x.status = 'in_progress'") == 0) {
            auto task = h_.ok({"task", "add", "claimed work"});
            h_.ok({"task", "claim", task["id"].get<std::string>()}, h_.as(live.front()));
        }
        if (count("SELECT count(*) FROM shells WHERE status = 'running'") == 0)
            h_.ok({"shell", "start", "--", "sleep", "1000"});
        if (count("SELECT count(*) FROM sessions WHERE name = 's'") == 0)
            h_.ok({"session", "exec", "s", "--", "cd /tmp"});
        refresh();
    }

    // Ends what the calls left running (shells of both homes, the servers), then proves that
    // nothing with the test's marker is left, and says what was seen.
    void wrap_up() {
        for (const fs::path& home : {h_.env.home(), home2_}) {
            if (!fs::exists(home / "team.db")) continue;
            SQLite::Database db((home / "team.db").string(), SQLite::OPEN_READONLY);
            SQLite::Statement running(db, "SELECT id FROM shells WHERE status = 'running'");
            std::vector<std::string> ids;
            while (running.executeStep()) ids.push_back(running.getColumn(0).getString());
            for (const auto& id : ids) {
                h_.run({"--home", home.string(), "shell", "kill", id, "--signal", "SIGKILL",
                        "--timeout", "1s"});
            }
            if (fs::exists(home / "tmux.sock")) {
                Child(Argv{"/usr/bin/tmux", "-S", (home / "tmux.sock").string(), "kill-server"},
                      clean_env())
                    .wait();
            }
        }
        h_.finish();
        report();
        std::size_t suppressed = 0;
        for (const auto& [key, n] : failures_) suppressed += n > 2 ? n - 2 : 0;
        if (suppressed > 0) {
            std::string kinds;
            for (const auto& [key, n] : failures_)
                kinds += "\n  " + std::to_string(n) + " x " + key;
            FAIL_CHECK(label_ << ": " << suppressed
                              << " more failures not shown; by kind:" << kinds);
        }
    }

    int calls() const { return calls_; }

  private:
    void report() const {
        const char* env = std::getenv("TEAM_FUZZ_REPORT");
        if (env == nullptr || *env == '\0') return;
        std::ostringstream r;
        r << "== " << label_ << ": " << calls_ << " calls, seed " << seed_ << "\n";
        for (const auto& [command, codes] : exits_) {
            r << "  " << command << ":";
            for (const auto& [code, n] : codes) r << " " << code << "x" << n;
            r << "\n";
        }
        r << "-- exit 1 messages:\n";
        for (const auto& [msg, n] : failed_messages_) r << "  " << n << " x " << msg << "\n";
        r << "-- exit 1 with a state change:\n";
        for (const auto& [command, n] : failed_with_change_)
            r << "  " << command << ": " << n << "\n";
        r << "-- state changes on an error that did not come again:\n";
        for (const auto& u : unrepeated_) r << "  " << u << "\n";
        std::fputs(r.str().c_str(), stderr);
    }

    std::string label_;
    std::uint32_t seed_;
    std::mt19937 rng_;
    AgentsHome h_;
    fs::path canary_, home2_, hostile_dir_;
    int canary_wait_ms_ = 0;  // a moment for what a call started to run, before the check
    Argv last_argv_;
    Argv hostile_, hostile_order_;
    size_t next_ = 0;
    std::vector<std::string> agents_, tasks_, messages_, shells_, requests_, sessions_;
    int spawned_ = 3;
    int calls_ = 0;
    std::map<std::string, std::map<int, int>> exits_;
    std::map<std::string, int> failed_messages_, failed_with_change_;
    std::vector<std::string> unrepeated_;
    std::map<std::string, std::size_t> failures_;
};

// ------------------------------------------------------------------------------------------------
// Knobs: the seed, the number of calls.

std::uint32_t base_seed() {
    static const std::uint32_t seed = [] {
        const char* env = std::getenv("TEAM_FUZZ_SEED");
        if (env != nullptr && *env != '\0') return static_cast<std::uint32_t>(std::stoul(env));
        return static_cast<std::uint32_t>(std::random_device{}());
    }();
    return seed;
}

// `plain` calls in the plain build, `sanitized` under AddressSanitizer, times TEAM_FUZZ_SCALE.
int scaled(int plain, int sanitized) {
    double scale = 1;
    if (const char* env = std::getenv("TEAM_FUZZ_SCALE"); env != nullptr && *env != '\0')
        scale = std::stod(env);
    return std::max(1, static_cast<int>((kSanitized ? sanitized : plain) * scale));
}

}  // namespace

TEST_CASE("fuzz: random argument vectors keep to SPEC 1.4", "[fuzz]") {
    std::uint32_t seed = base_seed();
    INFO("replay with TEAM_FUZZ_SEED=" << seed);
    FuzzHome f("random argvs", seed, 0);
    int n = scaled(1800, 150);
    for (int i = 0; i < n; ++i) f.check(f.random_call());
    f.wrap_up();
}

TEST_CASE("fuzz: hostile values in every option and argument of every command", "[fuzz]") {
    std::uint32_t seed = base_seed();
    INFO("replay with TEAM_FUZZ_SEED=" << seed);
    FuzzHome f("hostile values", seed, 1);
    // Each slot (an argument or an option of a command) gets the next values of the hostile
    // list in turn, so that every value reaches many slots (under AddressSanitizer, 4 slots
    // in 10 get one value each).
    int per_slot = scaled(6, 1);
    double slot_share = kSanitized ? 0.4 : 1;
    for (const auto& c : commands()) {
        bool runner = c.tail != Tail::none;
        // Slots: each positional, then each option.
        size_t slots = c.positionals.size() + c.options.size();
        for (size_t slot = 0; slot < slots; ++slot) {
            if (!f.chance(slot_share)) continue;
            for (int k = 0; k < per_slot; ++k) {
                Call call;
                call.command = c.path();
                call.runner = runner;
                std::vector<Argv> units, positionals;
                for (size_t p = 0; p < c.positionals.size(); ++p) {
                    const auto& pos = c.positionals[p];
                    if (p == slot) {
                        positionals.push_back({f.next_hostile(pos.kind, runner)});
                    } else if (pos.arity != Arity::optional || f.chance(0.7)) {
                        positionals.push_back({f.plausible(pos.kind)});
                    }
                }
                if (slot >= c.positionals.size()) {
                    const Option& o = c.options[slot - c.positionals.size()];
                    if (o.kind == Kind::flag) {
                        // A flag given a value: --flag=VALUE.
                        std::string v = f.next_hostile(Kind::text, runner);
                        units.push_back(f.chance(0.3) ? Argv{o.name} : Argv{o.name + "=" + v});
                    } else {
                        std::string v = f.next_hostile(o.kind, runner);
                        units.push_back(f.chance(0.15) ? Argv{o.name + "=" + v} : Argv{o.name, v});
                    }
                }
                if (f.chance(0.5)) units.push_back({"--json"});
                call.argv = f.assemble(c, units, positionals);
                if (!f.make_safe(call, c)) continue;
                f.check(call);
            }
        }
    }
    // Global options with hostile values, on a few commands of each kind.
    for (int k = 0; k < scaled(120, 10); ++k) {
        const Command& c = f.pick_command();
        Call call;
        call.command = c.path();
        call.runner = c.tail != Tail::none;
        std::vector<Argv> units{{"--json"}};
        std::string v = f.value(Kind::text, call.runner);
        units.push_back(f.pick(std::vector<Argv>{
            {"-t", v}, {"--team", v}, {"--as", v}, {"--as=" + v}, {"--team=" + v}}));
        std::vector<Argv> positionals;
        for (const auto& p : c.positionals) {
            if (p.arity != Arity::optional) positionals.push_back({f.plausible(p.kind)});
        }
        call.argv = f.assemble(c, units, positionals);
        if (f.make_safe(call, c)) f.check(call);
    }
    f.hostile_paths();
    // An empty value glued to its option (--opt=) is an empty value, as with getopt: the next
    // word stays a word of its own (here --json, which must then give JSON).
    const std::vector<Argv> glued{
        {"task", "add", "--description=", "--json", "subject"},
        {"task", "list", "--owner=", "--json"},
        {"inbox", "--type=", "--json"},
        {"shell", "list", "--agent=", "--json"},
        {"shutdown", "reject", "--reason=", "--json"},
        {"activity", "--type=", "--json"},
    };
    for (const auto& argv : glued) {
        Call call;
        call.argv = argv;
        call.command = argv[0] + " " + argv[1];
        f.check(call);
    }
    f.wrap_up();
}

TEST_CASE("fuzz: global options anywhere give the same result", "[fuzz]") {
    std::uint32_t seed = base_seed();
    INFO("replay with TEAM_FUZZ_SEED=" << seed);
    FuzzHome f("global options", seed, 2);
    // Read-only commands (as units: an option and its value stay together).
    const std::vector<std::vector<Argv>> reads{
        {{"list"}},
        {{"status"}},
        {{"agents"}, {"--all"}},
        {{"task"}, {"list"}},
        {{"task"}, {"list"}, {"--status", "pending"}},
        {{"task"}, {"show"}, {"1"}},
        {{"inbox"}},
        {{"inbox"}, {"--limit", "2"}},
        {{"activity"}, {"--limit", "5"}},
        {{"shell"}, {"list"}, {"--all"}},
        {{"session"}, {"list"}},
        {{"session"}, {"show"}, {"s"}},
        {{"shutdown"}, {"status"}},
        {{"logs"}, {"w1"}, {"-n", "3"}},
    };
    const std::vector<Argv> teams{{"-t", "fz"}, {"--team", "fz"}, {"--team=fz"}, {"-t", "fz2"}};
    const std::vector<Argv> callers{
        {"--as", "leader"}, {"--as", "w1"}, {"--as=w2@fz"}, {"--as", "w1@fz"}};
    int n = scaled(450, 40);
    for (int i = 0; i < n; ++i) {
        const auto& cmd = f.pick(reads);
        std::vector<Argv> globals{{"--json"}};
        if (f.chance(0.6)) globals.push_back(f.pick(teams));
        if (f.chance(0.5)) globals.push_back(f.pick(callers));
        if (f.chance(0.3)) globals.push_back({"--no-color"});
        Call base;
        base.command = "globals: " + cmd.front().front();
        for (const auto& g : globals) base.argv.insert(base.argv.end(), g.begin(), g.end());
        for (const auto& u : cmd) base.argv.insert(base.argv.end(), u.begin(), u.end());
        // The same units, the globals slipped in anywhere between the command's units.
        std::vector<Argv> units = cmd;
        for (const auto& g : globals) {
            units.insert(units.begin() + static_cast<long>(f.below(units.size() + 1)), g);
        }
        Call moved = base;
        moved.argv.clear();
        for (const auto& u : units) moved.argv.insert(moved.argv.end(), u.begin(), u.end());

        Outcome expected = f.run(base);
        Outcome got = f.check(moved);
        // What moves while an agent lives (its wall time, CPU, memory) aside.
        auto steady_out = [](Outcome& o) {
            auto doc = nlohmann::json::parse(o.out, nullptr, false);
            if (!doc.is_discarded()) o.out = team::test::steady(doc).dump();
        };
        steady_out(expected);
        steady_out(got);
        if (got.exit_code != expected.exit_code || got.out != expected.out) {
            // The state may have moved on between the two (an agent recorded ended): once more.
            expected = f.run(base);
            got = f.run(moved);
            steady_out(expected);
            steady_out(got);
        }
        INFO("seed " << seed << ", call #" << f.calls() << "\n  " << shown(base.argv) << " -> "
                     << expected.exit_code << ": " << excerpt(expected.out, 500) << "\n  "
                     << shown(moved.argv) << " -> " << got.exit_code << ": "
                     << excerpt(got.out, 500) << " " << excerpt(got.err, 300));
        CHECK(got.exit_code == expected.exit_code);
        CHECK(got.out == expected.out);
    }
    // Writes and commands that run one, with the globals moved around (checked as any call).
    const std::vector<std::vector<Argv>> writes{
        {{"task"}, {"add"}, {"placed"}, {"--description", "d"}},
        {{"send"}, {"w1"}, {"placed"}},
        {{"inbox"}, {"--unread"}, {"--mark-read"}},
        {{"run"}, {"--timeout", "5s"}},
        {{"session"}, {"exec"}, {"s"}},
        {{"shell"}, {"list"}},
    };
    for (int i = 0; i < scaled(60, 10); ++i) {
        const auto& cmd = f.pick(writes);
        std::vector<Argv> units = cmd;
        for (int g = 0; g < 3; ++g) {
            Argv global = f.pick(std::vector<Argv>{
                {"--json"}, {"-t", "fz"}, {"--as", "leader"}, {"--no-color"}, {"--json"}});
            units.insert(units.begin() + static_cast<long>(f.below(units.size() + 1)), global);
        }
        Call call;
        call.command = "globals: " + cmd.front().front();
        for (const auto& u : units) call.argv.insert(call.argv.end(), u.begin(), u.end());
        if (cmd.front().front() == "run") {
            call.runner = true;
            call.argv.insert(call.argv.end(), {"--", "true"});
        } else if (cmd.front().front() == "session") {
            call.runner = true;
            call.argv.insert(call.argv.end(), {"--", "cd /tmp"});
        }
        f.check(call);
    }
    f.wrap_up();
}
