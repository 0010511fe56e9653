// `team wait A… --until STATE [--any] [--timeout D]` (SPEC 17): until the agents are in that
// activity (team/agent_wait.hpp).
#include "base/duration.hpp"
#include "ops/operation.hpp"
#include "ops/table.hpp"
#include "team/agent_activity.hpp"
#include "team/agent_wait.hpp"

namespace team::ops {

namespace {

Result wait_agents(Request& r) {
    AgentWaitRequest w;
    w.names = r.args.strings("names");
    w.until = r.args.string("until");
    w.any = r.args.flag("any");
    if (r.args.has("timeout")) w.timeout = r.args.duration("timeout");
    auto out = wait_for_agents(r.core.store(), *r.team, w);
    nlohmann::json doc = {{"success", out.reached},
                          {"until", w.until},
                          {"any", w.any},
                          {"reached", out.reached},
                          {"agents", out.agents}};
    if (out.reached) return Result(doc);
    doc["error"] = std::string(w.any ? "no agent" : "not every agent") + " was " + w.until +
                   " after " + format_duration(*w.timeout);
    doc["code"] = code_name(ErrorCode::timeout);
    return Result(doc, 124);
}

}  // namespace

const Operation wait_agents_op{
    .name = "wait_agents",
    .command = "wait",
    .tool = "agent_wait",
    .routes = {{"POST", "/api/teams/{team}/wait"}},
    .summary = "wait until the agents are working, waiting (for a person), idle or ended",
    .params =
        {
            {.name = "names",
             .type = Type::strings,
             .help = "the agents",
             .placeholder = "NAME...",
             .required = true,
             .positional = true,
             .kind = Kind::agent},
            {.name = "until",
             .help = "working, waiting, idle or ended",
             .placeholder = "STATE",
             .required = true,
             .choices = activity_states},
            {.name = "any",
             .type = Type::boolean,
             .help = "return when one of them is (else: when all are)"},
            {.name = "timeout",
             .type = Type::duration,
             .help = "how long at most (exit 124); none: no limit",
             .placeholder = "DUR"},
        },
    .access = Access::read,
    .waits = true,
    .reconcile = true,
    .body = wait_agents,
};

}  // namespace team::ops
