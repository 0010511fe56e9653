// The mixed load (load_mix.hpp): the mix of operations, the processes that carry them out, and
// the check of the store against what each process reported.
//
// Setup fills the task list with SQL straight into the store (after `team create` has made it),
// the rows `team task add` writes, so that it takes milliseconds rather than thousands of
// processes (as bench/inbox.cpp does); `task-add` in the mix runs the real command.

#include "bench/load_mix.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <string_view>
#include <thread>

#include "state/store.hpp"

extern char** environ;

namespace team::load {

namespace {

using Json = nlohmann::json;

double now_ms() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// ---- The operations --------------------------------------------------------------------------

enum Op {
    kSend,
    kSendLeader,
    kSendExtra,
    kRead,
    kReadWait,
    kReadAgent,
    kReadLeader,
    kClaim,
    kClaimId,
    kTaskAdd,
    kSpawn,
    kKill,
    kStatus,
    kAgents,
    kDrain,
    kOps
};

struct OpInfo {
    const char* name;
    int weight;             // out of 100; 0: not picked at random
    std::set<int> allowed;  // exit codes SPEC 1.4 allows for it here
};

// Weights: mostly messages and claims, the commands agents run all day; spawns and kills,
// which take the team's lock and run one after the other, a few per second.
const OpInfo kInfo[kOps] = {
    {"send", 22, {0}},          {"send-leader", 8, {0}},
    {"send-extra", 3, {0, 4}},  // the agent may be being killed: refused, nothing stored
    {"read", 17, {0}},          {"read-wait", 4, {0, 124}},
    {"read-agent", 5, {0}},     {"read-leader", 6, {0}},
    {"claim", 14, {0, 3}},       // 3: nothing available
    {"claim-id", 7, {0, 3, 4}},  // 4: taken by someone else; 3: no such task
    {"task-add", 3, {0}},       {"spawn", 3, {0}},
    {"kill", 3, {0}},           {"status", 3, {0}},
    {"agents", 2, {0}},         {"drain", 0, {0}},
};

// ---- Processes -------------------------------------------------------------------------------

struct Outcome {
    int exit = -1;  // the exit status, 128+n when killed by signal n, -1 when it did not start
    bool signaled = false;
    std::string out, err;
    double ms = 0;
};

int dev_null() {
    static int fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    return fd;
}

// Runs `team --json ARGS` with the given environment, stdout and stderr captured.
Outcome run_team(const std::string& binary, const std::vector<std::string>& env,
                 const std::vector<std::string>& args) {
    std::vector<std::string> argv{binary, "--json"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargv, cenv;
    for (auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    for (auto& e : env) cenv.push_back(const_cast<char*>(e.c_str()));
    cenv.push_back(nullptr);

    Outcome o;
    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) != 0) return o;
    if (::pipe2(err, O_CLOEXEC) != 0) {
        ::close(out[0]);
        ::close(out[1]);
        return o;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, dev_null(), 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err[1], 2);
    double start = now_ms();
    pid_t pid = 0;
    int rc = posix_spawn(&pid, cargv[0], &actions, nullptr, cargv.data(), cenv.data());
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    ::close(err[1]);
    if (rc != 0) {
        ::close(out[0]);
        ::close(err[0]);
        o.err = std::string("cannot start team: ") + std::strerror(rc);
        return o;
    }
    pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    std::string* sinks[2] = {&o.out, &o.err};
    for (int open_fds = 2; open_fds > 0;) {
        if (::poll(fds, 2, -1) < 0 && errno != EINTR) break;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || fds[i].revents == 0) continue;
            char buf[16384];
            ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
            if (n > 0) {
                sinks[i]->append(buf, static_cast<size_t>(n));
            } else if (n == 0 || errno != EINTR) {
                ::close(fds[i].fd);
                fds[i].fd = -1;
                --open_fds;
            }
        }
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    o.ms = now_ms() - start;
    o.signaled = WIFSIGNALED(status);
    o.exit = o.signaled ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
    return o;
}

// The environment of every team process: ours without TEAM_* (and tmux's own), the home and
// the team, then `extra`.
std::vector<std::string> base_env(const LoadOptions& o) {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
        std::string_view v(*e);
        if (v.starts_with("TEAM_") || v.starts_with("TMUX=") || v.starts_with("TMUX_PANE="))
            continue;
        env.emplace_back(v);
    }
    env.push_back("TEAM_HOME=" + o.home);
    env.push_back("TEAM_NAME=" + o.team);
    if (!o.store.empty()) env.push_back("TEAM_STORE=" + o.store);
    env.insert(env.end(), o.extra_env.begin(), o.extra_env.end());
    return env;
}

bool mentions_lock(const std::string& s) {
    std::string lower(s);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return lower.find("database is locked") != std::string::npos ||
           lower.find("busy") != std::string::npos;
}

// Whether a process of that pid is alive (not a zombie) and runs `sleep`.
bool sleep_alive(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return false;
    auto close = line.rfind(')');
    if (close == std::string::npos || close + 2 >= line.size() || line[close + 2] == 'Z')
        return false;
    return line.find("(sleep)") != std::string::npos;
}

// ---- The record of the run -------------------------------------------------------------------

struct Sent {
    std::string text, from, to;
    std::int64_t id = 0;  // as the send reported it
    bool ok = false;      // exit 0 with its JSON
};

struct Got {  // a message a --mark-read reader got
    std::int64_t id;
    std::string text, type;
    bool marked;
};

// What one worker saw; merged at the end.
struct Log {
    std::vector<std::pair<int, Outcome>> runs;  // op, outcome (output dropped once looked at)
    std::vector<Sent> sends;
    std::vector<Got> got;
    std::vector<std::pair<std::int64_t, std::string>> claims;  // task, claimer
    std::vector<std::string> problems;
    int bad_outputs = 0, kill_survivors = 0;
};

// The short-lived agents: those alive for send-extra and kill, and what became of each.
struct Extras {
    std::mutex m;
    std::vector<std::pair<std::string, pid_t>> live;  // spawned, not (being) killed
    int starting = 0, next = 0;
    std::set<std::string> spawned, killed, failed;
};

class Mix {
  public:
    explicit Mix(const LoadOptions& o) : o_(o), env_(base_env(o)) {}

    Outcome run(const std::vector<std::string>& args, const std::string& as = "") const {
        if (as.empty() || as == "leader") return run_team(o_.team_binary, env_, args);
        auto env = env_;
        env.push_back("TEAM_AGENT_ID=" + as + "@" + o_.team);
        return run_team(o_.team_binary, env, args);
    }

    // Runs and requires exit 0 (setup).
    Json must(const std::vector<std::string>& args) const {
        Outcome r = run(args);
        Json doc = Json::parse(r.out, nullptr, false);
        if (r.exit != 0 || doc.is_discarded()) {
            std::string shown;
            for (const auto& a : args) shown += " " + a;
            throw std::runtime_error("load setup: team" + shown + " exited " +
                                     std::to_string(r.exit) + ": " + r.out + r.err);
        }
        return doc;
    }

    std::string agent(std::mt19937& rng) const {
        return "a" + std::to_string(std::uniform_int_distribution<int>(0, o_.agents - 1)(rng));
    }

    void worker(int w, Log& log, double deadline) {
        std::mt19937 rng(o_.seed * 7919u + static_cast<unsigned>(w));
        std::uniform_int_distribution<int> percent(0, 99);
        for (int k = 0; now_ms() < deadline; ++k) {
            int roll = percent(rng), op = 0;
            while (roll >= kInfo[op].weight) roll -= kInfo[op++].weight;
            one(static_cast<Op>(op), w, k, rng, log);
        }
    }

    void one(Op op, int w, int k, std::mt19937& rng, Log& log) {
        auto percent = [&] { return std::uniform_int_distribution<int>(0, 99)(rng); };
        std::string who;  // the caller: "" is the leader
        std::vector<std::string> args;
        Sent sent;
        std::string extra;
        pid_t extra_pid = 0;
        if (op == kSpawn || op == kKill || op == kSendExtra) {
            std::lock_guard<std::mutex> lock(extras_.m);
            int alive = static_cast<int>(extras_.live.size());
            if (op == kSpawn && alive + extras_.starting >= o_.max_extras) op = kKill;
            if (op == kKill && alive == 0) {
                op = alive + extras_.starting < o_.max_extras ? kSpawn : kStatus;
            }
            if (op == kSendExtra && alive == 0) op = kSend;
            if (op == kSpawn) {
                extra = "x" + std::to_string(extras_.next++);
                ++extras_.starting;
            } else if (op == kKill || op == kSendExtra) {
                auto i = std::uniform_int_distribution<int>(0, alive - 1)(rng);
                extra = extras_.live[i].first;
                extra_pid = extras_.live[i].second;
                if (op == kKill) extras_.live.erase(extras_.live.begin() + i);
            }
        }
        std::string text = "load s" + std::to_string(o_.seed) + " w" + std::to_string(w) + " #" +
                           std::to_string(k);
        switch (op) {
            case kSend: {
                int from = std::uniform_int_distribution<int>(-1, o_.agents - 1)(rng);
                who = from < 0 ? "" : "a" + std::to_string(from);
                do sent.to = agent(rng);
                while (sent.to == who);
                sent.from = who.empty() ? "leader" : who;
                args = {"send", sent.to, text};
                break;
            }
            case kSendLeader:
                who = sent.from = agent(rng);
                sent.to = "leader";
                args = {"send", "leader", text};
                break;
            case kSendExtra:
                sent = {text, "leader", extra};
                args = {"send", extra, text};
                break;
            case kRead:
            case kReadWait:
                who = agent(rng);
                args = {"inbox", "--unread", "--mark-read"};
                if (op == kReadWait) args.insert(args.end(), {"--wait", "200ms"});
                if (percent() < 30) args.insert(args.end(), {"--limit", "5"});
                break;
            case kReadAgent:
                args = {"inbox", "--agent", agent(rng), "--unread", "--mark-read"};
                break;
            case kReadLeader:
                args = {"inbox", "--unread", "--mark-read"};
                break;
            case kClaim:
                who = percent() < 10 ? "" : agent(rng);
                args = {"task", "claim"};
                break;
            case kClaimId: {
                who = agent(rng);
                auto id = front_.load() + std::uniform_int_distribution<int>(0, 7)(rng);
                args = {"task", "claim", std::to_string(id)};
                break;
            }
            case kTaskAdd:
                args = {"task", "add", "load task " + text};
                break;
            case kSpawn:
                args = {"spawn", extra};
                for (const auto& e : o_.extra_env) args.insert(args.end(), {"--env", e});
                args.insert(args.end(), {"--", "sleep", "1000"});
                break;
            case kKill:
                args = {"kill-agent", extra, "--force", "--reason", "load"};
                break;
            case kStatus:
                args = {"status"};
                break;
            default:
                args = {"agents"};
                break;
        }
        if (!sent.to.empty()) sent.text = text;
        Outcome r = run(args, who);
        look_at(op, who, r, log);
        if (op == kSend || op == kSendLeader || op == kSendExtra) {
            Json doc = Json::parse(r.out, nullptr, false);
            sent.ok = r.exit == 0 && doc.is_object() && doc.value("text", "") == text &&
                      doc.value("to", "") == sent.to && doc.value("from", "") == sent.from &&
                      doc["id"].is_number_integer();
            if (sent.ok) sent.id = doc["id"].get<std::int64_t>();
            if (r.exit == 0 && !sent.ok) {
                ++log.bad_outputs;
                note(log, "send " + text + " exited 0 but printed " + r.out.substr(0, 300));
            }
            log.sends.push_back(sent);
        } else if (op == kRead || op == kReadWait || op == kReadAgent || op == kReadLeader) {
            got(r, log);
        } else if ((op == kClaim || op == kClaimId) && r.exit == 0) {
            Json doc = Json::parse(r.out, nullptr, false);
            std::string owner = who.empty() ? "leader" : who;
            if (!doc.is_object() || !doc["id"].is_string() || doc["owner"] != owner ||
                doc["status"] != "in_progress") {
                ++log.bad_outputs;
                note(log, "claim by " + owner + " printed " + r.out.substr(0, 300));
            } else {
                auto id = std::stoll(doc["id"].get<std::string>());
                log.claims.emplace_back(id, owner);
                auto seen = front_.load();
                while (id > seen && !front_.compare_exchange_weak(seen, id)) {
                }
            }
        } else if (op == kSpawn) {
            Json doc = Json::parse(r.out, nullptr, false);
            std::lock_guard<std::mutex> lock(extras_.m);
            --extras_.starting;
            if (r.exit == 0 && doc.is_object() && doc["pid"].is_number_integer()) {
                extras_.live.emplace_back(extra, doc["pid"].get<pid_t>());
                extras_.spawned.insert(extra);
            } else {
                extras_.failed.insert(extra);
                if (r.exit == 0) ++log.bad_outputs;
            }
        } else if (op == kKill && r.exit == 0) {
            std::lock_guard<std::mutex> lock(extras_.m);
            extras_.killed.insert(extra);
            if (sleep_alive(extra_pid)) {
                ++log.kill_survivors;
                note(log, "agent " + extra + " was force-killed but its process " +
                              std::to_string(extra_pid) + " is alive");
            }
        }
        r.out.clear();
        r.err.clear();
        log.runs.emplace_back(op, std::move(r));
    }

    // The messages a --mark-read reader printed.
    void got(const Outcome& r, Log& log) {
        Json doc = Json::parse(r.out, nullptr, false);
        if (!doc.is_array()) {
            if (r.exit == 0 || r.exit == 124) {
                ++log.bad_outputs;
                note(log,
                     "a reader exited " + std::to_string(r.exit) + " with " + r.out.substr(0, 300));
            }
            return;
        }
        for (const auto& m : doc) {
            if (!m.is_object() || !m["id"].is_number_integer() || !m["text"].is_string()) {
                ++log.bad_outputs;
                continue;
            }
            log.got.push_back({m["id"].get<std::int64_t>(), m["text"].get<std::string>(),
                               m.value("type", ""), m["readAt"].is_string()});
        }
    }

    // What every process is checked for: its exit code, a signal, a lock error, the shape of an
    // error.
    void look_at(Op op, const std::string& who, const Outcome& r, Log& log) {
        std::string what = std::string(kInfo[op].name) + (who.empty() ? "" : " as " + who);
        if (r.exit < 0) {
            note(log, what + ": " + r.err);
        } else if (!kInfo[op].allowed.count(r.exit)) {
            note(log, what + " exited " + std::to_string(r.exit) + ": " + r.out.substr(0, 300) +
                          r.err.substr(0, 300));
        }
        if (mentions_lock(r.out) || mentions_lock(r.err)) {
            ++locked_;
            note(log, what + " mentioned a lock: " + r.out.substr(0, 300) + r.err.substr(0, 300));
        }
        if (r.exit > 0 && r.exit != 124 && !r.signaled) {
            static const std::map<int, std::string> codes{
                {1, "failed"}, {2, "usage"}, {3, "not_found"}, {4, "refused"}};
            Json doc = Json::parse(r.out, nullptr, false);
            auto code = codes.find(r.exit);
            if (!doc.is_object() || doc["success"] != false || !doc["error"].is_string() ||
                code == codes.end() || doc["code"] != code->second) {
                ++log.bad_outputs;
                note(log, what + " exited " + std::to_string(r.exit) +
                              " without the JSON error of SPEC 1.4: " + r.out.substr(0, 300));
            }
        }
    }

    static void note(Log& log, std::string what) {
        while (!what.empty() && std::isspace(static_cast<unsigned char>(what.back())))
            what.pop_back();
        if (log.problems.size() < 20) log.problems.push_back(std::move(what));
    }

    Extras& extras() { return extras_; }
    int locked() const { return locked_; }

  private:
    const LoadOptions& o_;
    std::vector<std::string> env_;
    Extras extras_;
    std::atomic<std::int64_t> front_{1};  // the highest task id claimed so far
    std::atomic<int> locked_{0};
};

// ---- Setup and the store ---------------------------------------------------------------------

// The home's store (SQLite's team.db, or the PostgreSQL store the options name), through
// team's own store: the setup's rows and the check's reads in the dialect both engines speak.
class Db {
  public:
    explicit Db(const LoadOptions& o) : store_(o.home, o.store) {}

    bool postgresql() const { return store_.engine() == team::Db::Engine::postgresql; }
    // One write transaction (the store's writers take turns).
    void write(const std::string& sql) {
        store_.write([&] { store_.db().exec(sql); });
    }
    void exec(const std::string& sql) { store_.db().exec(sql); }

    // Every row of a query, each column as text ("" for NULL).
    std::vector<std::vector<std::string>> rows(const std::string& sql) {
        team::Statement st(store_.db(), sql);
        std::vector<std::vector<std::string>> out;
        while (st.executeStep()) {
            std::vector<std::string> row;
            for (int i = 0; i < st.getColumnCount(); ++i) {
                row.push_back(st.getColumn(i).isNull() ? "" : st.getColumn(i).getString());
            }
            out.push_back(std::move(row));
        }
        return out;
    }

  private:
    team::Store store_;
};

std::string quoted(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
    return out + "'";
}

void setup(const LoadOptions& o, const Mix& mix) {
    ::mkdir(o.home.c_str(), 0700);
    mix.must({"create", o.team, "--cwd", o.home});
    for (int i = 0; i < o.agents; ++i) {
        std::vector<std::string> args{"spawn", "a" + std::to_string(i)};
        for (const auto& e : o.extra_env) args.insert(args.end(), {"--env", e});
        args.insert(args.end(), {"--", "sleep", "1000"});
        mix.must(args);
    }
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    std::string now = std::to_string(std::int64_t{ts.tv_sec} * 1000 + ts.tv_nsec / 1'000'000);
    Db db(o);
    db.write("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < " +
             std::to_string(o.tasks) +
             ") INSERT INTO tasks (team_id, id, subject, status, created_at, updated_at) "
             "SELECT t.id, i, 'load task ' || i, 'pending', " +
             now + ", " + now + " FROM n, teams t WHERE t.name = " + quoted(o.team) +
             " AND t.status = 'active'");
    if (!db.postgresql()) db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    auto status = mix.must({"status"});
    if (status["tasks"]["pending"] != o.tasks || status["liveAgents"] != o.agents)
        throw std::runtime_error("load setup: the team is not as set up: " + status.dump());
}

// Sorted samples' nearest-rank percentile (p in 0..100).
double percentile(const std::vector<double>& sorted, double p) {
    if (sorted.empty()) return 0;
    auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
    return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

void summarize(OpStats& s, std::vector<double> ms) {
    std::sort(ms.begin(), ms.end());
    s.p50_ms = percentile(ms, 50);
    s.p99_ms = percentile(ms, 99);
    s.max_ms = ms.empty() ? 0 : ms.back();
}

// Compares the store with what the processes reported (see load_mix.hpp).
void check(const LoadOptions& o, Mix& mix, const std::vector<Log>& logs, LoadReport& rep) {
    auto problem = [&](const std::string& what) {
        if (rep.problems.size() < 60) rep.problems.push_back(what);
    };
    Db db(o);
    std::string team =
        "(SELECT id FROM teams WHERE name = " + quoted(o.team) + " AND status = 'active')";

    // Messages: each reported send stored once; none stored that no send reported.
    std::map<std::string, std::vector<std::vector<std::string>>> by_text;
    std::map<std::int64_t, std::vector<std::string>> by_id;
    for (auto& row : db.rows("SELECT m.id, m.sender, m.recipient, m.text, m.read_at, a.name "
                             "FROM messages m JOIN agents a ON a.id = m.recipient_id "
                             "WHERE m.type = 'message' AND m.team_id = " +
                             team)) {
        by_id[std::stoll(row[0])] = row;
        by_text[row[3]].push_back(row);
    }
    rep.stored = static_cast<int>(by_id.size());
    std::set<std::string> tried;
    for (const auto& log : logs) {
        for (const auto& s : log.sends) {
            tried.insert(s.text);
            auto it = by_text.find(s.text);
            size_t n = it == by_text.end() ? 0 : it->second.size();
            if (!s.ok) {
                if (n > 0)
                    ++rep.stored_after_failure, problem("a failed send was stored: " + s.text);
                continue;
            }
            ++rep.sent;
            if (n == 0)
                ++rep.lost, problem("lost: " + s.text + " (id " + std::to_string(s.id) + ")");
            if (n > 1) ++rep.duplicated, problem("stored twice: " + s.text);
            if (n == 1 && (it->second[0][0] != std::to_string(s.id) || it->second[0][1] != s.from ||
                           it->second[0][2] != s.to)) {
                ++rep.duplicated;
                problem("stored otherwise than reported: " + s.text);
            }
        }
    }
    for (const auto& [text, rows] : by_text) {
        if (!tried.count(text)) ++rep.unexpected, problem("stored, never sent: " + text);
    }

    // Reads: each message to exactly one reader, marked read; every drained inbox empty.
    std::map<std::int64_t, int> times;
    for (const auto& log : logs) {
        for (const auto& g : log.got) {
            if (g.type != "message") continue;
            ++rep.read;
            ++times[g.id];
            if (!g.marked) ++rep.read_unmarked, problem("returned unmarked: " + g.text);
            auto it = by_id.find(g.id);
            if (it == by_id.end() || it->second[3] != g.text)
                ++rep.unexpected, problem("a reader got what was not stored: " + g.text);
        }
    }
    for (const auto& [id, n] : times) {
        if (n > 1)
            ++rep.read_twice,
                problem(std::to_string(n) + " readers got message " + std::to_string(id));
    }
    std::set<std::string> drained{"leader"};
    for (int i = 0; i < o.agents; ++i) drained.insert("a" + std::to_string(i));
    for (const auto& [id, row] : by_id) {
        if (!drained.count(row[5]) || times.count(id)) continue;
        ++rep.never_read;
        problem("no reader got message " + std::to_string(id) + " (" + row[3] + ")" +
                (row[4].empty() ? ", unread" : ", marked read"));
    }

    // Claims: no task twice; each owned by its claimer; none in progress that no claim reported.
    std::map<std::int64_t, std::vector<std::string>> claimed;
    for (const auto& log : logs)
        for (const auto& [task, by] : log.claims) claimed[task].push_back(by);
    rep.claims = 0;
    std::set<std::int64_t> doubled;
    for (const auto& [task, by] : claimed) {
        rep.claims += static_cast<int>(by.size());
        if (by.size() > 1) doubled.insert(task);
    }
    std::string task_id =
        db.postgresql() ? "details::json->>'taskId'" : "json_extract(details, '$.taskId')";
    for (auto& row : db.rows("SELECT " + task_id +
                             " FROM activity WHERE type = 'task_claimed' AND team_id = " + team +
                             " GROUP BY 1 HAVING count(*) > 1")) {
        doubled.insert(std::stoll(row[0]));
    }
    for (auto t : doubled) problem("task " + std::to_string(t) + " was claimed twice");
    rep.double_claims = static_cast<int>(doubled.size());
    for (auto& row :
         db.rows("SELECT id, status, coalesce(owner, '') FROM tasks WHERE team_id = " + team)) {
        auto it = claimed.find(std::stoll(row[0]));
        if (it != claimed.end() && (row[1] != "in_progress" || row[2] != it->second[0])) {
            ++rep.wrong_owner;
            problem("task " + row[0] + " claimed by " + it->second[0] + " is " + row[1] +
                    " owned by '" + row[2] + "'");
        } else if (it == claimed.end() && row[1] != "pending") {
            ++rep.phantom_claims;
            problem("task " + row[0] + " is " + row[1] + " (" + row[2] + ") but no claim said so");
        }
    }

    // The short-lived agents: killed ones terminated by force, the others active, failed
    // spawns without a record.
    auto& x = mix.extras();
    rep.spawned = static_cast<int>(x.spawned.size());
    rep.killed = static_cast<int>(x.killed.size());
    std::map<std::string, std::vector<std::string>> record;
    for (auto& row : db.rows("SELECT name, status, coalesce(exit_reason, ''), "
                             "'exit ' || coalesce(CAST(exit_code AS TEXT), '-') || ' signal ' || "
                             "coalesce(CAST(signal AS TEXT), '-') || ' made ' || "
                             "CAST(created_at AS TEXT) || ' ended ' || "
                             "coalesce(CAST(terminated_at AS TEXT), '-') FROM agents WHERE "
                             "name LIKE 'x%' AND team_id = " +
                             team)) {
        if (record.count(row[0])) ++rep.extras_wrong_state, problem("two records of " + row[0]);
        record[row[0]] = row;
    }
    for (const auto& [name, row] : record) {
        bool killed = x.killed.count(name) > 0, spawned = x.spawned.count(name) > 0;
        // A spawn that failed must have left no record at all.
        bool right = killed    ? row[1] == "terminated" && row[2] == "force_killed"
                     : spawned ? row[1] == "active"
                               : false;
        if (!right) {
            ++rep.extras_wrong_state;
            std::string was = killed                 ? "force-killed"
                              : spawned              ? "spawned"
                              : x.failed.count(name) ? "whose spawn failed"
                                                     : "never spawned";
            std::string history;
            for (auto& a : db.rows("SELECT CAST(at AS TEXT) || ' ' || actor || ' ' || type || "
                                   "' ' || coalesce(details, '') FROM activity WHERE details "
                                   "LIKE '%\"" +
                                   name + "@%' ORDER BY id")) {
                history += "\n    " + a[0];
            }
            problem("agent " + name + " (" + was + ") is " + row[1] + " " + row[2] + " (" + row[3] +
                    ")" + history);
        }
    }
    for (const auto& name : x.spawned) {
        if (!record.count(name)) ++rep.extras_wrong_state, problem("no record of " + name);
    }
}

}  // namespace

LoadReport run_load(const LoadOptions& o) {
    Mix mix(o);
    setup(o, mix);

    std::vector<Log> logs(static_cast<size_t>(o.workers) + 1);
    double start = now_ms();
    double deadline = start + o.seconds * 1000;
    std::vector<std::thread> threads;
    for (int w = 0; w < o.workers; ++w)
        threads.emplace_back([&, w] { mix.worker(w, logs[w], deadline); });
    for (auto& t : threads) t.join();

    LoadReport rep;
    rep.seconds = (now_ms() - start) / 1000;
    rep.workers = o.workers;

    // The drain: every long-lived inbox and the leader's, read to the end once more.
    auto& drain = logs.back();
    std::mt19937 rng(o.seed);
    for (int i = -1; i < o.agents; ++i) {
        std::string who = i < 0 ? "" : "a" + std::to_string(i);
        Outcome r = mix.run({"inbox", "--unread", "--mark-read"}, who);
        mix.look_at(kDrain, who, r, drain);
        mix.got(r, drain);
        r.out.clear();
        r.err.clear();
        drain.runs.emplace_back(kDrain, std::move(r));
    }

    std::map<int, std::vector<double>> ms;
    std::vector<double> all;
    for (const auto& log : logs) {
        for (const auto& [op, r] : log.runs) {
            auto& s = rep.ops[kInfo[op].name];
            ++s.count;
            ++s.exits[r.exit];
            if (r.signaled) ++rep.signaled;
            if (!kInfo[op].allowed.count(r.exit)) ++rep.bad_exits;
            ms[op].push_back(r.ms);
            if (op == kDrain) continue;
            all.push_back(r.ms);
            ++rep.all.count;
            ++rep.all.exits[r.exit];
            if (r.exit != 0) ++rep.errors_by_exit[r.exit];
        }
        rep.bad_outputs += log.bad_outputs;
        rep.kill_survivors += log.kill_survivors;
        for (const auto& p : log.problems)
            if (rep.problems.size() < 60) rep.problems.push_back(p);
    }
    for (auto& [op, v] : ms) summarize(rep.ops[kInfo[op].name], v);
    summarize(rep.all, all);
    rep.locked = mix.locked();
    check(o, mix, logs, rep);
    return rep;
}

bool LoadReport::ok() const {
    return lost == 0 && duplicated == 0 && unexpected == 0 && stored_after_failure == 0 &&
           read_twice == 0 && never_read == 0 && read_unmarked == 0 && double_claims == 0 &&
           wrong_owner == 0 && phantom_claims == 0 && kill_survivors == 0 &&
           extras_wrong_state == 0 && locked == 0 && signaled == 0 && bad_exits == 0 &&
           bad_outputs == 0;
}

namespace {

Json stats_json(const OpStats& s) {
    Json exits = Json::object();
    for (const auto& [code, n] : s.exits) exits[std::to_string(code)] = n;
    auto ms = [](double v) { return std::round(v * 100) / 100; };
    return {{"count", s.count},
            {"exits", exits},
            {"p50_ms", ms(s.p50_ms)},
            {"p99_ms", ms(s.p99_ms)},
            {"max_ms", ms(s.max_ms)}};
}

}  // namespace

Json LoadReport::to_json() const {
    Json ops_doc = Json::object();
    for (const auto& [name, s] : ops) ops_doc[name] = stats_json(s);
    Json errors = Json::object();
    for (const auto& [code, n] : errors_by_exit) errors[std::to_string(code)] = n;
    return {{"ok", ok()},
            {"seconds", std::round(seconds * 100) / 100},
            {"workers", workers},
            {"ops", ops_doc},
            {"all", stats_json(all)},
            {"errors_by_exit", errors},
            {"messages",
             {{"sent", sent},
              {"stored", stored},
              {"lost", lost},
              {"duplicated", duplicated},
              {"unexpected", unexpected},
              {"stored_after_failure", stored_after_failure},
              {"read", read},
              {"read_twice", read_twice},
              {"never_read", never_read},
              {"read_unmarked", read_unmarked}}},
            {"tasks",
             {{"claims", claims},
              {"double_claims", double_claims},
              {"wrong_owner", wrong_owner},
              {"phantom_claims", phantom_claims}}},
            {"agents",
             {{"spawned", spawned},
              {"killed", killed},
              {"kill_survivors", kill_survivors},
              {"wrong_state", extras_wrong_state}}},
            {"processes",
             {{"locked", locked},
              {"signaled", signaled},
              {"bad_exits", bad_exits},
              {"bad_outputs", bad_outputs}}},
            {"problems", problems}};
}

std::string LoadReport::table() const {
    std::string out;
    char line[256];
    auto row = [&](const std::string& name, const OpStats& s) {
        std::string exits;
        for (const auto& [code, n] : s.exits)
            exits += (exits.empty() ? "" : " ") + std::to_string(code) + ":" + std::to_string(n);
        std::snprintf(line, sizeof line, "%-12s %7d %9.1f %9.1f %9.1f  %s\n", name.c_str(), s.count,
                      s.p50_ms, s.p99_ms, s.max_ms, exits.c_str());
        out += line;
    };
    std::snprintf(line, sizeof line, "%d workers for %.1f s\n%-12s %7s %9s %9s %9s  %s\n", workers,
                  seconds, "operation", "count", "p50 ms", "p99 ms", "max ms", "exit:count");
    out += line;
    for (const auto& [name, s] : ops) row(name, s);
    row("all", all);
    std::snprintf(line, sizeof line,
                  "messages: %d sent, %d stored, %d lost, %d duplicated, %d unexpected, "
                  "%d stored after a failed send; %d read, %d twice, %d never, %d unmarked\n",
                  sent, stored, lost, duplicated, unexpected, stored_after_failure, read,
                  read_twice, never_read, read_unmarked);
    out += line;
    std::snprintf(line, sizeof line,
                  "tasks: %d claims, %d double, %d wrong owner, %d phantom; agents: %d spawned, "
                  "%d killed, %d survivors, %d in a wrong state\n",
                  claims, double_claims, wrong_owner, phantom_claims, spawned, killed,
                  kill_survivors, extras_wrong_state);
    out += line;
    std::snprintf(line, sizeof line,
                  "processes: %d lock errors, %d signaled, %d bad exits, %d bad outputs\n", locked,
                  signaled, bad_exits, bad_outputs);
    out += line;
    for (const auto& p : problems) out += "problem: " + p + "\n";
    return out;
}

}  // namespace team::load
