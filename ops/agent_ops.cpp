// The operations of agents (SPEC 4).
#include "ops/operation.hpp"
#include "ops/table.hpp"
#include "tasks/tasks.hpp"
#include "team/agents.hpp"

namespace team::ops {

namespace {

Result list_agents(Request& r) {
    const TeamRecord& team = *r.team;
    Agents agents(r.core.store(), r.core.clock(), r.core.tmux());
    nlohmann::json doc = nlohmann::json::array();
    for (const auto& a : agents.list(team, r.args.flag("all"))) doc.push_back(to_json(a));
    Result result{doc};
    result.view = {{"all", r.args.flag("all")},
                   {"openTasks", tasks::open_by_owner(r.core.store().db(), team.id)}};
    return result;
}

}  // namespace

const Operation list_agents_op{
    .name = "list_agents",
    .command = "agents",
    .summary = "the team's live agents: name, status, pane, pid, colour, open tasks, age",
    .params = {{.name = "all", .type = Type::boolean, .help = "also list terminated agents"}},
    .access = Access::read,
    .body = list_agents,
};

}  // namespace team::ops
