#include "team/config.hpp"

#include <cstdio>

#include "base/amounts.hpp"
#include "base/duration.hpp"
#include "base/error.hpp"
#include "base/names.hpp"
#include "base/text.hpp"
#include "state/activity.hpp"
#include "state/config_rows.hpp"
#include "state/usage_rows.hpp"
#include "team/prices.hpp"

namespace team {

// A command line that `sh -c` runs: one line of text, no control characters.
std::string check_command(std::string_view key, std::string_view value) {
    check_text(value, 4096, key);
    if (value.find_first_not_of(" \t") == std::string_view::npos) {
        throw usage_error(std::string(key) + " needs a command (to clear it: team config unset " +
                          std::string(key) + ")");
    }
    for (unsigned char c : value) {
        if (c < 0x20 && c != '\t') {
            throw usage_error(std::string(key) +
                              " is one line of text: a newline or another control character "
                              "is not taken");
        }
    }
    return std::string(value);
}

namespace {

std::string check_duration(std::string_view key, std::string_view value) {
    return format_duration(parse_duration(value, key));
}

std::string check_sample_every(std::string_view key, std::string_view value) {
    auto d = parse_duration(value, key);
    if (d < std::chrono::milliseconds(100)) {
        throw usage_error(std::string(key) + " " + quote(value) + ": at least 100ms");
    }
    return format_duration(d);
}

std::string check_count(std::string_view key, std::string_view value) {
    std::string v(value);
    if (v.empty() || v.size() > 6 || v.find_first_not_of("0123456789") != std::string::npos ||
        std::stoll(v) < 1) {
        throw usage_error(std::string(key) + " " + quote(value) +
                          ": a whole number from 1 to 999999");
    }
    return std::to_string(std::stoll(v));
}

std::string check_usd(std::string_view key, std::string_view value) {
    double usd = parse_usd(value, key);
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.10g", usd);
    return buf;
}

const std::vector<ConfigKey> kConfigKeys{
    {.name = "notify",
     .home = true,
     .team = false,
     .default_value = "",
     .help = "a command run through sh, detached, with each event (needs_input, idle, ended) as "
             "one JSON document on its stdin",
     .check = check_command},
    {.name = "notify-timeout",
     .home = true,
     .team = false,
     .default_value = "10s",
     .help = "how long the notify command may run before its process group is killed",
     .check = check_duration},
    {.name = "idle-after",
     .home = true,
     .team = true,
     .default_value = "5s",
     .help = "how long a pane agent's screen stays still before it counts as idle",
     .check = check_duration},
    {.name = "sample-every",
     .home = true,
     .team = true,
     .default_value = "2s",
     .help = "how often each agent's supervisor samples its tree's CPU and memory, reads its "
             "usage record and checks its limits",
     .check = check_sample_every},
    {.name = "prices",
     .home = true,
     .team = false,
     .default_value = "",
     .help = "a price table file (JSON, US dollars per million tokens per model) whose models "
             "add to or replace the prices team ships; kept as read",
     .check = check_prices_file},
    {.name = "check",
     .home = false,
     .team = true,
     .default_value = "",
     .help = "the team's check: a command run through sh on each branch `team land` brings in, "
             "whose exit 0 lets the branch land",
     .check = check_command},
    {.name = "check-timeout",
     .home = true,
     .team = true,
     .default_value = "30m",
     .help = "how long the team's check may run before its tree is killed and the branch "
             "counts as failed",
     .check = check_duration},
    {.name = "max-agents",
     .home = false,
     .team = true,
     .default_value = "",
     .help = "the most live agents the team may have: a spawn beyond it is refused",
     .check = check_count},
    {.name = "max-cost",
     .home = false,
     .team = true,
     .default_value = "",
     .help = "the most the team's agents may spend, in US dollars: at 80 % the leader is "
             "warned, at 100 % its agents are stopped and spawns refused",
     .check = check_usd},
};

std::vector<std::string> key_names() {
    std::vector<std::string> names;
    for (const auto& k : kConfigKeys) names.emplace_back(k.name);
    return names;
}

ConfigEntry entry_of(const ConfigKey& key, const std::vector<ConfigRow>& rows) {
    ConfigEntry e;
    e.key = std::string(key.name);
    const ConfigRow* home = nullptr;
    const ConfigRow* team = nullptr;
    for (const auto& r : rows) {
        if (r.key != key.name) continue;
        (r.team_id ? team : home) = &r;
    }
    const ConfigRow* row = team ? team : home;
    if (row) {
        e.value = row->value;
        e.from = team ? "team" : "home";
        e.set_at = row->set_at;
        e.set_by = row->set_by;
    } else if (!key.default_value.empty()) {
        e.value = std::string(key.default_value);
        e.from = "default";
    } else {
        e.from = "unset";
    }
    return e;
}

std::optional<std::int64_t> team_id_of(const std::optional<TeamRecord>& team) {
    if (team) return team->id;
    return std::nullopt;
}

void check_scope(const ConfigKey& key, const std::optional<TeamRecord>& team) {
    if (team && !key.team) {
        throw usage_error(
            "config key " + quote(key.name) +
            " is the home's, not a team's: set it without --team (and without TEAM_NAME)");
    }
    if (!team && !key.home) {
        throw usage_error("config key " + quote(key.name) + " is a team's: name the team (--team)");
    }
}

}  // namespace

const std::vector<ConfigKey>& config_keys() {
    return kConfigKeys;
}

const ConfigKey& config_key(std::string_view name) {
    for (const auto& k : kConfigKeys) {
        if (k.name == name) return k;
    }
    std::string list;
    for (const auto& n : key_names()) list += (list.empty() ? "" : ", ") + n;
    throw usage_error("unknown config key " + quote(name) + did_you_mean(name, key_names()) +
                      " (one of " + list + ")");
}

nlohmann::json to_json(const ConfigEntry& e) {
    nlohmann::json j = {{"key", e.key}, {"from", e.from}};
    j["value"] = e.value ? nlohmann::json(*e.value) : nlohmann::json(nullptr);
    j["setAt"] = e.set_at ? nlohmann::json(iso8601(*e.set_at)) : nlohmann::json(nullptr);
    j["setBy"] = e.set_by ? nlohmann::json(*e.set_by) : nlohmann::json(nullptr);
    return j;
}

std::vector<ConfigEntry> Config::list(const std::optional<TeamRecord>& team) {
    auto rows = load_config(store_, team_id_of(team));
    std::vector<ConfigEntry> out;
    for (const auto& k : kConfigKeys) out.push_back(entry_of(k, rows));
    return out;
}

ConfigEntry Config::get(const std::optional<TeamRecord>& team, std::string_view name) {
    const auto& key = config_key(name);
    return entry_of(key, load_config(store_, team_id_of(team)));
}

ConfigEntry Config::set(const std::optional<TeamRecord>& team, const std::string& by,
                        std::string_view name, std::string_view value) {
    const auto& key = config_key(name);
    check_scope(key, team);
    std::string kept = key.check(key.name, value);
    return store_.write([&] {
        ConfigRow row{team_id_of(team), std::string(key.name), kept, clock_.now(), by};
        save_config(store_, row);
        // A new max-cost is warned of and enforced afresh.
        if (team && key.name == "max-cost") save_team_budget(store_, team->id, {});
        append_activity(store_.db(), team_id_of(team), row.set_at, by, "config_set",
                        {{"key", row.key}, {"value", kept}, {"scope", team ? "team" : "home"}});
        return entry_of(key, load_config(store_, team_id_of(team)));
    });
}

std::pair<bool, ConfigEntry> Config::unset(const std::optional<TeamRecord>& team,
                                           const std::string& by, std::string_view name) {
    const auto& key = config_key(name);
    check_scope(key, team);
    return store_.write([&] {
        bool removed = delete_config(store_, team_id_of(team), std::string(key.name));
        if (removed) {
            append_activity(store_.db(), team_id_of(team), clock_.now(), by, "config_unset",
                            {{"key", std::string(key.name)}, {"scope", team ? "team" : "home"}});
        }
        return std::make_pair(removed, entry_of(key, load_config(store_, team_id_of(team))));
    });
}

std::optional<std::string> config_value(Store& store, std::optional<std::int64_t> team_id,
                                        std::string_view name) {
    const auto& key = config_key(name);
    if (team_id) {
        if (auto row = load_config_value(store, team_id, std::string(name))) return row->value;
    }
    if (auto row = load_config_value(store, std::nullopt, std::string(name))) return row->value;
    if (!key.default_value.empty()) return std::string(key.default_value);
    return std::nullopt;
}

std::chrono::milliseconds config_duration(Store& store, std::optional<std::int64_t> team_id,
                                          std::string_view name) {
    const auto& key = config_key(name);
    auto value = config_value(store, team_id, name);
    try {
        if (value) return parse_duration(*value, name);
    } catch (const Error&) {
    }
    return parse_duration(key.default_value, name);
}

}  // namespace team
