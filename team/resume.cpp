// `team resume` (SPEC 19): each agent planned (what it starts with, or why it cannot), then,
// under the team's lock, started again under its own record, one at a time.
#include "team/resume.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "base/error.hpp"
#include "base/names.hpp"
#include "base/programs.hpp"
#include "proc/process_table.hpp"
#include "proc/supervisor.hpp"
#include "state/acp_rows.hpp"
#include "state/activity.hpp"
#include "state/members.hpp"
#include "state/resume_rows.hpp"
#include "state/task_rows.hpp"
#include "state/team_lock.hpp"
#include "state/teams.hpp"
#include "state/usage_rows.hpp"
#include "state/worktree_rows.hpp"
#include "team/agent_activity.hpp"
#include "team/agent_end.hpp"
#include "team/agents.hpp"
#include "team/env_file.hpp"
#include "team/presets.hpp"
#include "team/spawn_parts.hpp"

namespace team {

namespace fs = std::filesystem;

nlohmann::json to_json(const ResumeOutcome& o) {
    auto opt = [](const std::optional<std::string>& v) {
        return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
    };
    return {{"name", o.name},
            {"outcome", o.outcome},
            {"why", opt(o.why)},
            {"conversation", opt(o.conversation)},
            {"conversationId", opt(o.conversation_id)},
            {"tasks", o.tasks},
            {"worktree", opt(o.worktree)},
            {"command", o.command},
            {"host", opt(o.host)},
            {"agent", o.agent}};
}

namespace {

// An end that nobody chose (SPEC 19: all but a stop on purpose, graceful, forced or a
// limit's, which are recorded confirmed or force_killed): lost (its supervisor died with the
// machine or the tmux server), or its command ended by a signal or a non-zero exit (a machine
// going down kills in no set order: an ACP host whose agent went first exits 1). An agent that
// exited 0 by itself finished.
bool ended_by_accident(const AgentRecord& a) {
    if (a.exit_reason == "lost") return true;
    return a.exit_reason == "exited" && (a.signal || a.exit_code.value_or(0) != 0);
}

bool non_empty_file(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

bool is_directory(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// What one agent starts with: its command and environment, its conversation, or why it cannot
// start.
struct Plan {
    AgentRecord agent;
    ResumeOutcome outcome;
    std::vector<std::string> env;  // KEY=VALUE: its --env (from our environment), wiring, worktree
    std::optional<PresetWiring> wiring;
    std::optional<std::string> load_from;  // ACP
};

// How its conversation comes back, by its kind; `target` gets the Claude Code / Gemini CLI /
// Codex flags.
void plan_conversation(Store& store, const ResumeRow& row, PresetTarget& target, Plan& plan) {
    auto& o = plan.outcome;
    o.conversation = row.conversation;
    o.conversation_id = row.conversation_id;
    const auto& kind = row.conversation;
    if (!kind) {
        o.outcome = "fresh";
        o.why = "a command without a preset or --acp: team cannot resume its conversation";
        return;
    }
    if (*kind == "acp") {
        auto session = load_acp_session(store, plan.agent.id);
        bool loads = false;
        if (session && session->agent_info.is_object()) {
            auto caps = session->agent_info.find("agentCapabilities");
            loads = caps != session->agent_info.end() && caps->is_object() &&
                    caps->value("loadSession", false);
        }
        if (!session || !session->session_id) {
            o.outcome = "fresh";
            o.why = "its ACP session had not begun";
        } else if (!loads) {
            o.outcome = "fresh";
            o.why = "the agent does not offer session/load";
        } else {
            o.outcome = "resumed";
            o.conversation_id = session->session_id;
            plan.load_from = session->session_id;
        }
        return;
    }
    if (!row.conversation_id) {
        o.outcome = "fresh";
        o.why = *kind == "codex" ? "Codex had not named its conversation (its hooks say it from "
                                   "its first prompt)"
                                 : "its conversation's id was never known";
        return;
    }
    if (*kind == "codex") {
        target.resume = row.conversation_id;
        o.outcome = "resumed";
        return;
    }
    // Claude Code and Gemini CLI resume only a conversation that has begun. One that never had
    // a prompt starts fresh: Claude Code under the same id (it has written nothing for it, and
    // refuses --resume), Gemini CLI under a new one (it has written an empty chat file under
    // that id, and refuses both --resume and --session-id for it).
    auto usage = load_agent_usage(store, plan.agent.id);
    bool begun = *kind == "claude" ? usage && usage->records && non_empty_file(*usage->records)
                                   : usage && (usage->turns > 0 || !usage->models.empty());
    if (begun) {
        target.resume = row.conversation_id;
        o.outcome = "resumed";
    } else {
        if (*kind == "claude") target.session = row.conversation_id;
        o.outcome = "fresh";
        o.why = "its conversation had not begun (no prompt yet)";
    }
}

}  // namespace

std::vector<ResumeOutcome> Agents::resume(const TeamRecord& team, const Caller& caller,
                                          const ResumeAsk& ask) {
    require_leader(caller, "resume agents");
    for (const auto& n : ask.names) check_name(n, "agent name");
    if (ask.names.empty() && !ask.all) {
        throw usage_error("name the agents to resume, or --all for every agent the team lost");
    }
    if (!ask.names.empty() && ask.all) {
        throw usage_error("name agents or give --all, not both");
    }
    TeamLock lock(store_, team.name);
    if (!team_is_active(store_, team.id))
        throw refused("team " + quote(team.name) + " is dissolved");
    reconcile(team);

    // The newest record of each name, and whether a live one has it.
    auto records = load_agents(store_, team, true);
    std::map<std::string, AgentRecord> newest;
    std::set<std::string> live;
    for (const auto& a : records) {
        if (a.is_leader) continue;
        if (a.live()) live.insert(a.name);
        auto it = newest.find(a.name);
        if (it == newest.end() || it->second.id < a.id) newest[a.name] = a;
    }
    std::vector<AgentRecord> chosen;
    std::vector<std::string> refusals;
    if (ask.all) {
        for (const auto& [name, a] : newest) {
            if (!live.count(name) && ended_by_accident(a)) chosen.push_back(a);
        }
    } else {
        std::set<std::string> seen;
        for (const auto& n : ask.names) {
            if (!seen.insert(n).second) continue;
            auto it = newest.find(n);
            if (it == newest.end()) {
                std::vector<std::string> names;
                for (const auto& [name, a] : newest) names.push_back(name);
                throw not_found("agent " + quote(n) + " not found in team " + quote(team.name) +
                                did_you_mean(n, names));
            }
            if (live.count(n)) {
                refusals.push_back(quote(n) + " is live: there is nothing to resume");
                continue;
            }
            chosen.push_back(it->second);
        }
    }

    // Each plan, checked before anything starts.
    std::vector<Plan> plans;
    std::vector<ResumeOutcome> out;
    for (const auto& a : chosen) {
        Plan plan;
        plan.agent = a;
        auto& o = plan.outcome;
        o.name = a.name;
        if (!a.lives_in(store_.home_id())) {
            o.outcome = "elsewhere";
            o.home_id = a.home_id;
            out.push_back(o);
            continue;
        }
        std::vector<std::string> problems;
        auto row = load_resume_row(store_, a.id);
        std::vector<std::string> argv;
        PresetTarget target;
        if (row) {
            argv = row->argv;
            target = {
                row->preset.value_or(""), own_binary(), store_.home(), team.name, a.name, {}, {}};
            plan_conversation(store_, *row, target, plan);
        } else {
            argv = a.command.is_array() ? a.command.get<std::vector<std::string>>()
                                        : std::vector<std::string>{};
            o.outcome = "fresh";
            o.why = "spawned before team recorded how to resume an agent: its command as it was";
        }
        if (row && row->preset) {
            plan.wiring = wire_preset(target, argv);
            argv = plan.wiring->argv;
            if (plan.wiring->conversation.id) o.conversation_id = plan.wiring->conversation.id;
            if (!plan.wiring->file.empty()) {
                if (auto refusal = gemini_settings_refusal(plan.wiring->file))
                    problems.push_back(*refusal);
            }
        }
        if (argv.empty()) problems.push_back("its command was not recorded");
        o.command = argv;
        // Its --env values, from the environment of whoever resumes (the store has names only);
        // the names of what team gives it itself (a preset's, a worktree's: a record made before
        // schema 16 kept them with the others) are not asked of it.
        std::vector<std::string> own;
        if (plan.wiring) own = env_names(plan.wiring->env);
        if (worktree_of_agent(store_, a.id))
            own.insert(own.end(), {"TEAM_WORKTREE", "TEAM_BRANCH", "TEAM_BASE"});
        for (const auto& key : a.env) {
            if (std::find(own.begin(), own.end(), key) != own.end()) continue;
            const char* value = std::getenv(key.c_str());
            if (!value) {
                problems.push_back("it was given --env " + key +
                                   ", which this environment does not set (the store keeps "
                                   "names only): set it and resume again");
            } else {
                plan.env.push_back(key + "=" + value);
            }
        }
        if (plan.wiring)
            plan.env.insert(plan.env.end(), plan.wiring->env.begin(), plan.wiring->env.end());
        // Its own worktree, as it left it; else its cwd.
        if (auto wt = worktree_of_agent(store_, a.id)) {
            o.worktree = wt->path;
            if (wt->state != "present") {
                problems.push_back("its worktree " + quote(wt->path) + " was " + wt->state +
                                   ": spawn it again with a new one");
            } else if (!is_directory(wt->path)) {
                problems.push_back("its worktree " + quote(wt->path) +
                                   " is gone (deleted by hand?): `team worktree repair` "
                                   "records it, then spawn it again");
            }
            plan.env.insert(plan.env.end(), {"TEAM_WORKTREE=" + wt->path,
                                             "TEAM_BRANCH=" + wt->branch, "TEAM_BASE=" + wt->base});
        } else if (!a.cwd || !is_directory(*a.cwd)) {
            problems.push_back("its directory " + quote(a.cwd.value_or("")) + " is gone");
        }
        if (problems.empty() && !argv.empty()) {
            std::string path;
            for (const auto& kv : plan.env) {
                if (kv.rfind("PATH=", 0) == 0) path = kv.substr(5);
            }
            if (path.empty() && std::getenv("PATH")) path = std::getenv("PATH");
            try {
                proc::require_program(argv[0], path, o.worktree.value_or(a.cwd.value_or("/")));
            } catch (const Error& e) {
                problems.push_back(e.what());
            }
        }
        if (!problems.empty()) {
            std::string why;
            for (const auto& p : problems) why += (why.empty() ? "" : "; ") + p;
            if (!ask.all) refusals.push_back(quote(a.name) + ": " + why);
            o.outcome = "skipped";
            o.why = why;
            o.conversation.reset();
            o.conversation_id.reset();
            out.push_back(o);
            continue;
        }
        plans.push_back(std::move(plan));
    }
    if (!refusals.empty()) {
        std::string text;
        for (const auto& r : refusals) text += (text.empty() ? "" : "; ") + r;
        throw refused("cannot resume " + text + " (nothing was started)");
    }
    if (ask.dry_run) {
        for (auto& p : plans) out.push_back(p.outcome);
        return out;
    }

    tmux::TmuxServer server(tmux_);
    for (auto& plan : plans) {
        auto& o = plan.outcome;
        AgentRecord before = plan.agent;
        // Its record, in one write: started again (only if still ended and its name free), its
        // tasks taken back, its conversation, its ACP session, its activity and runtime.
        bool claimed = store_.write([&] {
            auto now_record = load_agent(store_, before.id);
            if (!now_record || now_record->live()) return false;
            EpochMs at = clock_.now();
            if (!restart_agent(
                    store_, before.id, nlohmann::json(o.command),
                    {static_cast<std::int64_t>(::getpid()),
                     static_cast<std::int64_t>(proc::start_time_of(::getpid()).value_or(0))})) {
                return false;
            }
            o.tasks = take_back_tasks(store_.db(), team.id, before.name, at);
            mark_resumed(store_, before.id, o.conversation_id, at);
            bool acp = load_acp_session(store_, before.id).has_value();
            if (acp) reopen_acp_session(store_, before.id, plan.load_from);
            // Who says what it is doing, as at its spawn: its host, its preset's hooks, its screen.
            start_agent_activity(store_, before.id,
                                 acp           ? "acp"
                                 : plan.wiring ? "hooks"
                                               : "screen",
                                 at);
            restart_usage_run(store_, before.id, now_record->created_at,
                              now_record->terminated_at.value_or(at), at);
            return true;
        });
        if (!claimed) {
            o.outcome = "skipped";
            o.why = "it was started again by someone else meanwhile";
            o.tasks.clear();
            out.push_back(o);
            continue;
        }
        try {
            if (plan.wiring && !plan.wiring->file.empty())
                write_private_file(plan.wiring->file, plan.wiring->file_content);
            write_env_file(store_.home(), before.id, plan.env);
            if (before.log_file) make_log_file(*before.log_file);
            auto starting = load_agent(store_, before.id);
            if (!starting) throw failed("its record vanished while it was starting");
            auto running =
                open_pane_and_wait(store_, clock_, processes_, server, team, *starting, [&] {
                    drop_env_file(store_.home(), before.id, ::getpid());
                    store_.write([&] {
                        auto now = load_agent(store_, before.id);
                        if (now && now->live()) {
                            finish_agent(store_, *now, clock_.now(),
                                         {"lost", std::nullopt, std::nullopt, "team", {}, {}});
                        }
                    });
                });
            o.agent = to_json(running);
        } catch (const std::exception& e) {
            o.outcome = "failed";
            o.why = e.what();
            o.tasks.clear();
            out.push_back(o);
            continue;
        }
        store_.write([&] {
            append_activity(
                store_.db(), team.id, clock_.now(), caller.id(), "agent_resumed",
                {{"agentId", before.id_string()},
                 {"outcome", o.outcome},
                 {"why", o.why ? nlohmann::json(*o.why) : nlohmann::json(nullptr)},
                 {"conversation",
                  o.conversation ? nlohmann::json(*o.conversation) : nlohmann::json(nullptr)},
                 {"conversationId",
                  o.conversation_id ? nlohmann::json(*o.conversation_id) : nlohmann::json(nullptr)},
                 {"tasks", o.tasks}});
        });
        out.push_back(o);
    }
    return out;
}

}  // namespace team
