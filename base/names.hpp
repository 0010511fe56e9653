// Names of teams and agents (SPEC 1.2) and "did you mean" suggestions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace team {

// True when `name` matches ^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$.
bool is_valid_name(std::string_view name);

// Throws a usage error quoting the bad name; `what` is "team name", "agent name"...
void check_name(std::string_view name, std::string_view what);

// True when `kv` is KEY=VALUE with KEY a valid environment variable name.
bool is_env_entry(std::string_view kv);

// The closest candidate to `wrong` by edit distance, if one is close enough to be a likely typo.
std::optional<std::string> closest_name(std::string_view wrong,
                                        const std::vector<std::string>& candidates);

// "; did you mean 'x'?" or "" - to append to a not-found message.
std::string did_you_mean(std::string_view wrong, const std::vector<std::string>& candidates);

}  // namespace team
