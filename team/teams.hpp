// Teams (SPEC 3): create, find, list, describe and delete, and who is calling (SPEC 1.5). The
// records (TeamRecord, AgentRecord, Caller) live below, in state/records.hpp, and the members
// repository in state/members.hpp.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/time.hpp"
#include "state/records.hpp"
#include "state/store.hpp"

namespace team {

struct TeamStatus {
    TeamRecord team;
    std::vector<AgentRecord> agents;   // members other than the leader, live ones first
    std::map<std::string, int> tasks;  // task counts by status
};

class Teams {
  public:
    Teams(Store& store, const Clock& clock) : store_(store), clock_(clock) {}

    struct CreateRequest {
        std::string name;
        std::string description;
        std::string cwd;     // must be an existing directory; made absolute
        std::string leader;  // the leader's member name
        // The team's repository (SPEC 14): default the one that holds cwd, if any; its base
        // (default: that checkout's HEAD), recorded as a commit.
        std::optional<std::string> repo, base;
        // Settings of the team's own from the start (team/config.hpp): {key, value}.
        std::vector<std::pair<std::string, std::string>> settings;
    };
    // Makes a team with its leader as first member, and logs team_created. Refused when a live
    // team of that name exists.
    TeamRecord create(const CreateRequest& request);

    // The live team of that name, else the newest dissolved one. Not found: did-you-mean.
    TeamRecord find(const std::string& name);

    // The team with this row id (live or dissolved), if it still exists.
    std::optional<TeamRecord> find_by_id(std::int64_t id);

    // SPEC 1.1: the named team, else the only live team; otherwise a usage error listing them.
    TeamRecord resolve(const std::optional<std::string>& name);

    // All teams, oldest first; dissolved ones only when asked.
    std::vector<TeamRecord> list(bool include_dissolved);

    TeamStatus status(const TeamRecord& team);

    // Whether the team's records still exist (not deleted since `team` was read).
    bool exists(const TeamRecord& team);

    // Deletes a team and all its records. Refused while it has a live agent.
    void remove(const TeamRecord& team, const Caller& caller);

    // --as NAME or NAME@TEAM, else the leader. The caller must be a live member of `team`.
    Caller resolve_caller(const TeamRecord& team, const std::optional<std::string>& as);

  private:
    Store& store_;
    const Clock& clock_;
};

// The errors of a team that is not there, shared by every place that looks one up.
Error team_not_found(const std::string& name, const std::vector<std::string>& known);
Error no_team_given(const std::vector<std::string>& live);

// Throws refused unless the caller is the team's leader; `action` says what was attempted.
void require_leader(const Caller& caller, const std::string& action);

}  // namespace team
