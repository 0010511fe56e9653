// Worktrees for `spawn --worktree` and `create --repo`: the team's repository and base
// resolved, a worktree planned (every refusal before anything is written), made under the
// repository's lock, and unmade (through git/removal's checks) when the spawn fails after it.
#include "team/worktrees.hpp"

#include <system_error>

#include "base/error.hpp"
#include "git/removal.hpp"
#include "git/repo_lock.hpp"
#include "git/repository.hpp"
#include "git/worktrees.hpp"

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
    // The kept worktree of an ended agent of this team, on that branch: with --reuse-branch,
    // the new agent starts in it, with whatever it holds. Without, only the one that a spawn of
    // this agent made and died before its agent started (`take` kept it: something was in it
    // besides the checkout), which its spawn run again takes over.
    for (const auto& kept : team_worktrees(store_, team.id)) {
        if (kept.branch != branch || kept.state != "present" || agent_live(kept)) continue;
        if (!ask.reuse_branch && (kept.agent != agent || !never_started(kept))) continue;
        std::error_code ec;
        if (!fs::is_directory(kept.path, ec)) continue;
        row = kept;
        row.agent = agent;
        plan.reuse_id = kept.id;
        plan.env = {"TEAM_WORKTREE=" + row.path, "TEAM_BRANCH=" + row.branch,
                    "TEAM_BASE=" + row.base};
        return plan;
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

}  // namespace team
