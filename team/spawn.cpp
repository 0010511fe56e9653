// Spawn (SPEC 4): check the request, make the record, open the pane and wait for its supervisor
// to confirm the command runs, record the activity.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "base/error.hpp"
#include "base/names.hpp"
#include "base/programs.hpp"
#include "base/whole_file.hpp"
#include "proc/pidfd.hpp"
#include "proc/process_table.hpp"
#include "proc/supervisor.hpp"
#include "state/acp_rows.hpp"
#include "state/activity.hpp"
#include "state/change_watch.hpp"
#include "state/members.hpp"
#include "state/resume_rows.hpp"
#include "state/team_lock.hpp"
#include "state/teams.hpp"
#include "state/worktree_rows.hpp"
#include "team/acp_agents.hpp"
#include "team/agent_activity.hpp"
#include "team/agents.hpp"
#include "team/env_file.hpp"
#include "team/presets.hpp"
#include "team/spawn_parts.hpp"
#include "team/usage.hpp"

namespace team {

namespace fs = std::filesystem;

namespace {

// How long spawn waits for the pane's supervisor to confirm the command runs.
constexpr auto kSpawnTimeout = std::chrono::seconds(10);

std::string env_value(const std::vector<std::string>& env, const std::string& key) {
    std::string value;
    for (const auto& kv : env) {
        if (kv.compare(0, key.size() + 1, key + "=") == 0) value = kv.substr(key.size() + 1);
    }
    return value;
}

// Step 1: the request is checked before anything is written. Returns the agent's working
// directory, canonical.
std::string check_request(const TeamRecord& team, const SpawnRequest& request,
                          const WorktreePlan* worktree) {
    check_name(request.name, "agent name");
    if (request.argv.empty())
        throw usage_error("no command given: team spawn NAME -- CMD [ARGS...]");
    if (request.role.size() > 1024) throw usage_error("the role is longer than 1024 bytes");
    for (const auto& kv : request.env) {
        if (!is_env_entry(kv)) throw usage_error("invalid --env " + quote(kv) + ": use KEY=VALUE");
        std::string key = kv.substr(0, kv.find('='));
        for (const char* own : {"TEAM_HOME", "TEAM_NAME", "TEAM_AGENT_ID", "TEAM_AGENT_NAME",
                                "TEAM_AGENT_COLOR", "TEAM_WORKTREE", "TEAM_BRANCH", "TEAM_BASE"}) {
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
    std::string path = env_value(request.env, "PATH");
    if (path.empty() && std::getenv("PATH")) path = std::getenv("PATH");
    if (worktree) {
        // Not made yet: a relative program is looked for where its files come from.
        proc::require_program(request.argv[0], path, worktree->row.repo);
        return worktree->row.path;
    }
    std::string cwd = request.cwd.value_or(team.cwd);
    struct stat st {};
    if (::stat(cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        throw usage_error("--cwd " + quote(cwd) + " is not an existing directory");
    }
    cwd = fs::canonical(cwd).string();
    proc::require_program(request.argv[0], path, cwd);
    return cwd;
}

// The first colour of the pool that no live member has; all taken: they are shared.
std::string free_color(const std::vector<std::string>& used) {
    const auto& pool = color_pool();
    for (const auto& c : pool) {
        if (std::find(used.begin(), used.end(), c) == used.end()) return c;
    }
    return pool[used.size() % pool.size()];
}

// Step 2, in one transaction: the team is still active, the name is free, a colour is chosen,
// and the record is made `spawning`, saying who is making it, so that a look can tell at once
// whether a `spawning` agent is still being made or its maker is gone (reconcile).
void insert_record(Store& store, const Agents& agents, const TeamRecord& team,
                   const SpawnRequest& request, AgentRecord& agent, WorktreePlan* worktree,
                   ResumeRow resume) {
    store.write([&] {
        if (!team_is_active(store, team.id))
            throw refused("team " + quote(team.name) + " is dissolved");
        if (live_member_exists(store, team.id, request.name)) {
            throw refused("agent " + quote(request.name) + " already exists in team " +
                          quote(team.name));
        }
        // The team's limits (SPEC 18): at its max-agents, or over its max-cost, nothing is made.
        check_spawn_budget(store, team);
        auto used = live_member_colors(store, team.id);
        agent.color = request.color ? *request.color : free_color(used);
        agent.id = insert_spawning_agent(
            store, agent,
            {static_cast<std::int64_t>(::getpid()),
             static_cast<std::int64_t>(proc::start_time_of(::getpid()).value_or(0))});
        agent.log_file = agents.log_path(team, agent).string();
        set_agent_log_file(store, agent.id, *agent.log_file);
        // Who says what it is doing (SPEC 17): its host, its preset's hooks, else its screen.
        start_agent_activity(store, agent.id,
                             request.acp_policy ? "acp"
                             : request.preset   ? "hooks"
                                                : "screen",
                             agent.created_at);
        create_agent_usage(store, agent.id, request.limits);
        // What it takes to bring it back after a reboot (SPEC 19).
        resume.agent_id = agent.id;
        insert_resume_row(store, resume);
        if (request.acp_policy) {
            AcpSessionRow session;
            session.agent_id = agent.id;
            session.team_id = team.id;
            session.policy = *request.acp_policy;
            insert_acp_session(store, session);
        }
        // The worktree's row before git is asked (SPEC 14): a crash between leaves a row that
        // `team worktree repair` reconciles with git's list.
        if (worktree) {
            worktree->row.agent_id = agent.id;
            if (worktree->reuse_id) {
                give_worktree(store, worktree->reuse_id, agent.id, agent.name);
            } else {
                worktree->row.id = insert_worktree(store, worktree->row);
            }
        }
    });
}

// Step 5: the activity entry of the spawn.
void record_spawned(Store& store, const Clock& clock, const TeamRecord& team, const Caller& caller,
                    const AgentRecord& agent) {
    store.write([&] {
        append_activity(store.db(), team.id, clock.now(), caller.id(), "agent_spawned",
                        {{"agentId", agent.id_string()},
                         {"paneId", agent.pane_id ? nlohmann::json(*agent.pane_id) : nullptr},
                         {"pid", agent.pid ? nlohmann::json(*agent.pid) : nullptr},
                         {"command", agent.command},
                         {"color", *agent.color}});
    });
}

}  // namespace

// A file only its user may read (a preset's settings), replaced whole; the directories made for
// it are the user's alone too (Gemini CLI skips a settings file in a directory others may write).
void write_private_file(const fs::path& path, const std::string& content) {
    std::vector<fs::path> missing;
    for (fs::path dir = path.parent_path(); !dir.empty() && !fs::exists(dir);
         dir = dir.parent_path()) {
        missing.push_back(dir);
    }
    for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
        if (::mkdir(it->c_str(), 0700) != 0 && errno != EEXIST) {
            throw failed("cannot make " + quote(it->string()) + ": " + std::strerror(errno));
        }
    }
    replace_file(path, content);
}

// Step 3: the log file, made here, private (SPEC 2): the pipe-pane that appends to it runs in
// the tmux server, which has the user's umask (base/umask.hpp).
void make_log_file(const std::string& log_file) {
    fs::create_directories(fs::path(log_file).parent_path());
    int log_fd = ::open(log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (log_fd >= 0) ::close(log_fd);
}

// Step 4: the pane, running `team __agent ID`, and the wait for its supervisor to record the
// command running (or its end, or why it could not start). On any failure the pane and the
// record go (`undo`). Returns the record as the supervisor left it.
AgentRecord open_pane_and_wait(Store& store, const Clock& clock, proc::Processes& processes,
                               tmux::TmuxServer& server, const TeamRecord& team,
                               const AgentRecord& agent, const std::function<void()>& undo) {
    std::optional<tmux::PaneInfo> pane;
    try {
        ChangeWatch watch(store.home());  // before the pane starts, so its update is seen
        pane = server.open_pane(team.name,
                                {own_binary(), "__agent", "--home", store.home().string(),
                                 std::to_string(agent.id), "--spawner", std::to_string(::getpid())},
                                *agent.cwd, agent.name, *agent.log_file);
        auto supervisor = processes.open(pane->pid);
        auto deadline = clock.steady() + kSpawnTimeout;
        for (;;) {
            auto now_record = load_agent(store, agent.id);
            if (!now_record) throw failed("the agent's record vanished while it was starting");
            if (now_record->spawn_error) throw failed(*now_record->spawn_error);
            if (now_record->status == AgentStatus::active) return *now_record;
            // It started and ended at once: it ran, so it is an agent that exited.
            if (now_record->status == AgentStatus::terminated) return *now_record;
            std::vector<int> others;
            if (supervisor && !supervisor->exited()) others.push_back(supervisor->fd());
            if (supervisor && supervisor->exited()) {
                auto last = load_agent(store, agent.id);
                if (last && (last->status != AgentStatus::spawning || last->spawn_error)) continue;
                throw failed("the agent's pane closed before its command started");
            }
            if (!watch.wait_until(deadline, others) && clock.steady() >= deadline) {
                throw failed("the agent did not start within " +
                             std::to_string(kSpawnTimeout.count()) + "s");
            }
        }
    } catch (...) {
        if (pane) server.kill_pane(pane->id);
        undo();
        throw;
    }
}

AgentRecord Agents::spawn(const TeamRecord& team, const Caller& caller, const SpawnRequest& asked) {
    require_leader(caller, "spawn agents");
    // A team at its max-agents or over its max-cost (SPEC 18): refused before anything is
    // made, the refusal logged with its figures (and checked again in the record's write).
    try {
        check_spawn_budget(store_, team);
    } catch (const Error& e) {
        store_.write([&] {
            append_activity(store_.db(), team.id, clock_.now(), caller.id(), "spawn_refused",
                            {{"agent", asked.name}, {"error", e.what()}});
        });
        throw;
    }
    SpawnRequest request = asked;
    std::optional<PresetWiring> wiring;
    ResumeRow resume;
    resume.preset = request.preset;
    resume.argv = request.argv;
    if (request.acp_policy) {
        // An ACP agent gets `team mcp` through session/new, and its host answers shutdown
        // requests for it: a preset only names its program.
        request.acp_policy = check_acp_policy(*request.acp_policy);
        if (request.preset && request.argv.empty())
            request.argv = acp_preset_command(*request.preset);
        else if (request.preset)
            acp_preset_command(*request.preset);  // a known name all the same
        request.preset.reset();
        request.notify = false;
        resume.preset.reset();
        resume.argv = request.argv;
        resume.conversation = "acp";  // its sessionId, from its host's session/new
    }
    if (request.preset) {
        check_name(request.name, "agent name");
        wiring = wire_preset(
            {*request.preset, own_binary(), store_.home(), team.name, request.name, {}, {}},
            request.argv);
        if (!wiring->file.empty()) {
            if (auto refusal = gemini_settings_refusal(wiring->file)) throw usage_error(*refusal);
        }
        request.argv = wiring->argv;
        request.env.insert(request.env.end(), wiring->env.begin(), wiring->env.end());
        resume.conversation = wiring->conversation.kind;
        resume.conversation_id = wiring->conversation.id;
    }
    std::optional<WorktreePlan> plan;
    std::optional<Worktrees> worktrees;
    spawned_worktree_ = nullptr;
    if (request.worktree) {
        check_name(request.name, "agent name");
        if (request.cwd) {
            throw usage_error(
                "--cwd and --worktree ask for different things: an agent with a "
                "worktree starts in it");
        }
        worktrees.emplace(store_, clock_);
        plan = worktrees->plan(team, request.name, *request.worktree);
    }
    std::string cwd = check_request(team, request, plan ? &*plan : nullptr);
    const std::vector<std::string> asked_env = request.env;
    if (plan) request.env.insert(request.env.end(), plan->env.begin(), plan->env.end());
    if (wiring && !wiring->file.empty()) write_private_file(wiring->file, wiring->file_content);

    TeamLock lock(store_, team.name);
    // A dead agent's name and colour are free again; a worktree that a dead spawn of this agent
    // made is removed or kept for this one to take over: planned again when anything ended.
    if (reconcile(team) > 0 && plan) {
        plan = worktrees->plan(team, request.name, *request.worktree);
        cwd = plan->row.path;
        request.env = asked_env;
        request.env.insert(request.env.end(), plan->env.begin(), plan->env.end());
    }
    AgentRecord agent;
    agent.name = request.name;
    agent.team = team.name;
    agent.team_id = team.id;
    agent.role = request.role;
    agent.command = request.argv;
    agent.cwd = cwd;
    // Its --env entries' names only (SPEC 19): their values, and team's own entries, reach its
    // supervisor through a private file (team/env_file.hpp).
    agent.env = env_names(asked.env);
    agent.notify = request.notify || request.preset.has_value();
    agent.created_at = clock_.now();
    agent.status = AgentStatus::spawning;
    insert_record(store_, *this, team, request, agent, plan ? &*plan : nullptr, resume);
    bool made = false;
    try {
        if (plan) worktrees->make(*plan, team.name);
        made = true;
        write_env_file(store_.home(), agent.id, request.env);
    } catch (...) {
        drop_env_file(store_.home(), agent.id, ::getpid());
        if (made && plan && !plan->reuse_id) worktrees->unmake(plan->row);
        store_.write([&] { delete_agent(store_, agent.id); });
        throw;
    }
    make_log_file(*agent.log_file);

    tmux::TmuxServer server(tmux_);
    try {
        agent = open_pane_and_wait(store_, clock_, processes_, server, team, agent,
                                   [&] { store_.write([&] { delete_agent(store_, agent.id); }); });
    } catch (...) {
        drop_env_file(store_.home(), agent.id, ::getpid());
        if (plan && !plan->reuse_id) worktrees->unmake(plan->row);
        throw;
    }
    if (plan) {
        spawned_worktree_ = {{"path", plan->row.path},
                             {"branch", plan->row.branch},
                             {"base", plan->row.base},
                             {"baseName", plan->row.base_name},
                             {"included", plan->included}};
    }
    record_spawned(store_, clock_, team, caller, agent);
    return agent;
}

}  // namespace team
