// The operations of worktrees (SPEC 14): an agent's diff and merge, and the kept worktrees
// (list, restore, rm, gc, repair). The rules are team/worktrees.hpp's.
#include "ops/operation.hpp"
#include "ops/table.hpp"
#include "team/worktrees.hpp"

namespace team::ops {

namespace {

Worktrees worktrees(Request& r) {
    return Worktrees(r.core.store(), r.core.clock());
}

const Param kAgent{.name = "name",
                   .help = "the agent whose worktree it is (live or ended)",
                   .placeholder = "NAME",
                   .required = true,
                   .positional = true,
                   .kind = Kind::agent};

Result diff(Request& r) {
    return {
        worktrees(r).diff(*r.team, r.args.string("name"), r.args.flag("stat"), r.args.flag("wip"))};
}

Result merge_with(Request& r, bool check_only) {
    Worktrees::MergeAsk ask;
    ask.agent = r.args.string("name");
    if (auto into = r.args.optional_string("into"); into && !into->empty()) ask.into = into;
    if (auto s = r.args.optional_string("strategy"); s && !s->empty()) ask.strategy = *s;
    ask.check_only = check_only || r.args.flag("check");
    nlohmann::json doc = worktrees(r).merge(*r.team, r.caller(), ask);
    // A check that finds conflicts answers in its shape, refused (SPEC 1.4's code 4).
    bool clean = doc["check"]["clean"] == true;
    doc["success"] = clean;
    return {doc, clean ? 0 : 4};
}

Result merge(Request& r) {
    return merge_with(r, false);
}

Result merge_check(Request& r) {
    return merge_with(r, true);
}

Result list(Request& r) {
    return {worktrees(r).list(*r.team, r.args.flag("all"))};
}

Result restore(Request& r) {
    return {worktrees(r).restore(*r.team, r.args.string("name"), r.args.optional_string("ref"))};
}

Result remove(Request& r) {
    bool discard = r.args.flag("discard");
    // SPEC 14: a discard is a person's decision at a terminal, never a tool's or a page's.
    if (discard && r.args.naming() != Naming::cli) {
        throw refused("discard is for the command line only (team worktree rm NAME --discard)");
    }
    return {worktrees(r).remove(*r.team, r.caller(), r.args.string("name"), discard)};
}

Result gc(Request& r) {
    return {worktrees(r).gc(*r.team, r.args.flag("dry_run"))};
}

Result repair(Request& r) {
    return {worktrees(r).repair(*r.team)};
}

const Param kInto{.name = "into",
                  .help = "the branch to merge into (default: the team's base branch)",
                  .placeholder = "BRANCH"};
const Param kStrategy{.name = "strategy",
                      .help = "merge, squash, rebase or ff",
                      .placeholder = "STRATEGY",
                      .default_text = "merge"};

}  // namespace

const Operation diff_agent_op{
    .name = "diff_agent",
    .command = "diff",
    .tool = "diff",
    .routes = {{"GET", "/api/teams/{team}/agents/{name}/diff"}},
    .summary = "what the agent's branch changed since its base (--wip: its uncommitted work)",
    .params = {kAgent,
               {.name = "stat", .type = Type::boolean, .help = "only the files and line counts"},
               {.name = "wip",
                .type = Type::boolean,
                .help = "the uncommitted work in its worktree (untracked files too) against its "
                        "HEAD"}},
    .access = Access::read,
    .body = diff,
};

const Operation merge_agent_op{
    .name = "merge_agent",
    .command = "merge",
    .tool = "merge",
    .routes = {{"POST", "/api/teams/{team}/agents/{name}/merge"}},
    .summary =
        "leader only: bring the agent's branch into the base branch (checked first: "
        "conflicting files named, nothing changed)",
    .params = {kAgent,
               kInto,
               kStrategy,
               {.name = "check",
                .type = Type::boolean,
                .help = "only check: would it merge cleanly? Nothing is changed"}},
    .access = Access::write,
    .leader_only = true,
    .leader_action = "merge agents' branches",
    .body = merge,
};

const Operation merge_check_op{
    .name = "merge_check",
    .command = "",  // `team merge NAME --check`
    .tool = "merge_check",
    .routes = {{"GET", "/api/teams/{team}/agents/{name}/merge-check"}},
    .summary = "whether the agent's branch merges cleanly into the base branch (nothing changed)",
    .params = {kAgent, kInto, kStrategy},
    .access = Access::read,
    .body = merge_check,
};

const Operation list_worktrees_op{
    .name = "list_worktrees",
    .command = "worktree list",
    .tool = "worktree_list",
    .routes = {{"GET", "/api/teams/{team}/worktrees"}},
    .summary = "the team's kept worktrees: agent, branch, state, changes, snapshots",
    .params = {{.name = "all", .type = Type::boolean, .help = "also those removed or discarded"}},
    .access = Access::read,
    .reconcile = true,
    .body = list,
};

const Operation restore_worktree_op{
    .name = "restore_worktree",
    .command = "worktree restore",
    .tool = "worktree_restore",
    .routes = {{"POST", "/api/teams/{team}/worktrees/{name}/restore"}},
    .summary =
        "leader only: bring a snapshot back into the agent's clean worktree, exactly "
        "(staged stays staged)",
    .params = {kAgent,
               {.name = "ref",
                .help = "the snapshot: refs/team/snapshots/TEAM/NAME/N or N (default: the "
                        "newest)",
                .placeholder = "REF"}},
    .access = Access::write,
    .leader_only = true,
    .leader_action = "restore worktrees",
    .body = restore,
};

const Operation remove_worktree_op{
    .name = "remove_worktree",
    .command = "worktree rm",
    .tool = "worktree_remove",
    .routes = {{"DELETE", "/api/teams/{team}/worktrees/{name}"}},
    .summary =
        "leader only: remove a worktree that holds nothing to lose (clean, merged, no "
        "process in it); else refused, saying why",
    .params = {kAgent,
               {.name = "discard",
                .type = Type::boolean,
                .help = "command line only: snapshot its work and move it into "
                        "$TEAM_HOME/trash instead"}},
    .access = Access::write,
    .leader_only = true,
    .leader_action = "remove worktrees",
    .body = remove,
};

const Operation gc_worktrees_op{
    .name = "gc_worktrees",
    .command = "worktree gc",
    .tool = "worktree_gc",
    .routes = {{"POST", "/api/teams/{team}/worktrees/gc"}},
    .summary = "leader only: remove every worktree of an ended agent that holds nothing to lose",
    .params = {{.name = "dry_run",
                .type = Type::boolean,
                .help = "say what would go, remove nothing"}},
    .access = Access::write,
    .leader_only = true,
    .leader_action = "collect worktrees",
    .body = gc,
};

const Operation repair_worktrees_op{
    .name = "repair_worktrees",
    .command = "worktree repair",
    .tool = "worktree_repair",
    .routes = {{"POST", "/api/teams/{team}/worktrees/repair"}},
    .summary =
        "leader only: reconcile the records with git (a spawn cut short, a worktree "
        "moved), and take the snapshots still owed",
    .params = {},
    .access = Access::write,
    .leader_only = true,
    .leader_action = "repair worktrees",
    .body = repair,
};

}  // namespace team::ops
