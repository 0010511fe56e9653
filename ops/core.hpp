// What every operation needs, resolved once and in one place whatever the face: the home and its
// store, the team an operation acts on (SPEC 1.1), the caller (SPEC 1.5), the clock and tmux.
// The command line, the MCP server and the HTTP API each make one from their own way of naming
// the home, the team and the caller (flags and environment, a server's start, a request).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/time.hpp"
#include "ops/changes.hpp"
#include "state/records.hpp"
#include "state/store.hpp"
#include "team/teams.hpp"
#include "tmux/tmux.hpp"

namespace team::ops {

// Who asks and where: SPEC 1.1's --home, --team and --as, after the environment is folded in.
struct Identity {
    std::optional<std::string> home;  // else TEAM_HOME, else the default (state/home)
    std::optional<std::string> team;  // else the team of `as` (name@team), else the only live one
    std::optional<std::string> as;    // an agent's name or name@team; else the leader
    // The face a request came through when the activity log should say so ("web": team serve);
    // every entry the operation writes gets details.via (state/activity.hpp).
    std::optional<std::string> via = std::nullopt;
};

class Core {
  public:
    // The tmux of a home: the home's private server, unless a test gives its own.
    using TmuxFactory = std::function<std::unique_ptr<tmux::Tmux>(const std::filesystem::path&)>;

    explicit Core(Identity identity, TmuxFactory tmux_factory = {});
    virtual ~Core();
    Core(const Core&) = delete;
    Core& operator=(const Core&) = delete;

    const Identity& identity() const { return identity_; }
    const Clock& clock() const { return clock_; }

    // The home (SPEC 1.1: --home, else TEAM_HOME, else the default), resolved, not created.
    std::filesystem::path home() const;
    // The same, made (0700) if it does not exist yet.
    std::filesystem::path ensure_home() const;

    // Opened on first use, creating the home if needed.
    Store& store();
    // The home's private tmux server (created on first use).
    tmux::Tmux& tmux();
    // Whether the home has a store yet. Operations that only read answer as for an empty home
    // when it has none, rather than create one (a mistyped --home must not leave a directory).
    bool has_store();
    Teams& teams();

    // The team named by `positional` (an operation's own team argument) if given, else the
    // identity's team, else the team of an `as` of name@team, else the only live team.
    TeamRecord team(const std::optional<std::string>& positional = std::nullopt);

    // Who asks, as a member of `team`.
    Caller caller(const TeamRecord& team);

    // The team only when one is named (positional, the identity's team, or `as` of name@team);
    // never guessed. For operations that also work outside any team (background shells).
    std::optional<TeamRecord> named_team(
        const std::optional<std::string>& positional = std::nullopt);

    // Who asked, for the activity log: the caller in `team`, else `as`, else "user".
    std::string actor(const std::optional<TeamRecord>& team);

    // A wait for the next commit to the home's store by any process (ops/changes.hpp); made
    // before the look it guards. Opens the store (creating the home) if needed.
    // `messages`: only commits that stored a message wake it, where the store tells (PostgreSQL).
    std::unique_ptr<Changes> watch_changes(bool messages = false);
    // The activity log of the whole home from a cursor, for a stream of every change: the id of
    // the newest entry (0 when none), and the entries after `since`, oldest first, at most
    // `limit`.
    std::int64_t newest_activity_id();
    std::vector<ActivityRow> activity_after(std::int64_t since, int limit);

    // Replaces this process with a tmux client of the home's server, attached to `session`
    // with `pane` selected (where attach answered). Returns only by throwing.
    [[noreturn]] void become_tmux_client(const std::string& session, const std::string& pane);

  private:
    Identity identity_;
    TmuxFactory tmux_factory_;
    SystemClock clock_;
    std::unique_ptr<Store> store_;
    std::unique_ptr<Teams> teams_;
    std::unique_ptr<tmux::Tmux> tmux_;
};

// The agent's instructions (team/agent_instructions.hpp) for the caller an identity names: that
// agent and its team when `as` names one (name@team, or a name with the identity's team), else
// the general text. Reads nothing: a server can give it before any team exists.
std::string instructions_for(const Identity& identity);

}  // namespace team::ops
