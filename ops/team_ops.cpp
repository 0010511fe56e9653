// The operations of teams (SPEC 3): create, list, status, delete.
#include <filesystem>

#include "base/time.hpp"
#include "ops/operation.hpp"
#include "ops/table.hpp"
#include "state/worktree_rows.hpp"
#include "team/shutdown.hpp"
#include "tmux/server.hpp"

namespace team::ops {

namespace {

Result create(Request& r) {
    Teams::CreateRequest request;
    request.name = r.args.string("name");
    request.description = r.args.string("description");
    request.cwd = r.args.string("cwd");
    request.leader = r.args.string("leader");
    // The caller becomes the leader: `leader`, else the name the caller goes by, else "leader".
    if (request.leader.empty()) {
        auto as = r.core.identity().as.value_or("leader");
        request.leader = as.substr(0, as.find('@'));
    }
    if (request.cwd.empty()) request.cwd = std::filesystem::current_path().string();
    request.repo = r.args.optional_string("repo");
    request.base = r.args.optional_string("base");
    if (auto n = r.args.integer("max_agents"))
        request.settings.push_back({"max-agents", std::to_string(*n)});
    if (auto usd = r.args.optional_string("max_cost"))
        request.settings.push_back({"max-cost", *usd});
    if (auto check = r.args.optional_string("check")) request.settings.push_back({"check", *check});
    TeamRecord t = r.core.teams().create(request);
    nlohmann::json doc = {
        {"name", t.name}, {"leader", t.leader_id()},      {"createdAt", iso8601(t.created_at)},
        {"cwd", t.cwd},   {"description", t.description}, {"repo", nullptr},
        {"base", nullptr}};
    if (auto repo = load_team_repo(r.core.store(), t.id)) {
        doc["repo"] = repo->repo;
        doc["base"] = repo->base;
        doc["baseName"] = repo->base_name;
    }
    return {doc};
}

Result list(Request& r) {
    nlohmann::json doc = nlohmann::json::array();
    if (r.core.has_store()) {
        for (const auto& t : r.core.teams().list(r.args.flag("all"))) doc.push_back(to_json(t));
    }
    return {doc};
}

Result status(Request& r) {
    // Read again after the reconcile: its counts of live agents may have changed.
    TeamRecord team = r.core.teams().find(r.team->name);
    TeamStatus s = r.core.teams().status(team);
    auto shutdowns = open_requests(r.core.store(), team.id);
    auto socket = tmux::TmuxServer::socket_args(r.core.store().home());
    bool running = tmux::TmuxServer::server_alive(r.core.store().home());
    nlohmann::json doc = to_json(s.team);
    doc["agents"] = nlohmann::json::array();
    for (const auto& a : s.agents) doc["agents"].push_back(to_json(a));
    doc["tasks"] = s.tasks;
    doc["shutdownRequests"] = nlohmann::json::array();
    for (const auto& q : shutdowns) doc["shutdownRequests"].push_back(to_json(q));
    doc["tmux"] = {{"socket", socket[1]}, {"running", running}};
    return {doc};
}

Result remove(Request& r) {
    r.core.teams().remove(*r.team, r.caller());
    return {{{"success", true}, {"name", r.team->name}}};
}

}  // namespace

const Operation create_team_op{
    .name = "create_team",
    .command = "create",
    .tool = "team_create",
    .routes = {{"POST", "/api/teams"}},
    .summary = "make a team; the caller becomes its leader",
    .params = {{.name = "name",
                .help = "the team's name: letters, digits, '_' and '-', at most 64",
                .placeholder = "NAME",
                .required = true,
                .positional = true},
               {.name = "description",
                .type = Type::text,
                .help = "what the team is for ('-': read it from stdin)",
                .placeholder = "TEXT"},
               {.name = "cwd",
                .help = "the team's working directory, where agents start (default: the current "
                        "directory)",
                .placeholder = "DIR",
                .kind = Kind::dir},
               {.name = "leader",
                .help = "the leader's member name (default: the caller's name from --as or "
                        "TEAM_AGENT_ID, else leader)",
                .placeholder = "NAME"},
               {.name = "repo",
                .help = "the git repository whose worktrees agents get with spawn --worktree "
                        "(default: the one holding the team's directory, if any)",
                .placeholder = "PATH",
                .kind = Kind::file},
               {.name = "base",
                .help = "where agents' branches start: a branch, tag or commit (default: the "
                        "checkout's HEAD), recorded as a commit",
                .placeholder = "REF"},
               {.name = "max_agents",
                .type = Type::integer,
                .help = "the most live agents it may have: a spawn beyond them is refused "
                        "(later: team config set max-agents N)",
                .placeholder = "N",
                .min = 1},
               {.name = "max_cost",
                .help = "the most its agents may spend, in US dollars: at 100 % they are stopped "
                        "and spawns refused (later: team config set max-cost USD)",
                .placeholder = "USD"},
               {.name = "check",
                .help = "the team's check: a command run through sh on each branch team land "
                        "brings in; exit 0 lets it land (later: team config set check CMD)",
                .placeholder = "CMD"}},
    .access = Access::write,
    .scope = Scope::none,
    .body = create,
};

const Operation list_teams_op{
    .name = "list_teams",
    .command = "list",
    .tool = "team_list",
    .routes = {{"GET", "/api/teams"}},
    .summary = "all teams: name, live agents/total, open tasks, created",
    .params = {{.name = "all", .type = Type::boolean, .help = "also list dissolved teams"}},
    .access = Access::read,
    .scope = Scope::none,
    .body = list,
};

const Operation team_status_op{
    .name = "team_status",
    .command = "status",
    .tool = "team_status",
    .routes = {{"GET", "/api/teams/{team}"}},
    .summary =
        "the team, its leader, its live agents (checked against tmux and the OS), its task "
        "counts, open shutdown requests and its tmux server",
    .params = {{.name = "name",
                .help = "the team (default: --team, TEAM_NAME, or the only live team)",
                .placeholder = "NAME",
                .positional = true,
                .kind = Kind::team}},
    .access = Access::read,
    .reconcile = true,
    .team_param = "name",
    .body = status,
};

const Operation delete_team_op{
    .name = "delete_team",
    .command = "delete",
    .no_tool =
        "not in SPEC 12: a team is deleted by a person, from the command line or the dashboard",
    .routes = {{"DELETE", "/api/teams/{team}"}},
    .summary = "remove a team that has no live agent, with all its records",
    .params = {{.name = "name",
                .help = "the team to delete",
                .placeholder = "NAME",
                .required = true,
                .positional = true,
                .kind = Kind::team}},
    .access = Access::write,
    .leader_only = true,
    .leader_action = "delete the team",
    .team_param = "name",
    .body = remove,
};

}  // namespace team::ops
