// The look for `team agents`: the git state of a team's live worktree agents (status,
// ahead/behind, whether each merges cleanly into the base, conflicts between their branches).
// Read from the store, where each agent's watcher keeps it current (team/worktree_watch.hpp);
// when one of them has none recorded (an agent from before, a watcher not yet run or gone),
// asked of git in parallel, as before.
#include "team/worktrees.hpp"

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <set>
#include <thread>

#include "git/repository.hpp"
#include "git/status.hpp"
#include "proc/process_table.hpp"

namespace team {

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

// Whether the state was recorded by a watcher that still runs: then it is current. Of an agent
// of another home (a shared store), its watcher's process is not ours to look at: recorded is
// enough.
bool watched(const WorktreeRow& row, bool here) {
    if (!row.git_state.is_object() || !row.git_state.contains("watcher")) return false;
    if (!here) return true;
    const auto& w = row.git_state["watcher"];
    auto pid = w.value("pid", std::int64_t{0});
    auto start = proc::start_time_of(static_cast<pid_t>(pid));
    return pid > 0 && start && *start == w.value("start", std::uint64_t{0});
}

// The recorded state of every live worktree agent, by agent name, as the git look gives it;
// nothing when one of them has none.
struct Watched {
    const WorktreeRow* row;
    std::string name;
    bool here;  // the agent lives in this home
};

std::optional<std::map<std::string, nlohmann::json>> recorded_states(
    const std::vector<Watched>& live) {
    std::map<std::string, nlohmann::json> out;
    std::set<std::string> names;
    for (const auto& [row, name, here] : live) names.insert(name);
    for (const auto& [row, name, here] : live) {
        if (!watched(*row, here)) return std::nullopt;
        nlohmann::json doc = row->git_state;
        doc.erase("watcher");
        doc.erase("head");
        doc.erase("changed");
        doc["conflictsWith"] = nlohmann::json::array();
        for (const auto& c : row->git_conflicts) {
            if (!names.count(c.value("agent", ""))) continue;
            doc["conflictsWith"].push_back(
                {{"agent", c["agent"]}, {"branch", c["branch"]}, {"files", c["files"]}});
        }
        doc["observedAt"] = row->git_state_at ? nlohmann::json(iso8601(*row->git_state_at))
                                              : nlohmann::json(nullptr);
        doc["source"] = "watcher";
        out[name] = std::move(doc);
    }
    return out;
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
        bool here = true;                  // the agent lives in this home
    };
    std::vector<Live> live;
    for (const auto& a : agents) {
        for (const auto& row : rows) {
            if (row.agent_id != a.id) continue;
            out[a.name] = {{"path", row.path},
                           {"branch", row.branch},
                           {"base", row.base},
                           {"baseName", row.base_name}};
            if (a.live()) {
                live.push_back(
                    {&row, a.name, std::nullopt, out[a.name], {}, a.lives_in(store_.home_id())});
            }
        }
    }
    if (live.empty()) return out;
    std::vector<Watched> watched;
    for (const auto& l : live) watched.push_back({l.row, l.name, l.here});
    if (auto recorded = recorded_states(watched)) {
        for (auto& [name, doc] : *recorded) out[name].update(doc);
        return out;
    }
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
            l.doc["source"] = "git";
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

}  // namespace team
