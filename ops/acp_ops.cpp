// The operations of ACP agents (SPEC 15): cancel a turn, list and answer permission requests.
// A prompt to an ACP agent is `prompt` (ops/agent_ops.cpp), its transcript `logs`
// (ops/log_ops.cpp); the rules are team/acp_agents.hpp's.
#include "ops/operation.hpp"
#include "ops/table.hpp"
#include "team/acp_agents.hpp"
#include "team/agents.hpp"

namespace team::ops {

namespace {

Result cancel_turn(Request& r) {
    Agents agents(r.core.store(), r.core.clock(), r.core.tmux());
    AgentRecord agent = agents.find(*r.team, r.args.string("name"));
    bool cancelled = AcpAgents(r.core.store(), r.core.clock()).cancel(*r.team, r.caller(), agent);
    return Result({{"success", true}, {"agentId", agent.id_string()}, {"cancelled", cancelled}});
}

Result list_permissions(Request& r) {
    nlohmann::json doc = nlohmann::json::array();
    for (const auto& p :
         AcpAgents(r.core.store(), r.core.clock()).permissions(*r.team, r.args.flag("all")))
        doc.push_back(to_json(p, r.team->name));
    return Result(doc);
}

std::int64_t permission_id(const Args& args) {
    return *args.integer("id");
}

Result answer_with(Request& r, const PermissionAnswer& answer) {
    auto row = AcpAgents(r.core.store(), r.core.clock())
                   .answer(*r.team, r.caller(), permission_id(r.args), answer);
    return Result({{"success", true},
                   {"id", row.id},
                   {"agentId", row.agent + "@" + r.team->name},
                   {"answer", *row.answer}});
}

Result answer_permission(Request& r) {
    PermissionAnswer answer;
    answer.option = r.args.optional_string("option");
    if (answer.option && answer.option->empty()) answer.option.reset();
    answer.decision = r.args.string("decision");
    answer.always = r.args.flag("always");
    if (answer.option && !answer.decision.empty()) {
        throw usage_error("name an option or a decision, not both");
    }
    if (!answer.option && answer.decision != "allow" && answer.decision != "deny") {
        throw usage_error(answer.decision.empty()
                              ? "name the option to choose, or " + r.args.label("decision") +
                                    " allow|deny"
                              : "unknown decision " + quote(answer.decision) + ": allow or deny");
    }
    return answer_with(r, answer);
}

Result allow_permission(Request& r) {
    return answer_with(r, {std::nullopt, "allow", r.args.flag("always")});
}

Result deny_permission(Request& r) {
    return answer_with(r, {std::nullopt, "deny", r.args.flag("always")});
}

const Param kIdParam{.name = "id",
                     .type = Type::integer,
                     .help = "the request's id (team permission list)",
                     .placeholder = "ID",
                     .required = true,
                     .positional = true,
                     .min = 1};

}  // namespace

const Operation cancel_turn_op{
    .name = "cancel_turn",
    .command = "cancel",
    .tool = "agent_cancel",
    .routes = {{"POST", "/api/teams/{team}/agents/{name}/cancel"}},
    .summary =
        "leader only: cancel an ACP agent's turn under way (session/cancel; its open "
        "permission requests answered cancelled; its tree ended if no stop reason comes "
        "within 10 s)",
    .params = {{.name = "name",
                .help = "the ACP agent",
                .placeholder = "NAME",
                .required = true,
                .positional = true,
                .kind = Kind::agent}},
    .access = Access::write,
    .leader_only = true,
    .leader_action = "cancel agents' turns",
    .reconcile = true,
    .body = cancel_turn,
};

const Operation list_permissions_op{
    .name = "list_permissions",
    .command = "permission list",
    .tool = "permission_list",
    .routes = {{"GET", "/api/teams/{team}/permissions"}},
    .summary =
        "the ACP agents' permission requests waiting for an answer (--all: answered ones "
        "too)",
    .params = {{.name = "all",
                .type = Type::boolean,
                .help = "also those answered, cancelled or expired"}},
    .body = list_permissions,
};

const Operation answer_permission_op{
    .name = "answer_permission",
    .command = "permission answer",
    .tool = "permission_answer",
    .routes = {{"POST", "/api/teams/{team}/permissions/{id}"}},
    .summary =
        "leader only: answer an ACP agent's permission request with one of its options, "
        "or a decision (allow, deny)",
    .params = {kIdParam,
               {.name = "option",
                .help = "the optionId to choose (one of the request's options)",
                .placeholder = "OPTION",
                .positional = true},
               {.name = "decision",
                .help = "allow or deny: the agent's allow_* or reject_* option, instead of "
                        "naming one",
                .placeholder = "DECISION"},
               {.name = "always",
                .type = Type::boolean,
                .help = "with a decision: its _always option where the agent offers one"}},
    .access = Access::write,
    .leader_only = true,
    .leader_action = "answer permission requests",
    .body = answer_permission,
};

const Operation allow_permission_op{
    .name = "allow_permission",
    .command = "permission allow",
    .no_tool = "permission_answer with decision allow",
    .no_route = "POST /api/teams/{team}/permissions/{id} with {\"decision\": \"allow\"}",
    .summary =
        "leader only: allow an ACP agent's permission request (its allow_once option; "
        "--always: allow_always)",
    .params = {kIdParam,
               {.name = "always", .type = Type::boolean, .help = "choose its allow_always option"}},
    .access = Access::write,
    .leader_only = true,
    .leader_action = "answer permission requests",
    .body = allow_permission,
};

const Operation deny_permission_op{
    .name = "deny_permission",
    .command = "permission deny",
    .no_tool = "permission_answer with decision deny",
    .no_route = "POST /api/teams/{team}/permissions/{id} with {\"decision\": \"deny\"}",
    .summary =
        "leader only: deny an ACP agent's permission request (its reject_once option, "
        "never `cancelled`; --always: reject_always)",
    .params = {kIdParam,
               {.name = "always",
                .type = Type::boolean,
                .help = "choose its reject_always option"}},
    .access = Access::write,
    .leader_only = true,
    .leader_action = "answer permission requests",
    .body = deny_permission,
};

}  // namespace team::ops
