// One agent's record (SPEC 4's agent JSON), for the HTTP API's GET /api/teams/T/agents/NAME: the
// live agent of that name, else the newest record of it (how it ended), with what a row of the
// list carries (ops/agent_rows.hpp: host, worktree, acp).
#include "ops/agent_rows.hpp"
#include "ops/operation.hpp"
#include "ops/table.hpp"
#include "team/agents.hpp"

namespace team::ops {

namespace {

Result show_agent(Request& r) {
    Agents agents(r.core.store(), r.core.clock(), r.core.tmux());
    auto agent = agents.find(*r.team, r.args.string("name"), true);
    return Result(agent_rows(r.core, *r.team, {agent})[0]);
}

}  // namespace

const Operation show_agent_op{
    .name = "show_agent",
    .command = "",  // `team agents --all` lists it among the others
    .no_tool = "not in SPEC 12: agent_list gives every agent",
    .routes = {{"GET", "/api/teams/{team}/agents/{name}"}},
    .summary = "one agent: the live one of that name, else its newest record",
    .params = {{.name = "name",
                .help = "the agent",
                .placeholder = "NAME",
                .required = true,
                .positional = true,
                .kind = Kind::agent}},
    .access = Access::read,
    .reconcile = true,
    .body = show_agent,
};

}  // namespace team::ops
