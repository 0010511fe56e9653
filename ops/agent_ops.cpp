// The operations of agents (SPEC 4): spawn, list, attach, prompt (logs: ops/log_ops.cpp).
#include "ops/operation.hpp"
#include "ops/table.hpp"
#include "tasks/tasks.hpp"
#include "team/agents.hpp"

namespace team::ops {

namespace {

nlohmann::json optional_json(const auto& value) {
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

Result spawn_agent(Request& r) {
    SpawnRequest request;
    request.name = r.args.string("name");
    request.role = r.args.string("role");
    // An empty --cwd or --color is the default, as it always was.
    if (auto cwd = r.args.optional_string("cwd"); cwd && !cwd->empty()) request.cwd = cwd;
    if (auto color = r.args.optional_string("color"); color && !color->empty()) {
        request.color = color;
    }
    request.env = r.args.strings("env");
    request.argv = r.args.strings("command");
    request.preset = r.args.optional_string("preset");
    request.notify = r.args.flag("notify");
    bool worktree = r.args.flag("worktree");
    for (const char* only : {"branch", "base", "reuse_branch"}) {
        if (!worktree && r.args.has(only) && r.args.values()[only] != false) {
            throw usage_error(r.args.label(only) + " goes with " + r.args.label("worktree"));
        }
    }
    if (worktree) {
        request.worktree = WorktreeAsk{r.args.optional_string("branch"),
                                       r.args.optional_string("base"), r.args.flag("reuse_branch")};
    }
    Agents agents(r.core.store(), r.core.clock(), r.core.tmux());
    AgentRecord a = agents.spawn(*r.team, r.caller(), request);
    nlohmann::json doc = {{"agentId", a.id_string()},
                          {"name", a.name},
                          {"paneId", optional_json(a.pane_id)},
                          {"pid", optional_json(a.pid)},
                          {"color", optional_json(a.color)}};
    if (worktree) doc["worktree"] = agents.spawned_worktree();
    return Result(doc);
}

Result list_agents(Request& r) {
    const TeamRecord& team = *r.team;
    Agents agents(r.core.store(), r.core.clock(), r.core.tmux());
    nlohmann::json doc = nlohmann::json::array();
    auto list = agents.list(team, r.args.flag("all"));
    // The git state of each agent with a worktree (SPEC 14); one query when none has.
    auto states = Worktrees(r.core.store(), r.core.clock()).agent_states(team, list);
    for (const auto& a : list) {
        doc.push_back(to_json(a));
        if (auto s = states.find(a.name); s != states.end()) doc.back()["worktree"] = *s;
    }
    Result result{doc};
    result.view = {{"all", r.args.flag("all")},
                   {"openTasks", open_tasks_by_owner(r.core.store(), team.id)}};
    return result;
}

// Where a terminal attaches: the team's session, with the named agent's pane (else the first
// live agent's) selected. The face then becomes a tmux client (Core::become_tmux_client).
Result attach(Request& r) {
    const TeamRecord& team = *r.team;
    Agents agents(r.core.store(), r.core.clock(), r.core.tmux());
    auto live = agents.list(team, false);
    if (live.empty()) throw refused("team " + quote(team.name) + " has no live agent to attach to");
    std::string pane = live.front().pane_id.value_or("");
    if (auto name = r.args.optional_string("name")) {
        pane = agents.find(team, *name).pane_id.value_or("");
    }
    return Result({{"team", team.name}, {"session", team.name}, {"paneId", pane}});
}

// A text typed into a pane: at most 1 MiB, and no control character that would act as a key.
void check_prompt_text(const Args& args) {
    std::string text = args.string("text");
    if (text.size() > (1u << 20)) throw usage_error("the text is longer than 1 MiB");
    for (unsigned char c : text) {
        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
            throw usage_error("the text holds a control character (" +
                              quote(std::string(1, static_cast<char>(c))) +
                              "): it would act as a key (Ctrl-C, Escape...) in the pane");
        }
    }
}

Result prompt_agent(Request& r) {
    std::string text = r.args.string("text");
    Agents agents(r.core.store(), r.core.clock(), r.core.tmux());
    AgentRecord agent = agents.find(*r.team, r.args.string("name"), true);
    if (!agent.live()) {
        throw refused("agent " + quote(agent.name) + " is terminated (" +
                      agent.exit_reason.value_or("ended") + "); there is no pane to type into");
    }
    if (!agent.pane_id) throw refused("agent " + quote(agent.name) + " has no pane yet");
    agents.server().type_text(*agent.pane_id, text, !r.args.flag("no_enter"));
    return Result({{"success", true},
                   {"agentId", agent.id_string()},
                   {"paneId", *agent.pane_id},
                   {"bytes", text.size()}});
}

}  // namespace

const Operation spawn_agent_op{
    .name = "spawn_agent",
    .command = "spawn",
    .tool = "agent_spawn",
    .routes = {{"POST", "/api/teams/{team}/agents"}},
    .summary = "leader only: start CMD as a new agent in a pane of the team's tmux session",
    .params =
        {
            {.name = "name",
             .help = "the agent's name: letters, digits, '_' and '-', at most 64",
             .placeholder = "NAME",
             .required = true,
             .positional = true},
            {.name = "role", .help = "what the agent does (free text)", .placeholder = "ROLE"},
            {.name = "cwd",
             .help = "where CMD starts (default: the team's directory)",
             .placeholder = "DIR"},
            {.name = "env",
             .type = Type::strings,
             .help = "an environment variable for CMD (repeatable)",
             .placeholder = "K=V"},
            {.name = "color",
             .help = "blue, green, yellow, magenta, cyan, red, orange, purple, pink or teal "
                     "(default: the first free one)",
             .placeholder = "COLOR"},
            {.name = "preset",
             .help = "claude, codex or gemini: wire `team mcp` and the team's instructions into "
                     "that coding agent (CMD may then be left out)",
             .placeholder = "PRESET"},
            {.name = "notify",
             .type = Type::boolean,
             .help = "also tell it of a shutdown request by a notice typed into its pane (on "
                     "with --preset)"},
            {.name = "worktree",
             .type = Type::boolean,
             .help = "give it a git worktree of its own, on its own branch, under "
                     "$TEAM_HOME/worktrees (SPEC 14); it starts there"},
            {.name = "branch",
             .help = "with --worktree: its branch (default: team/TEAM/NAME)",
             .placeholder = "BRANCH"},
            {.name = "base",
             .help = "with --worktree: where a new branch starts (default: the team's base)",
             .placeholder = "REF"},
            {.name = "reuse_branch",
             .type = Type::boolean,
             .help = "with --worktree: check out the branch if it exists already"},
            {.name = "command",
             .type = Type::command,
             .help = "the command and its arguments, executed as given (never through a shell)",
             .placeholder = "CMD"},
        },
    .access = Access::write,
    .leader_only = true,
    .leader_action = "spawn agents",
    .body = spawn_agent,
};

const Operation list_agents_op{
    .name = "list_agents",
    .command = "agents",
    .tool = "agent_list",
    .routes = {{"GET", "/api/teams/{team}/agents"}},
    .summary = "the team's live agents: name, status, pane, pid, colour, open tasks, age",
    .params = {{.name = "all", .type = Type::boolean, .help = "also list terminated agents"}},
    .access = Access::read,
    .body = list_agents,
};

const Operation attach_op{
    .name = "attach",
    .command = "attach",
    .no_tool = "only a terminal can attach: it becomes a tmux client",
    .no_route = "only a terminal can attach: it becomes a tmux client",
    .summary = "attach this terminal to the team's tmux session",
    .params = {{.name = "name",
                .help = "the agent whose pane is selected (default: the first)",
                .placeholder = "NAME",
                .positional = true}},
    .access = Access::read,
    .body = attach,
};

const Operation prompt_agent_op{
    .name = "prompt_agent",
    .command = "prompt",
    .tool = "agent_prompt",
    .routes = {{"POST", "/api/teams/{team}/agents/{name}/prompt"}},
    .summary = "type TEXT into the agent's pane and press Enter, as a person would",
    .params =
        {
            {.name = "name",
             .help = "the agent",
             .placeholder = "NAME",
             .required = true,
             .positional = true},
            {.name = "text",
             .type = Type::text,
             .help = "what to type ('-': read it from stdin); several lines are pasted at once",
             .placeholder = "TEXT",
             .required = true,
             .positional = true},
            {.name = "no_enter",
             .type = Type::boolean,
             .help = "type the text without pressing Enter"},
        },
    .access = Access::write,
    .reconcile = true,
    .validate = check_prompt_text,
    .body = prompt_agent,
};

}  // namespace team::ops
