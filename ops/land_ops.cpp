// `team land [A…] [--check CMD] [--into REF] [--strategy merge|squash|rebase]
// [--stop-on-failure] [--dry-run]` and `team lands` (SPEC 20): the team's merge queue, and what
// its last lands did. The rules are team/land.hpp's.
#include "ops/operation.hpp"
#include "ops/table.hpp"
#include "team/land.hpp"

namespace team::ops {

namespace {

using json = nlohmann::json;

const std::vector<std::string>& strategy_choices() {
    static const std::vector<std::string> words{"merge", "squash", "rebase"};
    return words;
}

Result land(Request& r) {
    LandAsk ask;
    ask.agents = r.args.strings("names");
    if (auto c = r.args.optional_string("check")) ask.check = c;
    if (auto into = r.args.optional_string("into"); into && !into->empty()) ask.into = into;
    if (auto s = r.args.optional_string("strategy"); s && !s->empty()) ask.strategy = *s;
    ask.check_timeout = r.args.duration("check_timeout");
    ask.stop_on_failure = r.args.flag("stop_on_failure");
    ask.dry_run = r.args.flag("dry_run");
    json doc = Land(r.core.store(), r.core.clock()).run(*r.team, r.caller(), ask, r.progress);
    int failures = doc.value("failed", 0);
    if (failures == 0) return Result(doc);
    // Every row all the same (the printer shows them, then the error).
    auto error = failed(std::to_string(failures) + " branch" + (failures == 1 ? "" : "es") +
                        " did not land (see each one's row)");
    return Result(error_document(error, doc), exit_code(ErrorCode::failed));
}

Result lands(Request& r) {
    auto n = r.args.integer("limit").value_or(5);
    return Result(Land(r.core.store(), r.core.clock()).history(*r.team, static_cast<int>(n)));
}

}  // namespace

const Operation land_op{
    .name = "land",
    .command = "land",
    .tool = "land",
    .routes = {{"POST", "/api/teams/{team}/land"}},
    .summary =
        "leader only: land agents' branches one at a time onto the target, each kept only if "
        "the team's check passes on the result (a merge queue of the team's own)",
    .params =
        {
            {.name = "names",
             .type = Type::strings,
             .help = "these agents' branches, in this order (default: every worktree agent "
                     "that has ended or is idle with commits ahead, in the order they finished)",
             .placeholder = "NAME...",
             .positional = true,
             .kind = Kind::agent},
            {.name = "check",
             .help = "the check, run through sh in the scratch worktree (default: the team's, "
                     "team create --check / team config set check)",
             .placeholder = "CMD"},
            {.name = "into",
             .help = "the branch to land on (default: the team's base branch)",
             .placeholder = "BRANCH"},
            {.name = "strategy",
             .help = "merge (a merge commit), squash (one commit) or rebase (the branch's "
                     "commits replayed)",
             .placeholder = "STRATEGY",
             .default_text = "merge",
             .choices = strategy_choices},
            {.name = "check_timeout",
             .type = Type::duration,
             .help = "how long the check may run before its tree is killed (default: the "
                     "team's check-timeout, 30m)",
             .placeholder = "DUR"},
            {.name = "stop_on_failure",
             .type = Type::boolean,
             .help = "stop the queue at the first conflict or red check (the rest skipped)"},
            {.name = "dry_run",
             .type = Type::boolean,
             .help = "only say which branches would land, conflict or be skipped (no check is "
                     "run, nothing changes)"},
        },
    .access = Access::write,
    .leader_only = true,
    .leader_action = "land branches",
    .waits = true,
    .body = land,
};

const Operation lands_op{
    .name = "lands",
    .command = "lands",
    .tool = "land_history",
    .routes = {{"GET", "/api/teams/{team}/lands"}},
    .summary =
        "the team's last lands, newest first, each branch's row (as it goes, while one runs)",
    .params = {{.name = "limit",
                .type = Type::integer,
                .help = "how many lands",
                .placeholder = "N",
                .default_text = "5",
                .min = 1}},
    .access = Access::read,
    .body = lands,
};

}  // namespace team::ops
