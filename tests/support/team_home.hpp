// Test support: one team on a home of its own, for end-to-end tests. Every `team` call carries
// the test's marker (inherited by the tmux server, the supervisors and the agents) and the team
// in TEAM_NAME; finish() ends the home's tmux server and proves nothing the test started is left.
#pragma once

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "tests/support/marker.hpp"
#include "tests/support/process.hpp"

namespace team::test {

class TeamHome {
  public:
    using Env = std::map<std::string, std::string>;

    // Creates the team (its cwd the test's directory) unless `create` is false.
    explicit TeamHome(std::string team, bool create = true) : team_(std::move(team)) {
        if (!create) return;
        auto r = env.run({"create", team_, "--cwd", env.dir().string()});
        INFO("stdout: " << r.out << " stderr: " << r.err);
        REQUIRE(r.exit_code == 0);
    }

    const std::string& team() const { return team_; }

    // The environment of every `team` call: the marker and the team, plus `more`.
    Env extra(const Env& more = {}) const {
        Env e{{mark.key(), mark.value()}, {"TEAM_NAME", team_}};
        for (const auto& [k, v] : more) e[k] = v;
        return e;
    }

    RunResult run(const std::vector<std::string>& args, const Env& more = {}) const {
        return env.run(args, extra(more));
    }

    // Ends the home's tmux server (and with it every pane), lets `team` record the ends, and
    // checks that no process carrying the marker is left.
    void finish() const {
        env.tmux({"kill-server"});
        run({"agents", "--all", "--json"});
        CHECK(mark.none_alive_within(3000));
    }

    TeamEnv env;
    Marker mark;

  private:
    std::string team_;
};

}  // namespace team::test
