// What every command needs: the core's resolution of home, team and caller (ops/core.hpp), the
// global options it came from, and the output.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "cli/output.hpp"
#include "ops/core.hpp"

namespace CLI {
class App;
}

namespace team::cli {

// The global options of SPEC 1.1, after the environment has been folded in.
struct GlobalOptions {
    std::optional<std::string> home;  // --home, else TEAM_HOME (resolved by state/home)
    std::optional<std::string> team;  // --team, else TEAM_NAME
    std::optional<std::string> as;    // --as, else TEAM_AGENT_ID
    std::string store;                // --store (TEAM_STORE is read by state/store)
    bool json = false;
    bool no_color = false;
};

// A command's view of the core (ops/core.hpp: the store, tmux, the team and the caller, resolved
// from the global options), with the options themselves and the output.
class Context : public ops::Core {
  public:
    Context(GlobalOptions options, Output& out)
        : ops::Core(ops::Identity{options.home, options.team, options.as}),
          options_(std::move(options)),
          out_(out) {}

    const GlobalOptions& options() const { return options_; }
    const Output& out() const { return out_; }

  private:
    GlobalOptions options_;
    Output& out_;
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
