// Test support for the unit tests of the core: a home on a temporary directory with a real store,
// either opened directly with team `web` ready (TeamStore: the repositories and rooms) or run
// through the operations table with a strict fake tmux (OpsHome: the operations).
#pragma once

#include <catch2/catch.hpp>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/time.hpp"
#include "ops/core.hpp"
#include "ops/operation.hpp"
#include "state/members.hpp"
#include "state/store.hpp"
#include "team/teams.hpp"
#include "tests/support/fake_tmux.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/process.hpp"

namespace team::test {

inline constexpr EpochMs kStart = 1'800'000'000'000;

// A clock that moves only when a test moves it. Time passes for both clocks as `t` moves; `step`
// moves the wall clock alone (NTP, date -s). The boot clock reads `boot_at_start` at kStart.
class FixedClock final : public Clock {
  public:
    EpochMs now() const override { return t + step; }
    std::int64_t boot_ms() const override { return t - kStart + boot_at_start; }
    EpochMs t = kStart;
    EpochMs step = 0;
    std::int64_t boot_at_start = 0;
};

// A store on a temporary directory with team `web` (leader `lead`).
struct TeamStore {
    TempDir tmp;
    Store store{tmp.path()};
    FixedClock clock;
    Teams teams{store, clock};
    TeamRecord team = make_team("web");
    Caller lead = teams.resolve_caller(team, std::nullopt);

    TeamRecord make_team(const std::string& name) {
        return teams.create({name, "", tmp.path().string(), "lead", {}, {}, {}});
    }

    // A member inserted as the spawn would leave it once started (no supervisor: nothing of it
    // runs); returns it as a caller.
    Caller member(const std::string& name, const std::string& status = "active",
                  const TeamRecord* in = nullptr) {
        const TeamRecord& t = in ? *in : team;
        store.write([&] { insert_member(store.db(), t.id, name, status, clock.now()); });
        if (status == "terminated") return Caller{name, t.name, false, 0};
        return teams.resolve_caller(t, name);
    }

    // The member record of that name (the live one, else the newest).
    AgentRecord record(const std::string& name) {
        auto a = find_member(store, team, name);
        REQUIRE(a);
        return *a;
    }
};

// A home on a temporary directory, run through the operations table as a face runs it, whose
// tmux is a strict fake: an operation that reaches tmux unexpectedly fails the test.
struct OpsHome {
    TempDir dir;
    std::filesystem::path home = dir.path() / "home";

    std::unique_ptr<ops::Core> core(std::optional<std::string> as = std::nullopt,
                                    std::optional<std::string> team = std::nullopt) {
        return std::make_unique<ops::Core>(
            ops::Identity{home.string(), std::move(team), std::move(as)},
            [](const auto&) { return std::make_unique<FakeTmux>(); });
    }

    ops::Result run(const char* name, nlohmann::json values,
                    std::optional<std::string> as = std::nullopt,
                    ops::Naming naming = ops::Naming::json, ops::Progress progress = {}) {
        auto c = core(std::move(as));
        const ops::Operation* op = ops::find_operation(name);
        REQUIRE(op != nullptr);
        return ops::invoke(*c, *op, values, naming, std::move(progress));
    }
};

}  // namespace team::test
