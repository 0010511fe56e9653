// Snapshots on stop: an ended agent's worktree kept as a snapshot commit once nothing of the
// agent runs (`keep`), by whoever comes first (its pane's supervisor, kill-agent, teardown, a
// look); a worktree of a spawn cut short before its agent started goes if nothing is in it.
#include "team/worktrees.hpp"

#include <system_error>

#include "base/error.hpp"
#include "git/repo_lock.hpp"
#include "git/repository.hpp"
#include "git/snapshots.hpp"
#include "proc/pidfd.hpp"
#include "state/activity.hpp"
#include "state/members.hpp"
#include "state/teams.hpp"
#include "team/worktree_parts.hpp"

namespace team {

namespace fs = std::filesystem;
using worktree_parts::git_entry;

namespace {

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

bool worktree_parts::wait_for_orphans(const fs::path& path) {
    auto deadline = std::chrono::steady_clock::now() + kOrphanGitWait;
    for (;;) {
        std::vector<proc::Pidfd> running;
        for (const auto& p : processes_in(path, true)) {
            if (auto fd = proc::Pidfd::open(p.pid, p.start_time)) running.push_back(std::move(*fd));
        }
        if (running.empty()) return true;
        if (!proc::wait_all_exited(running, deadline)) return false;
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
        // something): a snapshot, as for any other end, and the row `present`, so that the
        // spawn run again takes it over. The spawn's `git worktree add` may outlive it
        // (orphaned, still at work): git's list says what it made only once it has ended.
        if (!worktree_parts::wait_for_orphans(row->path)) {
            throw failed("a process still works in " + quote(row->path) +
                         ": its snapshot stays owed");
        }
        git::Repository repo = git::resolve_repository(*git_, row->repo);
        if (!git_entry(repo, row->path)) {
            store_.write([&] { delete_worktree_row(store_, row->id); });
            return;
        }
        if (row->state == "creating") {
            store_.write([&] { set_worktree_state(store_, row->id, "present"); });
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

}  // namespace team
