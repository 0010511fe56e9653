#include "team/worktrees.hpp"

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <system_error>
#include <thread>

#include <unistd.h>

#include "base/error.hpp"
#include "base/names.hpp"
#include "git/merge.hpp"
#include "git/removal.hpp"
#include "git/repo_lock.hpp"
#include "git/repository.hpp"
#include "git/snapshots.hpp"
#include "git/status.hpp"
#include "git/worktrees.hpp"
#include "proc/process_table.hpp"
#include "state/activity.hpp"
#include "state/members.hpp"
#include "state/teams.hpp"

namespace team {

namespace fs = std::filesystem;

namespace {

// The nearest directory at or above `dir` that holds a `.git` entry; "" when none (no git run
// for a team made outside any repository).
fs::path repository_above(fs::path dir) {
    std::error_code ec;
    for (; !dir.empty(); dir = dir.parent_path()) {
        if (fs::exists(dir / ".git", ec)) return dir;
        if (dir == dir.root_path()) break;
    }
    return {};
}

std::optional<git::Worktree> git_entry(const git::Repository& repo, const std::string& path) {
    for (auto& w : git::list_worktrees(repo)) {
        if (w.path == fs::path(path)) return w;
    }
    return std::nullopt;
}

nlohmann::json snapshot_json(const git::Snapshot& s, EpochMs at) {
    return {{"taken", s.taken},
            {"ref", s.taken ? nlohmann::json(s.ref) : nlohmann::json(nullptr)},
            {"commit", s.taken ? nlohmann::json(s.commit) : nlohmann::json(nullptr)},
            {"head", s.head},
            {"staged", s.staged},
            {"modified", s.modified},
            {"untracked", s.untracked},
            {"partial", s.partial},
            {"unmerged", s.unmerged},
            {"ignored", s.ignored},
            {"submodulesNotRecorded", s.submodules_not_recorded},
            {"note", s.note},
            {"at", iso8601(at)}};
}

}  // namespace

Worktrees::Worktrees(Store& store, const Clock& clock)
    : store_(store), clock_(clock), git_(std::make_unique<git::GitProcess>()) {}

Worktrees::~Worktrees() = default;

std::optional<TeamRepo> Worktrees::repo_for_team(const std::string& cwd,
                                                 const std::optional<std::string>& repo_path,
                                                 const std::optional<std::string>& base) {
    fs::path where = repo_path ? fs::path(*repo_path) : repository_above(cwd);
    if (where.empty()) {
        if (base) {
            throw usage_error("--base " + quote(*base) + " needs a repository: " + quote(cwd) +
                              " is in none (give --repo PATH)");
        }
        return std::nullopt;
    }
    std::error_code ec;
    if (repo_path && !fs::is_directory(where, ec)) {
        throw usage_error("--repo " + quote(*repo_path) + " is not an existing directory");
    }
    try {
        git::Repository repo = git::resolve_repository(*git_, where);
        if (repo.main_checkout.empty()) {
            throw usage_error(quote(where.string()) +
                              " is a bare repository: give a checkout of it as --repo");
        }
        git::Base b = git::resolve_base(repo, base.value_or(""));
        return TeamRepo{repo.main_checkout.string(), b.commit, b.name};
    } catch (const git::GitError& e) {
        // A team made in a directory that merely sits in a repository with no commit yet has
        // no repository recorded; one that asks for it is told why not.
        if (repo_path || base) throw;
        return std::nullopt;
    }
}

WorktreePlan Worktrees::plan(const TeamRecord& team, const std::string& agent,
                             const WorktreeAsk& ask) {
    auto recorded = load_team_repo(store_, team.id);
    std::string repo_path = recorded ? recorded->repo : team.cwd;
    git::Repository repo;
    try {
        repo = git::resolve_repository(*git_, repo_path);
    } catch (const git::GitError& e) {
        if (e.kind() != git::GitErrorKind::no_repository) throw;
        throw usage_error("team " + quote(team.name) + " has no repository: its directory " +
                          quote(repo_path) +
                          " is in no git repository (make the team with --repo PATH)");
    }
    git::Base base;
    if (ask.base) {
        base = git::resolve_base(repo, *ask.base);
    } else if (recorded) {
        base = {recorded->base, recorded->base_name};
    } else {
        base = git::resolve_base(repo);
    }

    WorktreePlan plan;
    WorktreeRow& row = plan.row;
    std::string branch = ask.branch.value_or(git::default_branch(team.name, agent));
    if (ask.reuse_branch) {
        // The kept worktree of an ended agent of this team, on that branch: the new agent
        // starts in it, with whatever it holds.
        for (const auto& kept : team_worktrees(store_, team.id)) {
            if (kept.branch != branch || kept.state != "present" || agent_live(kept)) continue;
            std::error_code ec;
            if (!fs::is_directory(kept.path, ec)) continue;
            row = kept;
            row.agent = agent;
            plan.reuse_id = kept.id;
            plan.env = {"TEAM_WORKTREE=" + row.path, "TEAM_BRANCH=" + row.branch,
                        "TEAM_BASE=" + row.base};
            return plan;
        }
    }
    row.team_id = team.id;
    row.agent = agent;
    row.repo = repo.main_checkout.string();
    row.branch = branch;
    row.base = base.commit;
    row.base_name = base.name;
    row.created_at = clock_.now();
    plan.reuse_branch = ask.reuse_branch;

    // $TEAM_HOME/worktrees/T/A, or A.2, A.3... when a kept worktree of an earlier A is there.
    fs::path dir = store_.home() / "worktrees" / team.name;
    fs::create_directories(dir);
    dir = fs::canonical(dir);
    fs::path path = dir / agent;
    std::error_code ec;
    for (int n = 2;
         fs::exists(fs::symlink_status(path, ec)) || worktree_path_taken(store_, path.string());
         ++n) {
        path = dir / (agent + "." + std::to_string(n));
    }
    row.path = path.string();
    plan.env = {"TEAM_WORKTREE=" + row.path, "TEAM_BRANCH=" + row.branch, "TEAM_BASE=" + row.base};
    return plan;
}

void Worktrees::make(WorktreePlan& plan, const std::string& team_name) {
    WorktreeRow& row = plan.row;
    if (plan.reuse_id) return;  // made long ago: insert_record gave it to the new agent
    try {
        git::Repository repo = git::resolve_repository(*git_, row.repo);
        git::RepoLock lock(store_.home(), repo.common_dir);
        git::AddResult added = git::add_worktree(repo, {row.path,
                                                        team_name,
                                                        row.agent,
                                                        row.branch,
                                                        {row.base, row.base_name},
                                                        plan.reuse_branch});
        plan.included = added.included;
        store_.write([&] { set_worktree_state(store_, row.id, "present"); });
        row.state = "present";
    } catch (...) {
        store_.write([&] { delete_worktree_row(store_, row.id); });
        throw;
    }
}

void Worktrees::unmake(const WorktreeRow& row) {
    try {
        git::Repository repo = git::resolve_repository(*git_, row.repo);
        for (const auto& w : git::list_worktrees(repo)) {
            if (w.path != fs::path(row.path)) continue;
            git::remove_worktree(repo, store_.home(), w, row.base);
            store_.write([&] { set_worktree_state(store_, row.id, "removed", clock_.now()); });
        }
    } catch (const std::exception&) {
        // kept: it holds something (or git would not say); `team worktree list` shows it
    }
}

void Worktrees::take(const WorktreeRow& first) {
    // One taker per worktree at a time (a lock of its own, keyed by its path): the pane's
    // supervisor and kill-agent may both come for the same owed snapshot.
    git::RepoLock taking(store_.home(), fs::path(first.path));
    auto row = load_worktree(store_, first.id);
    if (!row || !row->snapshot_owed) return;
    auto agent = row->agent_id ? load_agent(store_, *row->agent_id) : std::nullopt;
    if (!agent || !agent->pid) {
        // Its agent never recorded its start (a spawn cut short): the worktree goes if nothing
        // is in it, so that the spawn run again finds its branch free; a row git never made a
        // worktree for is forgotten. Kept (its command ran for a moment after all and wrote
        // something): a snapshot, as for any other end.
        git::Repository repo = git::resolve_repository(*git_, row->repo);
        if (!git_entry(repo, row->path)) {
            store_.write([&] { delete_worktree_row(store_, row->id); });
            return;
        }
        unmake(*row);
        row = load_worktree(store_, row->id);
        if (!row || !row->kept()) return;
    }
    std::error_code ec;
    if (!fs::is_directory(row->path, ec)) {
        nlohmann::json none = {{"taken", false},
                               {"missing", true},
                               {"note", "the worktree's directory is gone; its branch is kept"},
                               {"at", iso8601(clock_.now())}};
        store_.write([&] { record_snapshot(store_, row->id, none); });
        return;
    }
    auto team = find_team_by_id(store_, row->team_id);
    if (!team) return;
    git::Repository repo = git::resolve_repository(*git_, row->repo);
    git::Snapshot s = git::take_snapshot(repo, store_.home(), team->name, row->agent, row->path);
    EpochMs now = clock_.now();
    nlohmann::json doc = snapshot_json(s, now);
    store_.write([&] {
        record_snapshot(store_, row->id, doc);
        append_activity(store_.db(), row->team_id, now, "team", "worktree_kept",
                        {{"agent", row->agent},
                         {"path", row->path},
                         {"branch", row->branch},
                         {"snapshot", doc["ref"]},
                         {"staged", s.staged},
                         {"modified", s.modified},
                         {"untracked", s.untracked}});
    });
}

nlohmann::json Worktrees::keep(std::int64_t agent_id) {
    auto row = worktree_of_agent(store_, agent_id);
    if (!row) return nullptr;
    if (row->snapshot_owed) {
        try {
            take(*row);
        } catch (const std::exception&) {
            // still owed: the next look takes it; the work is in the worktree meanwhile
        }
        row = load_worktree(store_, row->id);
    }
    return worktree_json(*row);
}

void Worktrees::settle(const TeamRecord& team) {
    for (const auto& row : owed_snapshots(store_, team.id)) {
        try {
            take(row);
        } catch (const std::exception&) {
            // still owed
        }
    }
}

namespace {

// Under AddressSanitizer, one thread: Boost.Process's child allocates after fork() (asio's
// notify_fork), and a child forked while another thread held the sanitizer's allocator lock
// spun forever (seen once in CI). glibc's malloc is fork-safe, so the plain build keeps four.
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kGitThreads = 1;
#else
constexpr size_t kGitThreads = 4;
#endif

// Runs job(i) for i in [0, n) on up to kGitThreads threads: git's reads are mostly process
// starts, which overlap well even on two cores.
void in_parallel(size_t n, const std::function<void(size_t)>& job) {
    std::atomic<size_t> next{0};
    auto worker = [&] {
        for (size_t i = next++; i < n; i = next++) job(i);
    };
    std::vector<std::thread> threads;
    for (size_t t = 1; t < std::min<size_t>(n, kGitThreads); ++t) threads.emplace_back(worker);
    worker();
    for (auto& t : threads) t.join();
}

}  // namespace

nlohmann::json Worktrees::agent_states(const TeamRecord& team,
                                       const std::vector<AgentRecord>& agents) {
    nlohmann::json out = nlohmann::json::object();
    auto rows = team_worktrees(store_, team.id);
    if (rows.empty()) return out;
    struct Live {
        const WorktreeRow* row;
        std::string name;
        std::optional<git::Repository> repo;
        nlohmann::json doc;
        std::vector<std::string> changed;  // files its branch changed since the base
    };
    std::vector<Live> live;
    for (const auto& a : agents) {
        for (const auto& row : rows) {
            if (row.agent_id != a.id) continue;
            out[a.name] = {{"path", row.path},
                           {"branch", row.branch},
                           {"base", row.base},
                           {"baseName", row.base_name}};
            if (a.live()) live.push_back({&row, a.name, std::nullopt, out[a.name], {}});
        }
    }
    if (live.empty()) return out;
    // One repository lookup per repository.
    std::map<std::string, git::Repository> repos;
    for (auto& l : live) {
        try {
            auto [it, added] = repos.try_emplace(l.row->repo);
            if (added) it->second = git::resolve_repository(*git_, l.row->repo);
            l.repo = it->second;
        } catch (const std::exception& e) {
            repos.erase(l.row->repo);
            l.doc["error"] = e.what();
        }
    }
    in_parallel(live.size(), [&](size_t i) {
        Live& l = live[i];
        if (!l.repo) return;
        try {
            const git::Repository& repo = *l.repo;
            git::WorktreeStatus st = git::worktree_status(repo, l.row->path, l.row->base);
            l.doc["missing"] = st.missing;
            if (st.missing) return;
            l.doc["ahead"] = st.ahead;
            l.doc["behind"] = st.behind;
            l.doc["staged"] = st.staged;
            l.doc["modified"] = st.modified;
            l.doc["untracked"] = st.untracked;
            l.doc["unmerged"] = st.unmerged;
            l.doc["clean"] = st.clean();
            // Into the base's branch as it is now (where a merge would go), else its commit.
            std::string into = l.row->base_name.empty() ? l.row->base : l.row->base_name;
            git::MergeCheck check;
            check.clean = true;  // no commit of its own: nothing to merge
            if (st.ahead > 0) check = git::merge_check(repo, into, l.row->branch);
            l.doc["mergesCleanly"] = check.clean;
            l.doc["mergeConflicts"] = check.files;
            l.doc["conflictsWith"] = nlohmann::json::array();
            if (st.ahead > 0) l.changed = git::changed_files(repo, l.row->base, l.row->branch);
        } catch (const std::exception& e) {
            l.doc["error"] = e.what();
        }
    });
    // Conflicts between agents: merge-tree only for the pairs whose changed files overlap.
    std::vector<std::pair<size_t, size_t>> pairs;
    for (size_t i = 0; i < live.size(); ++i) {
        for (size_t j = i + 1; j < live.size(); ++j) {
            if (live[i].row->repo != live[j].row->repo || live[i].changed.empty()) continue;
            std::vector<std::string> both;
            std::set_intersection(live[i].changed.begin(), live[i].changed.end(),
                                  live[j].changed.begin(), live[j].changed.end(),
                                  std::back_inserter(both));
            if (!both.empty()) pairs.emplace_back(i, j);
        }
    }
    std::vector<git::MergeCheck> checks(pairs.size());
    in_parallel(pairs.size(), [&](size_t k) {
        try {
            checks[k] =
                git::merge_check(*live[pairs[k].first].repo, live[pairs[k].first].row->branch,
                                 live[pairs[k].second].row->branch);
        } catch (const std::exception&) {
            checks[k].clean = true;  // unknown: not claimed
        }
    });
    for (size_t k = 0; k < pairs.size(); ++k) {
        if (checks[k].clean) continue;
        auto [i, j] = pairs[k];
        live[i].doc["conflictsWith"].push_back(
            {{"agent", live[j].name}, {"branch", live[j].row->branch}, {"files", checks[k].files}});
        live[j].doc["conflictsWith"].push_back(
            {{"agent", live[i].name}, {"branch", live[i].row->branch}, {"files", checks[k].files}});
    }
    for (auto& l : live) out[l.name] = std::move(l.doc);
    return out;
}

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

// ---- the operations of SPEC 14 ----

namespace {

// The processes (other than this one) whose working directory is `dir` or below it.
std::vector<pid_t> processes_in(const fs::path& dir) {
    std::vector<pid_t> out;
    std::string prefix = dir.string();
    for (const auto& p : proc::scan_processes()) {
        if (p.pid == ::getpid() || p.is_zombie()) continue;
        std::error_code ec;
        auto cwd = fs::read_symlink("/proc/" + std::to_string(p.pid) + "/cwd", ec).string();
        if (ec) continue;
        if (cwd == prefix || cwd.compare(0, prefix.size() + 1, prefix + "/") == 0) {
            out.push_back(p.pid);
        }
    }
    return out;
}

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
                "process " + std::to_string(pids.front()) + " runs in " + quote(row.path) +
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
