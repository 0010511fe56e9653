// The operations of SPEC 14 on an agent's kept worktree: list, diff, merge, restore, remove
// (with its /proc scan for processes still working in it), gc and repair.
#include "team/worktrees.hpp"

#include <map>
#include <system_error>

#include <unistd.h>

#include "base/error.hpp"
#include "base/names.hpp"
#include "git/merge.hpp"
#include "git/removal.hpp"
#include "git/repository.hpp"
#include "git/snapshots.hpp"
#include "git/status.hpp"
#include "proc/process_table.hpp"
#include "state/activity.hpp"
#include "state/members.hpp"
#include "team/worktree_parts.hpp"

namespace team {

namespace fs = std::filesystem;
using worktree_parts::git_entry;
using worktree_parts::processes_in;

nlohmann::json worktree_json(const WorktreeRow& row) {
    std::error_code ec;
    return {{"agent", row.agent},
            {"path", row.path},
            {"branch", row.branch},
            {"base", row.base},
            {"baseName", row.base_name},
            {"state", row.state},
            {"missing", row.kept() && !fs::is_directory(row.path, ec)},
            {"snapshot", row.snapshot},
            {"snapshotOwed", row.snapshot_owed},
            {"createdAt", iso8601(row.created_at)}};
}

namespace {

// Whether one of the NUL-separated arguments of `cmdline` is `path`.
bool names_argument(const std::string& cmdline, const std::string& path) {
    for (size_t at = 0; at < cmdline.size();) {
        size_t end = cmdline.find('\0', at);
        if (end == std::string::npos) end = cmdline.size();
        if (cmdline.compare(at, end - at, path) == 0) return true;
        at = end + 1;
    }
    return false;
}

}  // namespace

namespace worktree_parts {

std::vector<proc::ProcessInfo> processes_in(const fs::path& dir, bool or_naming) {
    std::vector<proc::ProcessInfo> out;
    std::string prefix = dir.string();
    for (const auto& p : proc::scan_processes()) {
        if (p.pid == ::getpid() || p.is_zombie()) continue;
        std::error_code ec;
        auto cwd = fs::read_symlink("/proc/" + std::to_string(p.pid) + "/cwd", ec).string();
        if (!ec && (cwd == prefix || cwd.compare(0, prefix.size() + 1, prefix + "/") == 0)) {
            out.push_back(p);
        } else if (or_naming && names_argument(proc::cmdline_of(p.pid), prefix)) {
            out.push_back(p);
        }
    }
    return out;
}

}  // namespace worktree_parts

namespace {

// Where a merge or removal measures the branch: the base's branch if it still exists, else
// the base commit.
std::string base_ref(const git::Repository& repo, const WorktreeRow& row) {
    if (!row.base_name.empty() && !git::commit_of(repo, "refs/heads/" + row.base_name).empty()) {
        return row.base_name;
    }
    return row.base;
}

}  // namespace

WorktreeRow Worktrees::find(const TeamRecord& team, const std::string& agent) {
    check_name(agent, "agent name");
    auto rows = team_worktrees(store_, team.id);
    for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
        if (it->agent == agent) return *it;
    }
    std::vector<std::string> names;
    for (const auto& r : rows) names.push_back(r.agent);
    throw not_found("agent " + quote(agent) + " of team " + quote(team.name) +
                    " has no kept worktree" + did_you_mean(agent, names));
}

bool Worktrees::agent_live(const WorktreeRow& row) {
    if (!row.agent_id) return false;
    auto a = load_agent(store_, *row.agent_id);
    return a && a->live();
}

bool Worktrees::never_started(const WorktreeRow& row) {
    if (!row.agent_id) return false;
    auto a = load_agent(store_, *row.agent_id);
    return a && !a->live() && !a->pid;
}

nlohmann::json Worktrees::list(const TeamRecord& team, bool all) {
    nlohmann::json out = nlohmann::json::array();
    std::map<std::string, git::Repository> repos;
    for (const auto& row : team_worktrees(store_, team.id, all)) {
        nlohmann::json doc = worktree_json(row);
        doc["live"] = agent_live(row);
        if (row.kept()) {
            try {
                auto [it, added] = repos.try_emplace(row.repo);
                if (added) it->second = git::resolve_repository(*git_, row.repo);
                doc["snapshots"] = git::list_snapshots(it->second, team.name, row.agent);
                if (!doc["missing"].get<bool>()) {
                    auto st = git::worktree_status(it->second, row.path, row.base);
                    doc["ahead"] = st.ahead;
                    doc["behind"] = st.behind;
                    doc["staged"] = st.staged;
                    doc["modified"] = st.modified;
                    doc["untracked"] = st.untracked;
                    doc["clean"] = st.clean();
                }
            } catch (const std::exception& e) {
                repos.erase(row.repo);
                doc["error"] = e.what();
            }
        }
        out.push_back(doc);
    }
    return out;
}

nlohmann::json Worktrees::diff(const TeamRecord& team, const std::string& agent, bool stat,
                               bool wip) {
    WorktreeRow row = find(team, agent);
    git::Repository repo = git::resolve_repository(*git_, row.repo);
    std::string text;
    if (wip) {
        std::error_code ec;
        if (!fs::is_directory(row.path, ec)) {
            throw git::GitError(ErrorCode::not_found, git::GitErrorKind::missing,
                                "the worktree " + quote(row.path) + " of " + quote(agent) +
                                    " is missing: only its branch can be diffed (without --wip)");
        }
        text = git::diff_wip(repo, row.path, stat);
    } else {
        text = git::diff(repo, row.base, row.branch, stat);
    }
    return {{"agent", row.agent}, {"branch", row.branch}, {"base", row.base},
            {"wip", wip},         {"stat", stat},         {"diff", text}};
}

nlohmann::json Worktrees::merge(const TeamRecord& team, const Caller& caller, const MergeAsk& ask) {
    auto strategy = git::parse_strategy(ask.strategy);
    if (!strategy) {
        throw usage_error("unknown strategy " + quote(ask.strategy) +
                          did_you_mean(ask.strategy, {"merge", "squash", "rebase", "ff"}) +
                          " (merge, squash, rebase or ff)");
    }
    WorktreeRow row = find(team, ask.agent);
    git::Repository repo = git::resolve_repository(*git_, row.repo);
    std::string into = ask.into.value_or(row.base_name);
    if (into.empty()) {
        throw usage_error("the team's base is a commit, not a branch: name the target with --into");
    }
    if (!ask.check_only && *strategy == git::Strategy::rebase && agent_live(row)) {
        throw refused("agent " + quote(row.agent) +
                      " is live: a rebase rewrites its branch in its worktree; stop it first or "
                      "use another strategy");
    }
    git::MergeRequest req;
    req.branch = row.branch;
    req.agent_worktree = row.path;
    req.into = into;
    req.strategy = *strategy;
    req.check_only = ask.check_only;
    req.message = "Merge " + row.branch + " (agent " + row.agent + " of team " + team.name + ")";
    git::MergeOutcome o = git::merge_branch(repo, store_.home(), req);
    nlohmann::json doc = {{"agent", row.agent},
                          {"branch", row.branch},
                          {"into", into},
                          {"strategy", ask.strategy},
                          {"check", {{"clean", o.check.clean}, {"files", o.check.files}}},
                          {"merged", o.merged}};
    if (!o.check.clean) {
        std::string files;
        for (const auto& f : o.check.files) files += (files.empty() ? "" : ", ") + f;
        doc["error"] = row.branch + " conflicts with " + into + " in " + files;
    }
    if (o.merged) {
        doc["commit"] = o.commit;
        doc["previous"] = o.previous;
        doc["checkout"] =
            o.checkout.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.checkout.string());
        store_.write([&] {
            append_activity(store_.db(), team.id, clock_.now(), caller.id(), "worktree_merged",
                            {{"agent", row.agent},
                             {"branch", row.branch},
                             {"into", into},
                             {"strategy", ask.strategy},
                             {"commit", o.commit},
                             {"previous", o.previous}});
        });
    }
    return doc;
}

nlohmann::json Worktrees::restore(const TeamRecord& team, const std::string& agent,
                                  const std::optional<std::string>& ref) {
    WorktreeRow row = find(team, agent);
    git::Repository repo = git::resolve_repository(*git_, row.repo);
    std::string which;
    if (ref) {
        which = *ref;
        // A bare number is the agent's snapshot of that number.
        if (!which.empty() && which.find_first_not_of("0123456789") == std::string::npos) {
            which = git::snapshot_prefix(team.name, row.agent) + which;
        }
    } else if (row.snapshot.is_object() && row.snapshot.value("taken", false)) {
        which = row.snapshot["ref"];
    } else {
        auto refs = git::list_snapshots(repo, team.name, row.agent);
        if (refs.empty()) {
            throw not_found("agent " + quote(row.agent) + " has no snapshot to restore");
        }
        which = refs.back();
    }
    if (which.rfind(git::snapshot_prefix(team.name, row.agent), 0) != 0) {
        throw usage_error("--ref " + quote(which) + " is not a snapshot of " + quote(row.agent) +
                          " (they are " + git::snapshot_prefix(team.name, row.agent) + "N)");
    }
    git::restore_snapshot(repo, store_.home(), row.path, which);
    auto st = git::worktree_status(repo, row.path, row.base);
    store_.write([&] {
        append_activity(store_.db(), team.id, clock_.now(), "team", "worktree_restored",
                        {{"agent", row.agent}, {"path", row.path}, {"ref", which}});
    });
    return {{"agent", row.agent},  {"path", row.path},        {"ref", which},
            {"staged", st.staged}, {"modified", st.modified}, {"untracked", st.untracked}};
}

nlohmann::json Worktrees::remove(const TeamRecord& team, const Caller& caller,
                                 const std::string& agent, bool discard) {
    WorktreeRow row = find(team, agent);
    if (agent_live(row)) {
        throw refused("agent " + quote(row.agent) + " is live and works in " + quote(row.path) +
                      ": stop it first (team kill-agent " + row.agent + ")");
    }
    std::error_code ec;
    if (fs::is_directory(row.path, ec)) {
        auto pids = processes_in(row.path);
        if (!pids.empty()) {
            throw refused(
                "process " + std::to_string(pids.front().pid) + " runs in " + quote(row.path) +
                (pids.size() > 1 ? " (and " + std::to_string(pids.size() - 1) + " more)" : "") +
                ": the worktree is kept");
        }
    }
    git::Repository repo = git::resolve_repository(*git_, row.repo);
    auto entry = git_entry(repo, row.path);
    if (!entry) {
        throw refused("git does not list " + quote(row.path) +
                      " as a worktree any more (moved by hand?): run 'team worktree repair'");
    }
    nlohmann::json doc = {{"agent", row.agent}, {"path", row.path}, {"branch", row.branch}};
    EpochMs now = clock_.now();
    if (discard) {
        fs::path trash = store_.home() / "trash" / team.name;
        git::Discarded d =
            git::discard_worktree(repo, store_.home(), team.name, row.agent, *entry, trash);
        store_.write([&] {
            set_worktree_state(store_, row.id, "discarded", now, d.trash_path.string());
            append_activity(store_.db(), team.id, now, caller.id(), "worktree_discarded",
                            {{"agent", row.agent},
                             {"path", row.path},
                             {"snapshot", d.snapshot_ref},
                             {"trash", d.trash_path.string()}});
        });
        doc["state"] = "discarded";
        doc["snapshot"] =
            d.snapshot_ref.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.snapshot_ref);
        doc["trash"] = d.trash_path.string();
        return doc;
    }
    git::remove_worktree(repo, store_.home(), *entry, base_ref(repo, row));
    store_.write([&] {
        set_worktree_state(store_, row.id, "removed", now);
        append_activity(store_.db(), team.id, now, caller.id(), "worktree_removed",
                        {{"agent", row.agent}, {"path", row.path}, {"branch", row.branch}});
    });
    doc["state"] = "removed";
    doc["branchDeleted"] = !git::branch_exists(repo, row.branch);
    return doc;
}

nlohmann::json Worktrees::gc(const TeamRecord& team, bool dry_run) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& row : team_worktrees(store_, team.id)) {
        nlohmann::json doc = {{"agent", row.agent}, {"path", row.path}, {"branch", row.branch}};
        std::vector<std::string> why;
        try {
            if (agent_live(row)) {
                why.push_back("its agent is live");
            } else {
                git::Repository repo = git::resolve_repository(*git_, row.repo);
                auto entry = git_entry(repo, row.path);
                if (!entry) {
                    why.push_back("git does not list it (run 'team worktree repair')");
                } else {
                    auto check = git::check_removal(repo, *entry, base_ref(repo, row));
                    why = check.reasons;
                    if (why.empty() && !processes_in(row.path).empty()) {
                        why.push_back("a process runs in it");
                    }
                    if (why.empty() && !dry_run) {
                        git::remove_worktree(repo, store_.home(), *entry, base_ref(repo, row));
                        store_.write([&] {
                            set_worktree_state(store_, row.id, "removed", clock_.now());
                            append_activity(
                                store_.db(), team.id, clock_.now(), "team", "worktree_removed",
                                {{"agent", row.agent}, {"path", row.path}, {"gc", true}});
                        });
                    }
                }
            }
        } catch (const std::exception& e) {
            why.push_back(e.what());
        }
        doc["removed"] = why.empty();
        doc["keptBecause"] = why;
        out.push_back(doc);
    }
    return {{"dryRun", dry_run}, {"worktrees", out}};
}

nlohmann::json Worktrees::repair(const TeamRecord& team) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& row : team_worktrees(store_, team.id)) {
        nlohmann::json doc = {{"agent", row.agent}, {"path", row.path}, {"before", row.state}};
        try {
            git::Repository repo = git::resolve_repository(*git_, row.repo);
            auto entry = git_entry(repo, row.path);
            std::error_code ec;
            bool on_disk = fs::is_directory(row.path, ec);
            if (row.state == "creating") {
                // A spawn that ended between its row and git: git's list decides.
                auto agent = row.agent_id ? load_agent(store_, *row.agent_id) : std::nullopt;
                bool spawning = agent && agent->status == AgentStatus::spawning;
                if (entry) {
                    store_.write([&] { set_worktree_state(store_, row.id, "present"); });
                    doc["after"] = "present";
                } else if (!spawning) {
                    store_.write([&] { delete_worktree_row(store_, row.id); });
                    doc["after"] = "forgotten (git never made it)";
                } else {
                    doc["after"] = "creating";
                }
            } else if (on_disk) {
                // Links between the worktree and the repository, after either was moved.
                git::GitResult r =
                    git_->run({.args = {"worktree", "repair", row.path}, .cwd = repo.common_dir});
                doc["after"] = r.ok() ? "present" : "present (git: " + git::first_line(r.err) + ")";
            } else {
                doc["after"] = "missing: its branch " + row.branch + " and snapshots are kept";
            }
        } catch (const std::exception& e) {
            doc["error"] = e.what();
        }
        out.push_back(doc);
    }
    settle(team);
    return {{"worktrees", out}};
}

}  // namespace team