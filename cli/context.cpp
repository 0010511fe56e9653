#include "cli/context.hpp"

#include <CLI/CLI.hpp>

#include "state/home.hpp"
#include "tmux/server.hpp"

namespace team::cli {

namespace {
// The action of the subcommand that was selected on the command line.
Action g_selected;
}  // namespace

Action& selected_action() {
    return g_selected;
}

CLI::App* add_command(CLI::App& parent, const std::string& name, const std::string& description,
                      Action action) {
    CLI::App* sub = parent.add_subcommand(name, description);
    // A command may also have subcommands (inbox ack): CLI11 runs a parent's callback after its
    // subcommand's, so the parent's action is chosen only when no subcommand was given.
    sub->callback([sub, action = std::move(action)] {
        if (sub->get_subcommands().empty()) g_selected = action;
    });
    return sub;
}

Store& Context::store() {
    if (!store_) {
        auto home = resolve_home(options_.home);
        ensure_home(home);
        store_ = std::make_unique<Store>(home);
    }
    return *store_;
}

tmux::Tmux& Context::tmux() {
    if (!tmux_) {
        auto home = store().home();
        tmux_ = std::make_unique<tmux::TmuxClient>(tmux::TmuxServer::socket_args(home),
                                                   tmux::TmuxServer::ensure_config(home));
    }
    return *tmux_;
}

Teams& Context::teams() {
    if (!teams_) teams_ = std::make_unique<Teams>(store(), clock_);
    return *teams_;
}

bool Context::has_store() {
    return store_ || std::filesystem::exists(resolve_home(options_.home) / "team.db");
}

TeamRecord Context::team(const std::optional<std::string>& positional) {
    if (!has_store()) {
        auto name = positional ? positional : options_.team;
        if (!name && options_.as && options_.as->find('@') != std::string::npos) {
            name = options_.as->substr(options_.as->find('@') + 1);
        }
        if (name) throw team_not_found(*name, {});
        throw no_team_given({});
    }
    if (positional) return teams().find(*positional);
    if (options_.team) return teams().find(*options_.team);
    if (options_.as) {
        if (auto at = options_.as->find('@'); at != std::string::npos) {
            return teams().find(options_.as->substr(at + 1));
        }
    }
    return teams().resolve(std::nullopt);
}

Caller Context::caller(const TeamRecord& team) {
    return teams().resolve_caller(team, options_.as);
}

std::optional<TeamRecord> Context::named_team(const std::optional<std::string>& positional) {
    bool named =
        positional || options_.team || (options_.as && options_.as->find('@') != std::string::npos);
    if (!named) return std::nullopt;
    return team(positional);
}

std::string Context::actor(const std::optional<TeamRecord>& team) {
    if (team) return caller(*team).id();
    return options_.as.value_or("user");
}

}  // namespace team::cli
