// `team usage [A…] [--since D] [--all]` (SPEC 18): what the agents spend, and the team's sum,
// with their limits (team/usage.hpp).
#include "ops/operation.hpp"
#include "ops/table.hpp"
#include "team/usage.hpp"

namespace team::ops {

namespace {

Result usage(Request& r) {
    std::optional<EpochMs> since;
    if (auto d = r.args.duration("since")) since = r.core.clock().now() - d->count();
    return Result(team_usage(r.core.store(), *r.team, r.args.strings("names"), since,
                             r.args.flag("all"), r.core.clock().now()));
}

}  // namespace

const Operation usage_op{
    .name = "usage",
    .command = "usage",
    .tool = "usage",
    .routes = {{"GET", "/api/teams/{team}/usage"}},
    .summary =
        "what the agents spend: tokens, cost, turns, CPU, memory, wall time, and their "
        "limits; the team's sum",
    .params =
        {
            {.name = "names",
             .type = Type::strings,
             .help = "these agents (default: every live agent, and ended ones that spent)",
             .placeholder = "NAME...",
             .positional = true,
             .kind = Kind::agent},
            {.name = "since",
             .type = Type::duration,
             .help = "only the model calls of this last while (tokens, and their cost at the "
                     "price table's prices)",
             .placeholder = "DUR"},
            {.name = "all",
             .type = Type::boolean,
             .help = "also agents that ended having spent nothing"},
        },
    .access = Access::read,
    .reconcile = true,
    .body = usage,
};

}  // namespace team::ops
