// The settings rows (schema 14's config): the home's (no team) and each team's, written by
// team/config.cpp alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/time.hpp"
#include "state/store.hpp"

namespace team {

struct ConfigRow {
    std::optional<std::int64_t> team_id;  // none: the home's
    std::string key;
    std::string value;
    EpochMs set_at = 0;
    std::string set_by;
};

// The home's rows and, with a team, that team's: one query.
std::vector<ConfigRow> load_config(Store& store, std::optional<std::int64_t> team_id);
std::optional<ConfigRow> load_config_value(Store& store, std::optional<std::int64_t> team_id,
                                           const std::string& key);
void save_config(Store& store, const ConfigRow& row);
// True when there was a value to remove.
bool delete_config(Store& store, std::optional<std::int64_t> team_id, const std::string& key);

}  // namespace team
