// team activity [--type TYPE] [--since ID] [--limit N] [--follow]
#include <CLI/CLI.hpp>

#include "base/error.hpp"
#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "cli/input.hpp"
#include "state/activity.hpp"
#include "state/change_watch.hpp"

namespace team::cli {

namespace {

struct Options {
    std::string type;
    std::int64_t since = 0;
    int limit = 0;
    bool follow = false;
    bool all = false;
};

std::vector<std::string> row(const ActivityEntry& e, EpochMs now) {
    return {std::to_string(e.id),
            relative_time(e.at, now),
            e.team.value_or("-"),
            e.actor,
            e.type,
            cell(e.details.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), 80)};
}

int run(Context& ctx, const Options& o) {
    // --all: every entry of the home (all teams, and shells started outside any team).
    std::optional<TeamRecord> team;
    if (!o.all) {
        team = ctx.team();
    } else if (!ctx.has_store()) {
        ctx.out().json() ? ctx.out().print_json(nlohmann::json::array())
                         : ctx.out().line("no activity");
        return 0;
    }
    std::optional<std::int64_t> team_id;
    if (team) team_id = team->id;
    ActivityQuery query;
    if (!o.type.empty()) query.type = o.type;
    query.since_id = o.since;
    if (o.limit > 0) query.limit = o.limit;
    auto& db = ctx.store().db();
    const auto& out = ctx.out();

    if (!o.follow) {
        auto entries = list_activity(db, team_id, query);
        if (out.json()) {
            nlohmann::json doc = nlohmann::json::array();
            for (const auto& e : entries) doc.push_back(to_json(e));
            out.print_json(doc);
            return 0;
        }
        Table table({"ID", "AT", "TEAM", "ACTOR", "TYPE", "DETAILS"});
        for (const auto& e : entries) table.add(row(e, ctx.clock().now()));
        if (table.empty()) {
            out.line("no activity");
        } else {
            table.print(out);
        }
        return 0;
    }

    // --follow: JSON Lines (or lines) as entries arrive, until interrupted or --limit is met.
    ChangeWatch watch(ctx.store().home());
    int printed = 0;
    for (;;) {
        if (query.limit) query.limit = o.limit - printed;
        for (const auto& e : list_activity(db, team_id, query)) {
            if (out.json()) {
                out.print_json(to_json(e));
            } else {
                auto r = row(e, ctx.clock().now());
                out.line(r[0] + "  " + iso8601(e.at) + "  " + r[2] + "  " + r[3] + "  " +
                         out.bold(r[4]) + "  " + r[5]);
            }
            query.since_id = e.id;
            ++printed;
        }
        if (o.limit > 0 && printed >= o.limit) return 0;
        watch.wait_until(std::chrono::steady_clock::now() + std::chrono::seconds(5));
        if (team && !ctx.teams().exists(*team)) {
            throw not_found("team " + quote(team->name) + " was deleted while following it");
        }
    }
}

}  // namespace

void add_activity_command(CLI::App& app) {
    auto o = std::make_shared<Options>();
    auto* cmd = add_command(app, "activity", "the team's audit trail, oldest first",
                            [o](Context& ctx) { return run(ctx, *o); });
    cmd->add_option("--type", o->type, "only entries of this type (e.g. team_created)")
        ->type_name("TYPE");
    cmd->add_option("--since", o->since, "only entries after this id (a cursor)")
        ->type_name("ID")
        ->check(whole_number(0));
    cmd->add_option("--limit", o->limit, "at most N entries")
        ->type_name("N")
        ->check(whole_number(1));
    cmd->add_flag("--all", o->all,
                  "every entry of the home: all teams, and shells started outside any team");
    cmd->add_flag("--follow", o->follow,
                  "keep printing entries as they arrive (JSON Lines with --json)");
    cmd->footer("Example: team activity --type team_created --json");
}

}  // namespace team::cli
