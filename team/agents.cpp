#include "team/agents.hpp"

#include <SQLiteCpp/SQLiteCpp.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "base/error.hpp"
#include "base/names.hpp"
#include "proc/pidfd.hpp"
#include "proc/signals.hpp"
#include "proc/supervisor.hpp"
#include "proc/terminate.hpp"
#include "state/activity.hpp"
#include "state/change_watch.hpp"
#include "state/sql.hpp"
#include "state/team_lock.hpp"
#include "tasks/reassign.hpp"
#include "team/agent_end.hpp"

namespace team {

namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;

namespace {

// How long spawn waits for the pane's supervisor to confirm the command runs.
constexpr auto kSpawnTimeout = std::chrono::seconds(10);
// How long a look waits for a supervisor that is recording its agent's end (it gives the
// agent's leftovers one second after SIGTERM).
constexpr auto kRecordWait = std::chrono::seconds(3);
// A `spawning` record made before schema 7 (which does not say who is making it), with no
// supervisor, is lost this long after its creation.
constexpr EpochMs kStaleSpawnMs = 30'000;

std::string self_exe() {
    std::error_code ec;
    auto path = fs::read_symlink("/proc/self/exe", ec);
    if (ec) throw failed("cannot find the team binary: " + ec.message());
    return path.string();
}

// Whether an agent that has no supervisor yet is still being made: the `team spawn` that made
// its record lives (a record from before schema 7 does not name it: then for kStaleSpawnMs).
bool spawn_under_way(const AgentRecord& agent, EpochMs now) {
    if (agent.spawner_pid)
        return proc::Pidfd::live(agent.spawner_pid, agent.spawner_start).has_value();
    return now - agent.created_at < kStaleSpawnMs;
}

std::string env_value(const std::vector<std::string>& env, const std::string& key) {
    std::string value;
    for (const auto& kv : env) {
        if (kv.compare(0, key.size() + 1, key + "=") == 0) value = kv.substr(key.size() + 1);
    }
    return value;
}

void delete_agent(Store& store, std::int64_t id) {
    store.write([&] {
        SQLite::Statement del(store.db(), "DELETE FROM agents WHERE id = ?");
        del.bind(1, id);
        del.exec();
    });
}

}  // namespace

const std::vector<std::string>& color_pool() {
    static const std::vector<std::string> pool{"blue", "green",  "yellow", "magenta", "cyan",
                                               "red",  "orange", "purple", "pink",    "teal"};
    return pool;
}

fs::path Agents::log_path(const TeamRecord& team, const AgentRecord& agent) const {
    return store_.home() / "logs" / team.name /
           (agent.name + "-" + std::to_string(agent.id) + ".log");
}

AgentRecord Agents::spawn(const TeamRecord& team, const Caller& caller,
                          const SpawnRequest& request) {
    require_leader(caller, "spawn agents");
    check_name(request.name, "agent name");
    if (request.argv.empty())
        throw usage_error("no command given: team spawn NAME -- CMD [ARGS...]");
    if (request.role.size() > 1024) throw usage_error("the role is longer than 1024 bytes");
    for (const auto& kv : request.env) {
        if (!is_env_entry(kv)) throw usage_error("invalid --env " + quote(kv) + ": use KEY=VALUE");
        std::string key = kv.substr(0, kv.find('='));
        for (const char* own :
             {"TEAM_HOME", "TEAM_NAME", "TEAM_AGENT_ID", "TEAM_AGENT_NAME", "TEAM_AGENT_COLOR"}) {
            if (key == own)
                throw usage_error("--env cannot set " + key +
                                  ": team sets it to the agent's own identity");
        }
    }
    const auto& pool = color_pool();
    if (request.color && std::find(pool.begin(), pool.end(), *request.color) == pool.end()) {
        std::string names;
        for (const auto& c : pool) names += (names.empty() ? "" : ", ") + c;
        throw usage_error("unknown colour " + quote(*request.color) +
                          did_you_mean(*request.color, pool) + " (one of " + names + ")");
    }
    std::string cwd = request.cwd.value_or(team.cwd);
    struct stat st {};
    if (::stat(cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        throw usage_error("--cwd " + quote(cwd) + " is not an existing directory");
    }
    cwd = fs::canonical(cwd).string();
    std::string path = env_value(request.env, "PATH");
    if (path.empty() && std::getenv("PATH")) path = std::getenv("PATH");
    proc::require_program(request.argv[0], path, cwd);

    TeamLock lock(store_.home(), team.name);
    reconcile(team);  // a dead agent's name and colour are free again
    EpochMs now = clock_.now();
    AgentRecord agent;
    agent.name = request.name;
    agent.team = team.name;
    agent.team_id = team.id;
    agent.role = request.role;
    agent.command = request.argv;
    agent.cwd = cwd;
    agent.env = request.env;
    agent.created_at = now;
    agent.status = AgentStatus::spawning;
    store_.write([&] {
        auto& db = store_.db();
        SQLite::Statement live_team(db, "SELECT 1 FROM teams WHERE id = ? AND status = 'active'");
        live_team.bind(1, team.id);
        if (!live_team.executeStep()) throw refused("team " + quote(team.name) + " is dissolved");
        SQLite::Statement exists(
            db, "SELECT 1 FROM agents WHERE team_id = ? AND name = ? AND status <> 'terminated'");
        exists.bind(1, team.id);
        exists.bind(2, request.name);
        if (exists.executeStep()) {
            throw refused("agent " + quote(request.name) + " already exists in team " +
                          quote(team.name));
        }
        std::vector<std::string> used;
        SQLite::Statement colors(db,
                                 "SELECT color FROM agents WHERE team_id = ? AND status <> "
                                 "'terminated' AND color IS NOT NULL");
        colors.bind(1, team.id);
        while (colors.executeStep()) used.push_back(colors.getColumn(0).getString());
        if (request.color) {
            agent.color = *request.color;
        } else {
            for (const auto& c : pool) {
                if (std::find(used.begin(), used.end(), c) == used.end()) {
                    agent.color = c;
                    break;
                }
            }
            if (!agent.color) agent.color = pool[used.size() % pool.size()];  // all taken: share
        }
        // The record says who is making it, so that a look can tell at once whether a
        // `spawning` agent is still being made or its maker is gone (reconcile).
        SQLite::Statement insert(db, R"sql(
            INSERT INTO agents (team_id, name, role, status, color, command, cwd, env, created_at,
                                spawner_pid, spawner_start)
            VALUES (?, ?, ?, 'spawning', ?, ?, ?, ?, ?, ?, ?)
        )sql");
        insert.bind(1, team.id);
        insert.bind(2, agent.name);
        insert.bind(3, agent.role);
        insert.bind(4, *agent.color);
        insert.bind(5, agent.command.dump());
        insert.bind(6, cwd);
        insert.bind(7, nlohmann::json(agent.env).dump());
        insert.bind(8, now);
        insert.bind(9, static_cast<std::int64_t>(::getpid()));
        insert.bind(10, static_cast<std::int64_t>(proc::start_time_of(::getpid()).value_or(0)));
        insert.exec();
        agent.id = db.getLastInsertRowid();
        agent.log_file = log_path(team, agent).string();
        SQLite::Statement log(db, "UPDATE agents SET log_file = ? WHERE id = ?");
        log.bind(1, *agent.log_file);
        log.bind(2, agent.id);
        log.exec();
    });
    fs::create_directories(fs::path(*agent.log_file).parent_path());
    // Made here, private (SPEC 2): the pipe-pane that appends to it runs in the tmux server,
    // which has the user's umask (base/umask.hpp).
    int log_fd = ::open(agent.log_file->c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (log_fd >= 0) ::close(log_fd);

    tmux::TmuxServer server(tmux_);
    std::optional<tmux::PaneInfo> pane;
    try {
        ChangeWatch watch(store_.home());  // before the pane starts, so its update is seen
        pane = server.open_pane(
            team.name,
            {self_exe(), "__agent", "--home", store_.home().string(), std::to_string(agent.id)},
            cwd, agent.name, *agent.log_file);
        auto supervisor = proc::Pidfd::open(pane->pid, 0);
        auto deadline = SteadyClock::now() + kSpawnTimeout;
        for (;;) {
            auto now_record = load_agent(store_, agent.id);
            if (!now_record) throw failed("the agent's record vanished while it was starting");
            if (now_record->spawn_error) throw failed(*now_record->spawn_error);
            if (now_record->status == AgentStatus::active) {
                agent = *now_record;
                break;
            }
            if (now_record->status == AgentStatus::terminated) {
                // It started and ended at once: it ran, so it is an agent that exited.
                agent = *now_record;
                break;
            }
            std::vector<int> others;
            if (supervisor && !supervisor->exited()) others.push_back(supervisor->fd());
            if (supervisor && supervisor->exited()) {
                auto last = load_agent(store_, agent.id);
                if (last && (last->status != AgentStatus::spawning || last->spawn_error)) continue;
                throw failed("the agent's pane closed before its command started");
            }
            if (!watch.wait_until(deadline, others) && SteadyClock::now() >= deadline) {
                throw failed("the agent did not start within " +
                             std::to_string(kSpawnTimeout.count()) + "s");
            }
        }
    } catch (...) {
        if (pane) server.kill_pane(pane->id);
        delete_agent(store_, agent.id);
        throw;
    }
    store_.write([&] {
        append_activity(store_.db(), team.id, clock_.now(), caller.id(), "agent_spawned",
                        {{"agentId", agent.id_string()},
                         {"paneId", agent.pane_id ? nlohmann::json(*agent.pane_id) : nullptr},
                         {"pid", agent.pid ? nlohmann::json(*agent.pid) : nullptr},
                         {"command", agent.command},
                         {"color", *agent.color}});
    });
    return agent;
}

int Agents::supervise(Store& store, std::int64_t agent_id) {
    SystemClock clock;
    const char* pane = std::getenv("TMUX_PANE");
    std::string pane_id = pane ? pane : "";
    tmux::TmuxClient client(tmux::TmuxServer::socket_args(store.home()),
                            tmux::TmuxServer::ensure_config(store.home()));
    tmux::TmuxServer server(client);
    // Leaving without a command to supervise: the pane goes too (remain-on-exit would keep it,
    // and its spawn may be gone, so no one else would remove it).
    auto leave = [&] {
        if (!pane_id.empty()) server.kill_pane(pane_id);
        return 1;
    };
    auto agent = load_agent(store, agent_id);
    if (!agent || agent->status != AgentStatus::spawning) return leave();

    proc::Supervisor supervisor;
    proc::LaunchSpec spec;
    spec.argv = agent->command.get<std::vector<std::string>>();
    spec.cwd = agent->cwd.value_or("/");
    spec.capture_output = false;
    spec.null_stdin = false;
    spec.foreground_tty = true;
    // --env, then the agent's identity, which --env cannot change; TEAM_* variables of whoever
    // started the tmux server do not leak in.
    std::vector<std::string> overrides = agent->env;
    overrides.insert(overrides.end(),
                     {"TEAM_HOME=" + store.home().string(), "TEAM_NAME=" + agent->team,
                      "TEAM_AGENT_ID=" + agent->id_string(), "TEAM_AGENT_NAME=" + agent->name,
                      "TEAM_AGENT_COLOR=" + agent->color.value_or("")});
    spec.env = proc::merged_environment(overrides, {"TEAM_"});
    // A confirmed shutdown or a --force-after deadline: this supervisor ends the agent's tree
    // (woken by SIGUSR1 from whoever changed its requests, or by the deadline coming due). Woken,
    // it waits for the write that woke it to end: the signal is sent inside the write, just
    // before the commit, so that a command killed in between leaves no deadline unenforced, and
    // a slow commit is still seen. When the store cannot be read, it asks again a second later.
    spec.stop_plan = [&store, &agent, &clock](bool woken) {
        try {
            return agent_stop_plan(store, *agent, clock,
                                   std::chrono::milliseconds(woken ? 1000 : 0));
        } catch (const std::exception&) {
            proc::StopPlan again;
            again.at = std::chrono::steady_clock::now() + std::chrono::seconds(1);
            return again;
        }
    };
    try {
        supervisor.start(spec);
    } catch (const Error& e) {
        store.write([&] {
            SQLite::Statement up(store.db(), "UPDATE agents SET spawn_error = ? WHERE id = ?");
            up.bind(1, std::string(e.what()));
            up.bind(2, agent_id);
            up.exec();
        });
        return leave();
    }
    bool recorded = store.write([&] {
        SQLite::Statement up(store.db(), R"sql(
            UPDATE agents SET status = 'active', pid = ?, pid_start_time = ?, supervisor_pid = ?,
                              supervisor_start = ?, pane_id = ?
            WHERE id = ? AND status = 'spawning'
        )sql");
        up.bind(1, static_cast<std::int64_t>(supervisor.child_pid()));
        up.bind(2, static_cast<std::int64_t>(supervisor.child_start_time()));
        up.bind(3, static_cast<std::int64_t>(::getpid()));
        up.bind(4, static_cast<std::int64_t>(proc::start_time_of(::getpid()).value_or(0)));
        if (pane_id.empty())
            up.bind(5);
        else
            up.bind(5, pane_id);
        up.bind(6, agent_id);
        return up.exec() == 1;
    });
    if (!recorded) {
        // The record was ended while the command started (its spawn died and a look declared
        // it lost, or a force-kill came first): nothing of it may run on unrecorded.
        supervisor.stop(std::chrono::milliseconds(1000));
        return leave();
    }

    proc::RunOutcome outcome = supervisor.run([](std::string_view) {});

    // The pane goes with its agent, before the record says the agent ended: whoever sees the end
    // sees no pane of it left (the session and the server go with their last pane). The hangup
    // that this sends to this process waits in the Supervisor's blocked signals; should this
    // process die before the record, a look records the agent as lost.
    if (!pane_id.empty()) {
        try {
            server.kill_pane(pane_id);
        } catch (const std::exception&) {
            // tmux refused twice: the record of the end matters more
        }
    }
    store.write([&] {
        auto now = load_agent(store, agent_id);
        if (!now || !now->live()) return;
        std::optional<std::string> signal;
        if (outcome.status.signal) signal = proc::signal_name(*outcome.status.signal);
        finish_agent(store.db(), *now, clock.now(),
                     {"exited", outcome.status.exit_code, signal, now->id_string(), {}, {}});
    });
    return 0;
}

int Agents::reconcile(const TeamRecord& team) {
    int changed = 0;
    std::optional<std::vector<tmux::PaneInfo>> panes;
    for (const auto& agent : load_agents(store_, team, false)) {
        if (auto supervisor = proc::Pidfd::live(agent.supervisor_pid, agent.supervisor_start)) {
            // Its command has ended and its supervisor is recording that (it ends what is left
            // and writes the record): wait for it, so that the command that looks sees the end.
            if (agent.pid && !proc::Pidfd::live(agent.pid, agent.pid_start)) {
                ChangeWatch watch(store_.home());
                auto deadline = SteadyClock::now() + kRecordWait;
                for (;;) {
                    auto now = load_agent(store_, agent.id);
                    if (!now || !now->live() || supervisor->exited()) break;
                    if (!watch.wait_until(deadline, {supervisor->fd()}) &&
                        SteadyClock::now() >= deadline) {
                        break;
                    }
                }
                ++changed;
            }
            continue;
        }
        if (!agent.supervisor_pid) {
            if (spawn_under_way(agent, clock_.now())) continue;
            // Its spawn is gone. A spawn ends only once the record shows the supervisor (or is
            // deleted), so read it again: what was read before may be older than that end.
            auto fresh = load_agent(store_, agent.id);
            if (!fresh || !fresh->live() || fresh->supervisor_pid) continue;
        }
        // Its supervisor is gone without recording an end: end what is left of the agent and
        // record it as lost.
        auto target = proc::tree_of_record(
            std::nullopt, std::nullopt, agent.pid, agent.pid_start,
            {"TEAM_AGENT_ID=" + agent.id_string(), "TEAM_HOME=" + store_.home().string()});
        proc::terminate_tree(target, SIGKILL, std::chrono::milliseconds(0), true);
        bool marked = store_.write([&] {
            auto now = load_agent(store_, agent.id);
            // Not if its supervisor recorded the start meanwhile (it ends by itself otherwise).
            if (!now || !now->live() || now->supervisor_pid != agent.supervisor_pid) return false;
            return finish_agent(store_.db(), *now, clock_.now(),
                                {"lost", std::nullopt, std::nullopt, "team", {}, {}});
        });
        if (!marked) continue;
        ++changed;
        if (agent.pane_id && agent.supervisor_pid) {
            if (!panes) panes = server().list_panes();
            server().kill_pane_run_by(*panes, *agent.pane_id, team.name,
                                      static_cast<pid_t>(*agent.supervisor_pid));
        }
    }
    return changed;
}

std::vector<AgentRecord> Agents::list(const TeamRecord& team, bool all) {
    reconcile(team);
    return load_agents(store_, team, all);
}

AgentRecord Agents::find(const TeamRecord& team, const std::string& name, bool all) {
    check_name(name, "agent name");
    auto agents = load_agents(store_, team, all);
    for (auto it = agents.rbegin(); it != agents.rend(); ++it) {
        if (it->name == name) return *it;
    }
    std::vector<std::string> names;
    for (const auto& a : agents) names.push_back(a.name);
    throw not_found("agent " + quote(name) + " not found in team " + quote(team.name) +
                    did_you_mean(name, names));
}

}  // namespace team
