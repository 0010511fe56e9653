// The operations of executions (SPEC 13, the Execution Termination feature): the running
// background shells of the whole home, seen and ended as the seeds' execution endpoints see
// and end them. An execution is a shell; its execution_id is the shell id. The HTTP face routes
// to these by name; the command line has `team shell terminate ID` and no verb for the other two,
// whose records `team shell list` and `team shell status ID` already show in SPEC 8's shape.
#include <map>

#include "base/error.hpp"
#include "ops/execution_ops.hpp"
#include "ops/operation.hpp"
#include "shells/shells.hpp"
#include "team/agents.hpp"

namespace team::ops {

namespace {

using shells::Shells;

nlohmann::json or_null(const auto& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// The agent's name without its team ("worker" of "worker@web"): the team is a field of its own.
nlohmann::json agent_name(const ShellRecord& s) {
    if (!s.agent) return nullptr;
    return s.agent->substr(0, s.agent->find('@'));
}

Result list_executions(Request& r) {
    nlohmann::json list = nlohmann::json::array();
    if (!r.core.has_store()) return {{{"executions", list}}};
    Shells shells(r.core.store(), r.core.clock());
    std::map<std::int64_t, nlohmann::json> team_names;
    for (const auto& s : shells.list(false, std::nullopt)) {
        nlohmann::json team = nullptr;
        if (s.team_id) {
            auto [it, fresh] = team_names.try_emplace(*s.team_id, nullptr);
            if (fresh) {
                if (auto t = r.core.teams().find_by_id(*s.team_id)) it->second = t->name;
            }
            team = it->second;
        }
        list.push_back({{"execution_id", s.id},
                        {"team", team},
                        {"agent", agent_name(s)},
                        {"command", s.command},
                        {"started_at", iso8601(s.started_at)},
                        {"pid", or_null(s.pid)},
                        {"metadata",
                         {{"status", str(s.status)},
                          {"cwd", s.cwd},
                          {"agentId", or_null(s.agent)},
                          {"session", or_null(s.session)},
                          {"outputFile", s.output_file},
                          {"timeout", shells::to_json(s)["timeout"]}}}});
    }
    return {{{"executions", list}}};
}

// The shell's record (SPEC 8's Shell JSON) with its execution_id and returncode.
Result execution_status(Request& r) {
    std::string id = r.args.string("id");
    if (!r.core.has_store()) throw not_found("Shell not found: " + id);
    Shells shells(r.core.store(), r.core.clock());
    ShellRecord s = shells.get(id);
    nlohmann::json doc = shells::to_json(s);
    doc["execution_id"] = s.id;
    doc["returncode"] = or_null(shells::returncode_of(s));
    return {doc};
}

// With `agent`: the shell must be one of that agent's, and the agent must be running
// (SPEC 13: 404 unknown agent, 409 agent not running).
void check_owner(Request& r, const ShellRecord& shell, const std::string& name) {
    TeamRecord team = r.team ? *r.team : r.core.team();
    Agents agents(r.core.store(), r.core.clock(), r.core.tmux());
    agents.reconcile(team);
    AgentRecord agent = agents.find(team, name, true);
    if (!agent.live()) {
        throw refused("agent " + quote(agent.name) + " of team " + quote(team.name) +
                      " is not running (" + agent.exit_reason.value_or("ended") + ")");
    }
    if (shell.agent != agent.id_string()) {
        throw not_found("Shell not found: " + shell.id + " is not a shell of agent " +
                        quote(agent.id_string()));
    }
}

Result terminate_execution(Request& r) {
    std::string id = r.args.string("id");
    if (!r.core.has_store()) throw not_found("Shell not found: " + id);
    Shells shells(r.core.store(), r.core.clock());
    ShellRecord shell = shells.get(id);
    if (auto agent = r.args.optional_string("agent"); agent && !agent->empty()) {
        check_owner(r, shell, *agent);
    }
    std::optional<TeamRecord> team;
    if (shell.team_id) team = r.core.teams().find_by_id(*shell.team_id);
    shells::Termination t = shells.terminate(id, r.core.actor(team));
    if (t.error) throw failed("cannot terminate " + id + ": " + *t.error);
    Result result({{"status", t.status},
                   {"execution_id", id},
                   {"returncode", or_null(t.returncode)},
                   {"exitStatus", shells::exit_status_json(t.shell)}});
    return result;
}

const Param kId{.name = "id",
                .help = "the execution: a background shell's id (bg-xxxxxx)",
                .placeholder = "ID",
                .required = true,
                .positional = true,
                .kind = Kind::shell};

}  // namespace

const Operation list_executions_op{
    .name = "list_executions",
    .command = "",  // the command line's `team shell list` shows the same shells
    .no_tool = "SPEC 13's Execution Termination; shell_list is the MCP tool",
    .routes = {{"GET", "/api/executions/running"}},
    .summary = "the running background shells of the whole home, every team's and none",
    .params = {},
    .scope = Scope::none,
    .body = list_executions,
};

const Operation execution_status_op{
    .name = "execution_status",
    .command = "",  // the command line's `team shell status ID`
    .no_tool = "SPEC 13's Execution Termination; shell_status is the MCP tool",
    .routes = {{"GET", "/api/executions/{id}/status"}},
    .summary = "one execution's record: the shell's status document",
    .params = {kId},
    .scope = Scope::none,
    .body = execution_status,
};

const Operation terminate_execution_op{
    .name = "terminate_execution",
    .command = "shell terminate",
    .no_tool = "SPEC 13's Execution Termination; kill_shell is the MCP tool",
    .routes = {{"POST", "/api/executions/{id}/terminate"},
               {"POST", "/api/agents/{agent}/executions/{id}/terminate"}},
    .summary = "end an execution: SIGINT to its whole tree, 5s, then SIGKILL",
    .params = {kId,
               {.name = "agent",
                .help = "only if the shell is one of this running agent's",
                .placeholder = "NAME",
                .kind = Kind::agent}},
    .access = Access::write,
    .scope = Scope::named_team,
    .waits = true,
    .body = terminate_execution,
};

}  // namespace team::ops
