// The operations of agents (SPEC 4): spawn, list, attach, prompt (logs: ops/log_ops.cpp).
#include "base/amounts.hpp"
#include "base/duration.hpp"
#include "base/programs.hpp"
#include "hosts/keeper.hpp"
#include "ops/agent_rows.hpp"
#include "ops/names_in_home.hpp"
#include "ops/operation.hpp"
#include "ops/table.hpp"
#include "tasks/tasks.hpp"
#include "team/acp_agents.hpp"
#include "team/agents.hpp"
#include "team/prompt_taken.hpp"

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
    if (r.args.flag("acp")) {
        request.acp_policy = r.args.optional_string("permissions").value_or("ask");
    } else if (r.args.has("permissions")) {
        throw usage_error(r.args.label("permissions") + " goes with " + r.args.label("acp"));
    }
    if (auto n = r.args.integer("max_tokens")) request.limits.max_tokens = *n;
    if (auto usd = r.args.optional_string("max_cost")) {
        request.limits.max_cost = parse_usd(*usd, r.args.label("max_cost"));
    }
    if (auto size = r.args.optional_string("max_memory")) {
        request.limits.max_memory = parse_size(*size, r.args.label("max_memory"));
    }
    if (auto d = r.args.duration("max_runtime")) request.limits.max_runtime_ms = d->count();
    if (auto d = r.args.duration("limit_grace")) request.limits.limit_grace_ms = d->count();
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
    // On a host of the store (SPEC 16), its keeper holds the host's lease while agents run here.
    if (r.core.store().engine() == Db::Engine::postgresql) {
        doc["host"] = r.args.has("host") ? nlohmann::json(r.args.string("host")) : nullptr;
        auto keeper = hosts::ensure_keeper(r.core.store(), own_binary());
        if (!keeper.empty()) doc["warning"] = keeper;
    }
    return Result(doc);
}

Result list_agents(Request& r) {
    const TeamRecord& team = *r.team;
    Agents agents(r.core.store(), r.core.clock(), r.core.tmux());
    Result result{agent_rows(r.core, team, agents.list(team, r.args.flag("all")))};
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
        auto agent = agents.find(team, *name);
        if (r.core.store().engine() == Db::Engine::postgresql &&
            !agent.lives_in(r.core.store().home_id())) {
            auto host =
                agent.home_id ? find_host_by_home(r.core.store(), *agent.home_id) : std::nullopt;
            throw refused("agent " + quote(agent.name) + " runs on " +
                          (host ? "host " + quote(host->name) + ": attach there, ssh -t " +
                                      host->ssh + " team attach " + agent.name
                                : std::string("another machine (home ") +
                                      agent.home_id.value_or("?") + "): attach there"));
        }
        pane = agent.pane_id.value_or("");
    }
    return Result({{"team", team.name}, {"session", team.name}, {"paneId", pane}});
}

// A text typed into a pane: at most 1 MiB, and no control character that would act as a key.
void check_prompt_text(const Args& args) {
    std::string text = args.string("text");
    if (text.size() > (1u << 20)) throw usage_error("the text is longer than 1 MiB", "text");
    for (unsigned char c : text) {
        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
            throw usage_error("the text holds a control character (" +
                                  quote(std::string(1, static_cast<char>(c))) +
                                  "): it would act as a key (Ctrl-C, Escape...) in the pane",
                              "text");
        }
    }
}

// A prompt to an ACP agent (SPEC 15): a turn queued for its host; --wait: until it ends.
Result prompt_acp_agent(Request& r, const AgentRecord& agent, const std::string& text) {
    if (!agent.live()) {
        throw refused("agent " + quote(agent.name) + " is terminated (" +
                      agent.exit_reason.value_or("ended") + ")");
    }
    if (r.args.flag("no_enter")) {
        throw usage_error(r.args.label("no_enter") +
                          " is for agents in panes: an ACP agent gets its prompt as a turn");
    }
    AcpAgents acp(r.core.store(), r.core.clock());
    AcpTurnRow turn = acp.prompt(agent, r.caller(), text);
    bool ended = false, wait = r.args.flag("wait");
    // A turn may take as long as it takes unless --timeout says otherwise (its default is a
    // pane's, for taking the text).
    std::optional<std::chrono::milliseconds> limit;
    if (r.args.has("timeout")) limit = r.args.duration("timeout");
    if (wait) turn = acp.wait_turn(turn.id, limit, ended);
    nlohmann::json doc = {{"success", true}, {"agentId", agent.id_string()}};
    doc.update(to_json(turn));
    if (wait && !ended) {
        doc["success"] = false;
        doc["error"] = "turn " + std::to_string(turn.id) + " is still " + turn.state + " after " +
                       r.args.values().at("timeout").dump();
        doc["code"] = "timeout";
        return Result(doc, 124);
    }
    if (!wait) return Result(doc);
    // The turn ended: with a stop reason, whichever (SPEC 15: --wait returns it), the prompt was
    // answered, its exit code saying the reason; without one (the connection ended, the agent
    // answered an error) the turn failed, and so did the request.
    Result out(doc, stop_reason_exit_code(turn));
    if (turn.state == "failed") {
        out.doc["success"] = false;
        out.doc["code"] = code_name(ErrorCode::failed);
    } else {
        out.exit_is_answer = true;
    }
    return out;
}

Result prompt_agent(Request& r) {
    std::string text = r.args.string("text");
    Agents agents(r.core.store(), r.core.clock(), r.core.tmux());
    AgentRecord agent = agents.find(*r.team, r.args.string("name"), true);
    if (AcpAgents(r.core.store(), r.core.clock()).is_acp(agent))
        return prompt_acp_agent(r, agent, text);
    if (r.args.flag("wait")) {
        throw usage_error(r.args.label("wait") +
                          " is for ACP agents (spawn --acp), whose turns end with a stop reason");
    }
    if (!agent.live()) {
        throw refused("agent " + quote(agent.name) + " is terminated (" +
                      agent.exit_reason.value_or("ended") + "); there is no pane to type into");
    }
    if (!agent.pane_id) throw refused("agent " + quote(agent.name) + " has no pane yet");
    nlohmann::json doc = {{"success", true},
                          {"agentId", agent.id_string()},
                          {"paneId", *agent.pane_id},
                          {"bytes", text.size()}};
    if (r.args.flag("no_enter")) {
        if (r.args.has("timeout")) {
            throw usage_error(r.args.label("timeout") +
                              " is how long to wait for the agent to "
                              "take the text, which " +
                              r.args.label("no_enter") + " never sends");
        }
        agents.server().type_text(*agent.pane_id, text, false);
        doc["taken"] = false;
        return Result(doc);
    }
    // Typed is not taken (SPEC 17): until the agent took it, or fail saying what it shows.
    auto timeout = *r.args.duration("timeout");
    auto taken = type_and_wait_taken(r.core.store(), r.core.tmux(), agent.id, *agent.pane_id, text,
                                     timeout, r.core.clock());
    doc["taken"] = taken.taken;
    if (taken.taken) {
        doc["how"] = taken.how;
        return Result(doc);
    }
    doc["success"] = false;
    doc["code"] = code_name(ErrorCode::failed);
    doc["error"] =
        "agent " + quote(agent.name) + " did not take the text within " + format_duration(timeout) +
        " (nothing read it, or it still sits in an input line); its screen:\n" + taken.screen;
    doc["screen"] = taken.screen;
    return Result(doc, 1);
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
             .placeholder = "DIR",
             .kind = Kind::dir},
            {.name = "env",
             .type = Type::strings,
             .help = "an environment variable for CMD (repeatable)",
             .placeholder = "K=V"},
            {.name = "color",
             .help = "blue, green, yellow, magenta, cyan, red, orange, purple, pink or teal "
                     "(default: the first free one)",
             .placeholder = "COLOR",
             .choices = color_choices},
            {.name = "preset",
             .help = "claude, codex or gemini: wire `team mcp` and the team's instructions into "
                     "that coding agent (CMD may then be left out)",
             .placeholder = "PRESET",
             .choices = preset_choices},
            {.name = "notify",
             .type = Type::boolean,
             .help = "also tell it of a shutdown request by a notice typed into its pane (on "
                     "with --preset)"},
            {.name = "acp",
             .type = Type::boolean,
             .help = "host CMD as an Agent Client Protocol agent (SPEC 15): structured turns, a "
                     "transcript, permission requests to the leader; with --preset: its ACP "
                     "program (claude, codex, gemini, opencode)"},
            {.name = "permissions",
             .help = "with --acp: ask (default), allow-reads, allow-all or deny: which permission "
                     "requests are answered without asking the leader",
             .placeholder = "POLICY"},
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
            {.name = "max_tokens",
             .type = Type::integer,
             .help = "stop it once its model calls have used this many tokens (input, output and "
                     "the cache's reads and writes)",
             .placeholder = "N",
             .min = 1},
            {.name = "max_cost",
             .help = "stop it once it has spent this many US dollars (its own figure, else its "
                     "tokens at the price table's prices)",
             .placeholder = "USD"},
            {.name = "max_memory",
             .help = "stop it once its whole process tree uses this much memory (PSS): 512M, 2G",
             .placeholder = "SIZE"},
            {.name = "max_runtime",
             .type = Type::duration,
             .help = "stop it once it has run this long",
             .placeholder = "DUR"},
            {.name = "limit_grace",
             .type = Type::duration,
             .help = "how long a stop for a limit waits for its graceful answer before the force",
             .placeholder = "DUR",
             .default_text = "30s"},
            {.name = "host",
             .help = "run it on this host of the store (team host add), in that host's own tmux "
                     "server under its own supervisor; --cwd is a directory there",
             .placeholder = "NAME"},
            {.name = "command",
             .type = Type::command,
             .help = "the command and its arguments, executed as given (never through a shell)",
             .placeholder = "CMD"},
        },
    .access = Access::write,
    .leader_only = true,
    .leader_action = "spawn agents",
    .host_param = "host",
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
                .positional = true,
                .kind = Kind::agent}},
    .access = Access::read,
    .body = attach,
};

const Operation prompt_agent_op{
    .name = "prompt_agent",
    .command = "prompt",
    .tool = "agent_prompt",
    .routes = {{"POST", "/api/teams/{team}/agents/{name}/prompt"}},
    .summary =
        "type TEXT into the agent's pane and press Enter, as a person would; an ACP "
        "agent gets it as a prompt turn, queued",
    .params =
        {
            {.name = "name",
             .help = "the agent",
             .placeholder = "NAME",
             .required = true,
             .positional = true,
             .kind = Kind::agent},
            {.name = "text",
             .type = Type::text,
             .help = "what to type ('-': read it from stdin); several lines are pasted at once",
             .placeholder = "TEXT",
             .required = true,
             .positional = true},
            {.name = "no_enter",
             .type = Type::boolean,
             .help = "type the text without pressing Enter"},
            {.name = "wait",
             .type = Type::boolean,
             .help = "an ACP agent: wait for the turn's end; the exit code says its stop reason "
                     "(end_turn 0, cancelled 130, another 5, failed 1)"},
            {.name = "timeout",
             .type = Type::duration,
             .help = "a pane agent: how long it may take to take the text (exit 1 after); an "
                     "ACP agent with --wait: how long the turn may take (exit 124)",
             .placeholder = "DUR",
             .default_text = "10s"},
        },
    .access = Access::write,
    .waits = true,
    .reconcile = true,
    .agent_param = "name",
    .validate = check_prompt_text,
    .body = prompt_agent,
};

}  // namespace team::ops
