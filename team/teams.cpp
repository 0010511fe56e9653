#include "team/teams.hpp"

#include <sys/stat.h>

#include "base/error.hpp"
#include "base/names.hpp"
#include "state/activity.hpp"
#include "state/config_rows.hpp"
#include "state/members.hpp"
#include "state/task_rows.hpp"
#include "state/team_lock.hpp"
#include "state/teams.hpp"
#include "state/worktree_rows.hpp"
#include "team/config.hpp"
#include "team/worktrees.hpp"

namespace team {

namespace {

constexpr size_t kMaxText = 1 << 20;  // 1 MiB, as for message texts (SPEC 5)

}  // namespace

TeamRecord Teams::create(const CreateRequest& request) {
    check_name(request.name, "team name");
    check_name(request.leader, "leader name");
    if (request.description.size() > kMaxText) {
        throw usage_error("the description is longer than 1 MiB");
    }
    struct stat st {};
    if (::stat(request.cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        throw usage_error("--cwd " + quote(request.cwd) + " is not an existing directory");
    }
    std::string cwd = std::filesystem::canonical(request.cwd).string();
    auto repo = Worktrees(store_, clock_).repo_for_team(cwd, request.repo, request.base);
    EpochMs now = clock_.now();
    std::vector<ConfigRow> settings;
    for (const auto& [name, value] : request.settings) {
        const auto& key = config_key(name);
        if (!key.team) throw usage_error("config key " + quote(name) + " is not a team's");
        settings.push_back({std::nullopt, std::string(key.name), key.check(key.name, value), now,
                            request.leader + "@" + request.name});
    }

    TeamRecord t;
    t.name = request.name;
    t.description = request.description;
    t.cwd = cwd;
    t.leader = request.leader;
    t.status = TeamState::active;
    t.created_at = now;
    t.id = store_.write([&] {
        if (active_team_exists(store_, request.name)) {
            throw refused("team " + quote(request.name) + " already exists");
        }
        std::int64_t team_id = insert_team(store_, t);
        insert_leader(store_, team_id, request.leader, cwd, now);
        nlohmann::json details = {{"description", request.description},
                                  {"cwd", cwd},
                                  {"leader", request.leader + "@" + request.name}};
        if (repo) {
            insert_team_repo(store_, team_id, *repo);
            details["repo"] = repo->repo;
            details["base"] = repo->base;
        }
        for (auto& row : settings) {
            row.team_id = team_id;
            save_config(store_, row);
            details[row.key] = row.value;
        }
        append_activity(store_.db(), team_id, now, request.leader + "@" + request.name,
                        "team_created", details);
        return team_id;
    });
    return t;
}

TeamRecord Teams::find(const std::string& name) {
    check_name(name, "team name");
    if (auto t = find_team(store_, name)) return *t;
    throw team_not_found(name, team_names(store_));
}

std::optional<TeamRecord> Teams::find_by_id(std::int64_t id) {
    return find_team_by_id(store_, id);
}

Error team_not_found(const std::string& name, const std::vector<std::string>& known) {
    check_name(name, "team name");
    return not_found("team " + quote(name) + " not found" + did_you_mean(name, known));
}

Error no_team_given(const std::vector<std::string>& live) {
    if (live.empty()) {
        return usage_error(
            "no team given, and there is no live team: create one with 'team create NAME' (a "
            "dissolved team is named explicitly: --team NAME)");
    }
    std::string names;
    for (const auto& t : live) names += (names.empty() ? "" : ", ") + t;
    return usage_error("no team given, and there are " + std::to_string(live.size()) + " teams (" +
                       names + "): name one with --team NAME or TEAM_NAME");
}

TeamRecord Teams::resolve(const std::optional<std::string>& name) {
    if (name) return find(*name);
    auto live = list(false);
    if (live.size() == 1) return live.front();
    std::vector<std::string> names;
    for (const auto& t : live) names.push_back(t.name);
    throw no_team_given(names);
}

std::vector<TeamRecord> Teams::list(bool include_dissolved) {
    return list_teams(store_, include_dissolved);
}

TeamStatus Teams::status(const TeamRecord& team) {
    TeamStatus s{team, load_agents(store_, team, false), count_tasks_by_status(store_, team.id)};
    s.team.open_tasks = s.tasks["pending"] + s.tasks["in_progress"];
    return s;
}

bool Teams::exists(const TeamRecord& team) {
    return team_exists(store_, team.id);
}

void Teams::remove(const TeamRecord& team, const Caller& caller) {
    require_leader(caller, "delete the team");
    TeamLock lock(store_, team.name);
    store_.write([&] {
        int n = count_live_agents(store_, team.id);
        if (n > 0) {
            throw refused("team " + quote(team.name) + " has " + std::to_string(n) + " live agent" +
                          (n == 1 ? "" : "s") + "; stop them first with 'team teardown " +
                          team.name + "'");
        }
        if (!delete_team(store_, team.id)) {
            throw not_found("team " + quote(team.name) + " not found");
        }
    });
}

Caller Teams::resolve_caller(const TeamRecord& team, const std::optional<std::string>& as) {
    std::string name = as && !as->empty() ? *as : team.leader;
    if (auto at = name.find('@'); at != std::string::npos) {
        std::string team_part = name.substr(at + 1);
        name = name.substr(0, at);
        if (team_part != team.name) {
            throw usage_error("caller " + quote(*as) + " belongs to team " + quote(team_part) +
                              ", but this command acts on team " + quote(team.name));
        }
    }
    check_name(name, "agent name");
    if (auto found = find_live_caller(store_, team, name)) return *found;
    throw not_found("caller " + quote(name) + " is not a live member of team " + quote(team.name) +
                    did_you_mean(name, live_member_names(store_.db(), team.id)));
}

void require_leader(const Caller& caller, const std::string& action) {
    if (!caller.is_leader) {
        throw refused("only the team leader can " + action + " (you are " + quote(caller.id()) +
                      ")");
    }
}

}  // namespace team
