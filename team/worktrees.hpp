// Worktrees of a team's agents (SPEC 14): the rules that join git/ (which knows git) and the
// store (which knows teams and agents). A team records its repository and base when it is
// created; `spawn --worktree` plans the worktree (every refusal before anything is written),
// writes its row `creating`, asks git under the repository's lock, and marks it `present`.
// When an agent's end is recorded, a snapshot of its worktree is owed (state/worktree_rows);
// `keep` takes it — after the agent's tree has ended, so every byte it wrote is in it — and
// whoever comes next (the pane's supervisor, kill-agent, teardown, a look) takes one still owed.
// Nothing here removes a worktree that holds work: see git/removal.hpp.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/time.hpp"
#include "git/runner.hpp"
#include "state/records.hpp"
#include "state/store.hpp"
#include "state/worktree_rows.hpp"

namespace team {

// What `spawn --worktree` asks.
struct WorktreeAsk {
    std::optional<std::string> branch;  // default: team/T/A
    std::optional<std::string> base;    // default: the team's base
    bool reuse_branch = false;
};

// A worktree planned for a spawn: its row (not written yet) and what the agent is told.
struct WorktreePlan {
    WorktreeRow row;
    std::vector<std::string> env;  // TEAM_WORKTREE, TEAM_BRANCH, TEAM_BASE
    bool reuse_branch = false;
    // --reuse-branch found the kept worktree of an ended agent on that branch: its row, which
    // the new agent takes over (nothing is made).
    std::int64_t reuse_id = 0;
    std::vector<std::string> included;  // .worktreeinclude files copied in (after make)
};

class Worktrees {
  public:
    Worktrees(Store& store, const Clock& clock);
    ~Worktrees();

    // `team create --repo --base`: the repository holding `repo` (or, not given, the one that
    // holds `cwd`, if any: then nothing is refused) and its base as a commit.
    std::optional<TeamRepo> repo_for_team(const std::string& cwd,
                                          const std::optional<std::string>& repo,
                                          const std::optional<std::string>& base);

    // Checks everything git would refuse and plans the worktree; writes nothing.
    WorktreePlan plan(const TeamRecord& team, const std::string& agent, const WorktreeAsk& ask);
    // Under the repository's lock: git adds the worktree; the row (written `creating` by the
    // caller, with its id) is then `present`. On a refusal or failure the row is deleted and
    // the error thrown: nothing is left.
    void make(WorktreePlan& plan, const std::string& team_name);
    // After a spawn that failed once its worktree was made: the worktree goes if nothing is in
    // it, else it is kept (its row stays).
    void unmake(const WorktreeRow& row);

    // The agent's kept worktree (a snapshot taken first if one is owed), as results list it;
    // null when the agent has none.
    nlohmann::json keep(std::int64_t agent_id);
    // Every snapshot the team owes, taken (a look after a crash, a teardown).
    void settle(const TeamRecord& team);

    // The git state of the team's live worktree agents, by agent name: branch, ahead/behind,
    // counts, whether it merges cleanly into the base, conflicts with the others' branches.
    nlohmann::json agent_states(const TeamRecord& team, const std::vector<AgentRecord>& agents);

    // The operations of SPEC 14 on the worktree of the agent named `agent` (the newest kept
    // one of that name, its agent live or not). Not found: did-you-mean.
    nlohmann::json list(const TeamRecord& team, bool all);
    nlohmann::json diff(const TeamRecord& team, const std::string& agent, bool stat, bool wip);
    struct MergeAsk {
        std::string agent;
        std::optional<std::string> into;  // default: the base's branch
        std::string strategy = "merge";   // merge | squash | rebase | ff
        bool check_only = false;
    };
    nlohmann::json merge(const TeamRecord& team, const Caller& caller, const MergeAsk& ask);
    nlohmann::json restore(const TeamRecord& team, const std::string& agent,
                           const std::optional<std::string>& ref);
    nlohmann::json remove(const TeamRecord& team, const Caller& caller, const std::string& agent,
                          bool discard);
    nlohmann::json gc(const TeamRecord& team, bool dry_run);
    nlohmann::json repair(const TeamRecord& team);

  private:
    void take(const WorktreeRow& row);
    WorktreeRow find(const TeamRecord& team, const std::string& agent);
    // Whether the row's agent is live; and any process whose directory is in the worktree.
    bool agent_live(const WorktreeRow& row);
    // Whether the row's agent ended without ever starting (its spawn died).
    bool never_started(const WorktreeRow& row);

    Store& store_;
    const Clock& clock_;
    std::unique_ptr<git::Git> git_;
};

// A worktree row as results and `team worktree list` show it.
nlohmann::json worktree_json(const WorktreeRow& row);

}  // namespace team
