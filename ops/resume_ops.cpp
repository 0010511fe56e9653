// `team resume [A… | --all] [--dry-run]` (SPEC 19): lost agents started again, each with its
// conversation (team/resume.hpp). Agents of another home of the store (SPEC 16) are resumed by
// that host's own team, through the home's link to it; a host lost with its agents is first
// checked (`team host check`), which takes it back when it answers.
#include <map>

#include "base/error.hpp"
#include "base/programs.hpp"
#include "hosts/keeper.hpp"
#include "hosts/link.hpp"
#include "ops/operation.hpp"
#include "ops/table.hpp"
#include "state/host_rows.hpp"
#include "team/agents.hpp"

namespace team::ops {

namespace {

using json = nlohmann::json;

// The outcomes of the agents of one other home, resumed there by its own team.
std::vector<json> resume_on_host(Core& core, const TeamRecord& team, const std::string& home_id,
                                 const std::vector<std::string>& names, bool dry_run) {
    auto failed_all = [&](const std::string& why, const std::optional<std::string>& host) {
        std::vector<json> out;
        for (const auto& n : names) {
            ResumeOutcome o;
            o.name = n;
            o.outcome = "failed";
            o.why = why;
            o.host = host;
            auto j = to_json(o);
            j["team"] = team.name;
            out.push_back(j);
        }
        return out;
    };
    Store& store = core.store();
    auto host = find_host_by_home(store, home_id);
    if (!host) return failed_all("its home (" + home_id + ") is not a host of the store", {});
    if (host->lost_at && !dry_run) {
        // Back after a crash: the check takes a host that answers, with nothing left live, back.
        auto check = invoke(core, check_host_op, {{"name", host->name}}, Naming::json);
        auto fresh = find_host(store, host->name);
        if (!fresh || fresh->lost_at) {
            std::string why = check.doc.value("error", std::string("it is still lost"));
            return failed_all("host " + host->name + " is lost and was not taken back: " + why +
                                  " (resume again once it answers)",
                              host->name);
        }
    }
    json request = {{"op", resume_op.name},
                    {"values", {{"names", names}, {"dry_run", dry_run}}},
                    {"team", team.name},
                    {"as", core.identity().as ? json(*core.identity().as) : json(nullptr)},
                    {"via", core.identity().via ? json(*core.identity().via) : json(nullptr)}};
    json reply;
    try {
        reply =
            hosts::call(core.home(), {host->name, host->ssh, host->team_path}, own_binary(),
                        request, std::chrono::seconds(15 + 12 * static_cast<int>(names.size())));
    } catch (const hosts::Unreachable& e) {
        return failed_all(std::string(e.what()) + " (nothing was done there)", host->name);
    }
    if (reply.contains("error") && reply["error"].is_string())
        return failed_all(reply["error"].get<std::string>(), host->name);
    std::vector<json> out;
    for (auto a : reply.value("doc", json::object()).value("agents", json::array())) {
        a["host"] = host->name;
        out.push_back(a);
    }
    return out;
}

Result resume(Request& r) {
    ResumeAsk ask;
    ask.names = r.args.strings("names");
    ask.all = r.args.flag("all");
    ask.dry_run = r.args.flag("dry_run");
    // --all with no team named: every team of the home (what the login unit runs).
    std::vector<TeamRecord> teams;
    const auto& id = r.core.identity();
    if (ask.all && !id.team && !id.as) {
        if (r.core.has_store()) teams = r.core.teams().list(false);
    } else {
        teams.push_back(r.core.team());
    }
    json agents = json::array();
    bool started_here = false;
    int failures = 0;
    for (const auto& team : teams) {
        Agents core_agents(r.core.store(), r.core.clock(), r.core.tmux());
        auto outcomes = core_agents.resume(team, r.core.caller(team), ask);
        std::map<std::string, std::vector<std::string>> elsewhere;  // home id → names
        for (const auto& o : outcomes) {
            if (o.outcome == "elsewhere") {
                elsewhere[*o.home_id].push_back(o.name);
                continue;
            }
            if (o.outcome == "resumed" || o.outcome == "fresh") started_here = !ask.dry_run;
            if (o.outcome == "failed") ++failures;
            auto j = to_json(o);
            j["team"] = team.name;
            agents.push_back(j);
        }
        for (const auto& [home_id, names] : elsewhere) {
            for (auto& j : resume_on_host(r.core, team, home_id, names, ask.dry_run)) {
                if (j.value("outcome", "") == "failed") ++failures;
                agents.push_back(j);
            }
        }
    }
    json doc = {{"dryRun", ask.dry_run}, {"agents", agents}};
    // On a host of the store (SPEC 16), its keeper holds the host's lease while agents run here.
    if (started_here && r.core.store().engine() == Db::Engine::postgresql) {
        auto keeper = hosts::ensure_keeper(r.core.store(), own_binary());
        if (!keeper.empty()) doc["warning"] = keeper;
    }
    if (failures == 0) return Result(doc);
    // The outcomes all the same (the printer shows them, then the error).
    auto error = failed(std::to_string(failures) + " agent" + (failures == 1 ? "" : "s") +
                        " could not be started again (see each one's why)");
    return Result(error_document(error, doc), exit_code(ErrorCode::failed));
}

}  // namespace

const Operation resume_op{
    .name = "resume",
    .command = "resume",
    .tool = "agent_resume",
    .routes = {{"POST", "/api/teams/{team}/resume"}},
    .summary =
        "leader only: start lost agents again under their names, in their worktrees, "
        "with their conversations and inboxes, and the tasks nobody took meanwhile",
    .params =
        {
            {.name = "names",
             .type = Type::strings,
             .help = "these agents (also one stopped on purpose)",
             .placeholder = "NAME...",
             .positional = true,
             .kind = Kind::agent},
            {.name = "all",
             .type = Type::boolean,
             .help = "every agent the team lost (its tmux server or the machine went down); "
                     "with no team given, of every team of the home"},
            {.name = "dry_run",
             .type = Type::boolean,
             .help = "only say what would start, with what conversation, or why not"},
        },
    .access = Access::write,
    .scope = Scope::none,
    .waits = true,
    .body = resume,
};

}  // namespace team::ops
