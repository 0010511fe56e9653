// The watcher of one agent's worktree: the hidden `team __watch ID`, which the agent's pane
// supervisor starts once its agent runs and which ends with it (proc/companion.hpp). It keeps
// the worktree's git state in the store current, so that `team agents` and the dashboard read it
// instead of asking git in every worktree at every look (team/worktree_look.cpp):
// - inotify on the worktree (every directory but `.git`, new ones as they come), its git
//   directory (index, HEAD, its reflog), the repository's common directory (packed-refs) and its
//   branches (refs/heads, so the base's moves are seen);
// - a burst of changes is looked at once it has been quiet for 100 ms, and at most 400 ms after
//   its first change: one `git status` (and rev-list) then, never while nothing changes;
// - the merge check into the base's branch and the files the branch changed only when the
//   branch or the base moved; the conflicts with the other agents' branches (merge-tree for the
//   pairs whose changed files overlap) only when its own branch moved, written on both sides;
// - a state that differs from the last one recorded is written with an activity entry
//   `worktree_state`, which reaches the dashboard as an event.
// When it cannot watch (out of inotify watches), it clears the recorded state and ends: a look
// then asks git, as before.
#pragma once

#include <cstdint>

#include "state/store.hpp"

namespace team {

// Watches the worktree of agent `agent_id` until this process's parent (the pane supervisor)
// ends or the agent does. Returns the exit code.
int watch_worktree(Store& store, std::int64_t agent_id);

}  // namespace team
