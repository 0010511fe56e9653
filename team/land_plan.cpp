// The branches a land takes, and the finish of a land that was killed (team/land.hpp).
#include <algorithm>
#include <map>
#include <set>

#include "base/error.hpp"
#include "base/names.hpp"
#include "git/land.hpp"
#include "shells/shells.hpp"
#include "state/activity.hpp"
#include "state/agent_activity_rows.hpp"
#include "state/members.hpp"
#include "state/worktree_rows.hpp"
#include "team/land_parts.hpp"
#include "team/worktree_parts.hpp"

namespace team::land_parts {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string short_commit(const std::string& commit) {
    return commit.substr(0, 12);
}

// The newest worktree row of each agent name (kept ones, or with `all` removed ones too).
std::map<std::string, WorktreeRow> newest_worktrees(Store& store, std::int64_t team_id, bool all) {
    std::map<std::string, WorktreeRow> out;
    for (auto& row : team_worktrees(store, team_id, all)) {
        if (row.state == "discarded") continue;
        out[row.agent] = row;  // oldest first: the newest stays
    }
    return out;
}

Pick pick_of(Store& store, const git::Repository& repo, const WorktreeRow& row) {
    Pick p;
    p.agent = row.agent;
    p.agent_id = row.agent_id;
    p.branch = row.branch;
    p.tip = git::commit_of(repo, "refs/heads/" + row.branch);
    if (row.agent_id) {
        if (auto a = load_agent(store, *row.agent_id)) {
            p.live = a->live();
            p.finished = a->terminated_at.value_or(0);
        }
    }
    if (p.tip.empty()) p.skip = "its branch " + quote(row.branch) + " is gone";
    return p;
}

// A path with its symbolic links resolved, as git records a worktree's and a shell its
// directory (the home may be named through a link); as given when that fails.
fs::path resolved(const fs::path& path) {
    std::error_code ec;
    fs::path out = fs::weakly_canonical(path, ec);
    return ec ? path : out;
}

}  // namespace

fs::path land_dir(const Store& store) {
    return resolved(store.home() / "land");
}

std::optional<std::string> nothing_to_land(Store& store, const git::Repository& repo,
                                           const std::string& branch, const std::string& tip,
                                           const std::string& onto, const std::string& into) {
    if (git::is_ancestor(repo, tip, onto)) {
        return quote(into) + " has every commit of " + quote(branch) + " already";
    }
    for (const auto& landed : landed_items(store, branch, tip)) {
        if (landed.candidate && git::is_ancestor(repo, *landed.candidate, onto)) {
            return "landed already, as " + short_commit(*landed.candidate) + " on " + quote(into);
        }
    }
    return std::nullopt;
}

std::vector<Pick> pick_branches(Store& store, const git::Repository& repo, const TeamRecord& team,
                                const std::vector<std::string>& names,
                                const std::string& into_tip) {
    std::vector<Pick> out;
    if (!names.empty()) {
        auto rows = newest_worktrees(store, team.id, true);
        std::set<std::string> seen;
        for (const auto& name : names) {
            check_name(name, "agent name");
            if (!seen.insert(name).second)
                throw usage_error("agent " + quote(name) + " is named twice");
            auto it = rows.find(name);
            if (it == rows.end() || it->second.state == "creating") {
                std::vector<std::string> known;
                bool exists = false;
                for (const auto& a : load_agents(store, team, true)) {
                    if (a.is_leader) continue;
                    known.push_back(a.name);
                    exists = exists || a.name == name;
                }
                if (!exists) {
                    throw not_found("no agent " + quote(name) + " in team " + quote(team.name) +
                                    did_you_mean(name, known));
                }
                throw refused("agent " + quote(name) +
                              " has no worktree: team land takes the branches of agents spawned "
                              "with --worktree");
            }
            out.push_back(pick_of(store, repo, it->second));
        }
        return out;
    }
    auto activity = team_agent_activity(store, team.id);
    for (const auto& [name, row] : newest_worktrees(store, team.id, false)) {
        Pick p = pick_of(store, repo, row);
        if (p.skip) continue;
        if (p.live) {
            auto a = p.agent_id ? activity.find(*p.agent_id) : activity.end();
            if (a == activity.end() || a->second.state != "idle") continue;  // still at work
            p.finished = a->second.since;
        }
        if (git::commits_ahead(repo, into_tip, p.tip) == 0) continue;
        if (nothing_to_land(store, repo, p.branch, p.tip, into_tip, "")) continue;
        out.push_back(p);
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const Pick& a, const Pick& b) { return a.finished < b.finished; });
    return out;
}

json row_of(const LandItemRow& item, const std::string& outcome) {
    json row = {
        {"agent", item.agent}, {"branch", item.branch}, {"tip", item.tip}, {"outcome", outcome}};
    // Under way: what it was brought onto and which shell checks it.
    if (!item.decided_at) {
        if (item.onto) row["onto"] = *item.onto;
        if (item.shell_id) row["shellId"] = *item.shell_id;
    }
    return row;
}

json recover(Store& store, const Clock& clock, const git::Repository& repo,
             const TeamRecord& team) {
    json out = json::array();
    shells::Shells shells(store, clock);
    for (const auto& land : running_lands(store, team.id)) {
        // Checks still running in its scratch worktree (recorded or not yet) are ended first.
        if (land.scratch) {
            fs::path scratch = resolved(*land.scratch);
            for (const auto& sh : shells.list(false, std::nullopt)) {
                if (sh.team_id != team.id) continue;
                fs::path cwd = sh.cwd;
                if (cwd == scratch || cwd.string().rfind(scratch.string() + "/", 0) == 0) {
                    shells.terminate(sh.id, "team");
                }
            }
        }
        std::string into_tip = git::commit_of(repo, "refs/heads/" + land.into);
        for (auto item : land_items(store, land.id)) {
            if (item.decided_at) continue;
            json row;
            if (item.state == "landing" && item.candidate && !into_tip.empty() &&
                git::is_ancestor(repo, *item.candidate, into_tip)) {
                item.state = "landed";
                row = row_of(item, "landed");
                row["commit"] = *item.candidate;
                row["previous"] = item.onto ? json(*item.onto) : json(nullptr);
                row["why"] = "its land was killed after the target moved: recorded now";
            } else {
                bool moving = item.state == "landing" && item.candidate;
                item.state = "interrupted";
                row = row_of(item, "interrupted");
                row["why"] = "its land (" + std::to_string(land.id) +
                             ") was killed before it was decided" +
                             (moving ? " (as it moved the target: a git it started that still "
                                       "moves it there makes the branch landed)"
                                     : ": nothing of it was kept");
            }
            item.result = row;
            item.decided_at = clock.now();
            row["landId"] = land.id;
            store.write([&] {
                decide_land_item(store, item);
                append_activity(store.db(), team.id, clock.now(), "team",
                                item.state == "landed" ? "branch_landed" : "land_interrupted", row);
            });
            out.push_back(row);
        }
        std::optional<std::string> left;
        if (land.scratch) {
            // A git it started there may outlive it (its `worktree add` of the scratch, a
            // rebase): git lists what that git makes only once it has ended.
            worktree_parts::wait_for_orphans(resolved(*land.scratch));
            left =
                git::remove_scratch(repo, store.home(), land_dir(store), resolved(*land.scratch));
        }
        store.write([&] {
            if (!left) set_land_scratch(store, land.id, std::nullopt);
            end_land(store, land.id, "interrupted", clock.now());
        });
        if (left) out.push_back({{"landId", land.id}, {"scratch", *land.scratch}, {"why", *left}});
    }
    return out;
}

}  // namespace team::land_parts
