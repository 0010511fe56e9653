// Settings (SPEC 17): `team config get | set | unset KEY [VALUE] [--team T]`. Each key is
// declared once here, with where it may be set (the home, a team, or both), its default and how
// a value is checked. A team's value wins over the home's, which wins over the default; every
// look says which it came from. Issue 39 brings `notify` and `idle-after`; later issues add
// theirs to kConfigKeys.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/time.hpp"
#include "state/records.hpp"
#include "state/store.hpp"

namespace team {

struct ConfigKey {
    std::string_view name;
    bool home = true;                // may be set for the home
    bool team = true;                // may be set for a team
    std::string_view default_value;  // "" when none
    std::string_view help;
    // Checks a value and returns it as it is kept; throws a usage error naming the key.
    std::string (*check)(std::string_view key, std::string_view value);
};

// Every key, in the order `team config` lists them.
const std::vector<ConfigKey>& config_keys();
// The key of that name; a usage error naming the keys there are when unknown.
const ConfigKey& config_key(std::string_view name);

struct ConfigEntry {
    std::string key;
    std::optional<std::string> value;  // none: not set and no default
    std::string from;                  // team, home, default, unset
    std::optional<EpochMs> set_at;
    std::optional<std::string> set_by;
};

nlohmann::json to_json(const ConfigEntry& entry);

class Config {
  public:
    Config(Store& store, const Clock& clock) : store_(store), clock_(clock) {}

    // Every key as the team (or, without one, the home) sees it.
    std::vector<ConfigEntry> list(const std::optional<TeamRecord>& team);
    ConfigEntry get(const std::optional<TeamRecord>& team, std::string_view key);
    // With a team: the team's value (a key that only the home takes is refused); without: the
    // home's. Returns the entry as it now reads.
    ConfigEntry set(const std::optional<TeamRecord>& team, const std::string& by,
                    std::string_view key, std::string_view value);
    // Returns whether a value was there to remove, and the entry as it now reads.
    std::pair<bool, ConfigEntry> unset(const std::optional<TeamRecord>& team, const std::string& by,
                                       std::string_view key);

  private:
    Store& store_;
    const Clock& clock_;
};

// Checks a command that `sh -c` runs (notify, check): one line of text, no control
// characters, not blank. Returns it; throws a usage error naming `key`.
std::string check_command(std::string_view key, std::string_view value);

// The value in force for `team_id` (none: the home's), inside or outside a write: the team's,
// the home's, else the default; none when neither is set and there is no default.
std::optional<std::string> config_value(Store& store, std::optional<std::int64_t> team_id,
                                        std::string_view key);
// A duration key's value in force (its default when unset or unreadable).
std::chrono::milliseconds config_duration(Store& store, std::optional<std::int64_t> team_id,
                                          std::string_view key);

}  // namespace team
