// What every command needs, resolved once and in one place: the home and its store, the team
// the command acts on (SPEC 1.1), the caller (SPEC 1.5), the clock and the output.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "base/time.hpp"
#include "cli/output.hpp"
#include "state/store.hpp"
#include "team/teams.hpp"
#include "tmux/tmux.hpp"

namespace CLI {
class App;
}

namespace team::cli {

// The global options of SPEC 1.1, after the environment has been folded in.
struct GlobalOptions {
    std::optional<std::string> home;  // --home, else TEAM_HOME (resolved by state/home)
    std::optional<std::string> team;  // --team, else TEAM_NAME
    std::optional<std::string> as;    // --as, else TEAM_AGENT_ID
    bool json = false;
    bool no_color = false;
};

class Context {
  public:
    Context(GlobalOptions options, Output& out) : options_(std::move(options)), out_(out) {}

    const GlobalOptions& options() const { return options_; }
    const Output& out() const { return out_; }
    const Clock& clock() const { return clock_; }

    // Opened on first use, creating the home if needed.
    Store& store();
    // The home's private tmux server (created on first use).
    tmux::Tmux& tmux();
    // Whether the home has a store yet. Commands that only read answer as for an empty home
    // when it has none, rather than create one (a mistyped --home must not leave a directory).
    bool has_store();
    Teams& teams();

    // The team named by `positional` (a command's own NAME argument) if given, else --team /
    // TEAM_NAME, else the team of a `--as name@team`, else the only live team.
    TeamRecord team(const std::optional<std::string>& positional = std::nullopt);

    // Who runs this command, as a member of `team`.
    Caller caller(const TeamRecord& team);

    // The team only when one is named (--team, TEAM_NAME, --as name@team, or `positional`);
    // never guessed. For commands that also work outside any team (background shells).
    std::optional<TeamRecord> named_team(
        const std::optional<std::string>& positional = std::nullopt);

    // Who asked, for the activity log: the caller in `team`, else --as / TEAM_AGENT_ID, else
    // "user".
    std::string actor(const std::optional<TeamRecord>& team);

  private:
    GlobalOptions options_;
    Output& out_;
    SystemClock clock_;
    std::unique_ptr<Store> store_;
    std::unique_ptr<Teams> teams_;
    std::unique_ptr<tmux::Tmux> tmux_;
};

// A command's body: runs with the resolved context and returns the process exit code.
using Action = std::function<int(Context&)>;

// The shared machinery of every command file: declares a subcommand of `parent` whose body is
// `action`, run after the whole command line has been parsed. Returns the subcommand so the
// command file can declare its options on it.
CLI::App* add_command(CLI::App& parent, const std::string& name, const std::string& description,
                      Action action);

// The action of the subcommand the command line selected (empty before parsing).
Action& selected_action();

}  // namespace team::cli
