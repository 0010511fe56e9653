// The operation of the audit trail (SPEC 10): list it, or follow it as it grows.
#include "ops/operation.hpp"
#include "ops/table.hpp"
#include "state/activity.hpp"

namespace team::ops {

namespace {

// The entries of the team (--all: of the whole home), oldest first. --follow reports each entry
// as a progress event {entry, team} as it commits, until --limit entries have been reported,
// and returns no document: the stream was the answer. The team of each entry goes to the view,
// for a person's TEAM column.
Result list_activity_op_body(Request& r) {
    std::optional<TeamRecord> team;
    if (!r.args.flag("all")) {
        team = r.core.team();
    } else if (!r.core.has_store()) {
        Result empty{nlohmann::json::array()};
        empty.view = {{"teams", nlohmann::json::array()}};
        return empty;
    }
    std::optional<std::int64_t> team_id;
    if (team) team_id = team->id;
    ActivityQuery query;
    if (auto type = r.args.string("type"); !type.empty()) query.type = type;
    query.since_id = r.args.integer("since").value_or(0);
    auto limit = r.args.integer("limit");
    if (limit) query.limit = static_cast<int>(*limit);
    auto& db = r.core.store().db();

    if (!r.args.flag("follow")) {
        Result result{nlohmann::json::array()};
        result.view = {{"teams", nlohmann::json::array()}};
        for (const auto& e : list_activity(db, team_id, query)) {
            result.doc.push_back(to_json(e));
            result.view["teams"].push_back(e.team.value_or("-"));
        }
        return result;
    }

    AskedWait asked;  // a stopping server ends the follow (base/cancel.hpp)
    auto changes = r.core.watch_changes();
    long long reported = 0;
    for (;;) {
        if (limit) query.limit = static_cast<int>(*limit - reported);
        for (const auto& e : list_activity(db, team_id, query)) {
            if (r.progress) r.progress({{"entry", to_json(e)}, {"team", e.team.value_or("-")}});
            query.since_id = e.id;
            ++reported;
        }
        if (limit && reported >= *limit) return Result(nullptr);
        changes->wait_until(r.core.clock().steady() + std::chrono::seconds(5));
        if (team && !r.core.teams().exists(*team)) {
            throw not_found("team " + quote(team->name) + " was deleted while following it");
        }
    }
}

}  // namespace

const Operation list_activity_op{
    .name = "list_activity",
    .command = "activity",
    .tool = "activity",
    .routes = {{"GET", "/api/teams/{team}/activity"}, {"GET", "/api/activity", "all"}},
    .summary = "the team's audit trail, oldest first",
    .params =
        {
            {.name = "type",
             .help = "only entries of this type (e.g. team_created)",
             .placeholder = "TYPE"},
            {.name = "since",
             .type = Type::integer,
             .help = "only entries after this id (a cursor)",
             .placeholder = "ID"},
            {.name = "limit",
             .type = Type::integer,
             .help = "at most N entries",
             .placeholder = "N",
             .min = 1},
            {.name = "all",
             .type = Type::boolean,
             .help = "every entry of the home: all teams, and shells started outside any team"},
            {.name = "follow",
             .type = Type::boolean,
             .help = "keep printing entries as they arrive (JSON Lines with --json)"},
        },
    .access = Access::read,
    .scope = Scope::none,
    .waits = true,
    .body = list_activity_op_body,
};

}  // namespace team::ops
