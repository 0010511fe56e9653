// The rows of `team land` (SPEC 20; schema 17's lands and land_items): each land and each branch
// it takes, written by team/land.cpp alone, ahead of what git is asked (see there). Writes run
// inside Store::write.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/time.hpp"
#include "state/store.hpp"

namespace team {

struct LandRow {
    std::int64_t id = 0;
    std::int64_t team_id = 0;
    EpochMs started_at = 0;
    std::optional<EpochMs> ended_at;
    std::string started_by;
    std::int64_t pid = 0;
    std::string into;
    std::string strategy;
    std::string check;
    std::optional<std::string> scratch;
    std::string status = "running";  // running | done | stopped | interrupted
};

struct LandItemRow {
    std::int64_t land_id = 0;
    int position = 0;
    std::string agent;
    std::optional<std::int64_t> agent_id;
    std::string branch;
    std::string tip;
    // queued | checking | landing, then landed | conflict | check_failed | skipped | interrupted
    std::string state = "queued";
    std::optional<std::string> onto, candidate, shell_id;
    nlohmann::json result = nullptr;
    std::optional<EpochMs> decided_at;
};

std::int64_t insert_land(Store& store, const LandRow& land);
void insert_land_item(Store& store, const LandItemRow& item);
// The land's scratch worktree (none: removed).
void set_land_scratch(Store& store, std::int64_t land_id, const std::optional<std::string>& path);
void end_land(Store& store, std::int64_t land_id, const std::string& status, EpochMs at);
// The item's progress: its state and what it was brought onto, made and checked by.
void set_land_item_state(Store& store, const LandItemRow& item);
// The item decided: its outcome (its state), the row as shown, when.
void decide_land_item(Store& store, const LandItemRow& item);

// The team's lands, newest first (at most `limit`), and one land's items in order.
std::vector<LandRow> team_lands(Store& store, std::int64_t team_id, int limit);
std::vector<LandRow> running_lands(Store& store, std::int64_t team_id);
std::vector<LandItemRow> land_items(Store& store, std::int64_t land_id);
// The landings of `branch` at `tip` that may have moved the target, newest first: those
// recorded landed, and those recorded interrupted with a candidate (a land killed as its git
// moved the target: that git may end after the next land's look, holding the candidate there).
std::vector<LandItemRow> landed_items(Store& store, const std::string& branch,
                                      const std::string& tip);

}  // namespace team
