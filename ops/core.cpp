#include "ops/core.hpp"

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include "state/activity.hpp"
#include "state/change_watch.hpp"
#include "state/home.hpp"
#include "state/store.hpp"
#include "team/agent_instructions.hpp"
#include "tmux/server.hpp"

namespace team::ops {

namespace {

// The store's changes: its ChangeWatch (the home's FIFOs, or the PostgreSQL store's NOTIFY).
class StoreChanges final : public Changes {
  public:
    StoreChanges(const std::filesystem::path& home, ChangeWatch::Wake wake) : watch_(home, wake) {}
    bool wait_until(std::chrono::steady_clock::time_point deadline,
                    const std::vector<int>& others) override {
        return watch_.wait_until(deadline, others);
    }
    int fd() const override { return watch_.fd(); }

  private:
    ChangeWatch watch_;
};

}  // namespace

Core::Core(Identity identity, TmuxFactory tmux_factory)
    : identity_(std::move(identity)), tmux_factory_(std::move(tmux_factory)) {}

Core::~Core() = default;

std::filesystem::path Core::home() const {
    return resolve_home(identity_.home);
}

std::filesystem::path Core::ensure_home() const {
    auto home = resolve_home(identity_.home);
    team::ensure_home(home);
    return home;
}

Store& Core::store() {
    if (!store_) {
        auto home = resolve_home(identity_.home);
        team::ensure_home(home);
        store_ = std::make_unique<Store>(home);
    }
    return *store_;
}

tmux::Tmux& Core::tmux() {
    if (!tmux_) {
        auto home = store().home();
        if (tmux_factory_) {
            tmux_ = tmux_factory_(home);
        } else {
            tmux_ = std::make_unique<tmux::TmuxClient>(tmux::TmuxServer::socket_args(home),
                                                       tmux::TmuxServer::ensure_config(home));
        }
    }
    return *tmux_;
}

Teams& Core::teams() {
    if (!teams_) teams_ = std::make_unique<Teams>(store(), clock_);
    return *teams_;
}

bool Core::has_store() {
    if (store_) return true;
    auto home = resolve_home(identity_.home);
    // A shared store (PostgreSQL) exists whether or not this home has made anything yet.
    if (std::filesystem::exists(home / "team.db")) return true;
    const char* named = std::getenv("TEAM_STORE");
    if (named && *named && std::string_view(named) != "sqlite") return true;
    return std::filesystem::exists(home / "config") && !resolve_store_url(home).empty();
}

TeamRecord Core::team(const std::optional<std::string>& positional) {
    const auto& as = identity_.as;
    if (!has_store()) {
        auto name = positional ? positional : identity_.team;
        if (!name && as && as->find('@') != std::string::npos) {
            name = as->substr(as->find('@') + 1);
        }
        if (name) throw team_not_found(*name, {});
        throw no_team_given({});
    }
    if (positional) return teams().find(*positional);
    if (identity_.team) return teams().find(*identity_.team);
    if (as) {
        if (auto at = as->find('@'); at != std::string::npos) {
            return teams().find(as->substr(at + 1));
        }
    }
    return teams().resolve(std::nullopt);
}

Caller Core::caller(const TeamRecord& team) {
    return teams().resolve_caller(team, identity_.as);
}

std::optional<TeamRecord> Core::named_team(const std::optional<std::string>& positional) {
    const auto& as = identity_.as;
    bool named = positional || identity_.team || (as && as->find('@') != std::string::npos);
    if (!named) return std::nullopt;
    return team(positional);
}

std::string Core::actor(const std::optional<TeamRecord>& team) {
    if (team) return caller(*team).id();
    return identity_.as.value_or("user");
}

std::string instructions_for(const Identity& identity) {
    std::string agent = identity.as.value_or("");
    std::string team = identity.team.value_or("");
    if (auto at = agent.find('@'); at != std::string::npos) {
        if (team.empty()) team = agent.substr(at + 1);
        agent.erase(at);
    }
    return agent_instructions(agent, agent.empty() ? "" : team);
}

std::unique_ptr<Changes> Core::watch_changes(bool messages) {
    return std::make_unique<StoreChanges>(
        store().home(), messages ? ChangeWatch::Wake::messages : ChangeWatch::Wake::any);
}

std::int64_t Core::newest_activity_id() {
    return last_activity_id(store().db());
}

std::vector<ActivityRow> Core::activity_after(std::int64_t since, int limit) {
    constexpr int kBatch = 1000;
    std::vector<ActivityRow> out;
    ActivityQuery q;
    q.since_id = since;
    while (static_cast<int>(out.size()) < limit) {
        q.limit = std::min(kBatch, limit - static_cast<int>(out.size()));
        auto rows = list_activity(store().db(), std::nullopt, q);
        for (const auto& e : rows) {
            nlohmann::json row = to_json(e);
            row["team"] = e.team ? nlohmann::json(*e.team) : nlohmann::json(nullptr);
            out.push_back({e.id, e.type, e.team, std::move(row)});
        }
        if (static_cast<int>(rows.size()) < *q.limit) break;
        q.since_id = rows.back().id;
    }
    return out;
}

void Core::become_tmux_client(const std::string& session, const std::string& pane) {
    tmux::TmuxServer::exec_attach(store().home(), session, pane);
}

}  // namespace team::ops
