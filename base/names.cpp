#include "base/names.hpp"

#include <algorithm>

#include "base/error.hpp"

namespace team {

namespace {

bool is_alnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// Optimal string alignment distance: insertions, deletions, substitutions and transpositions
// of neighbours ("wbe" is one step from "web") each cost one.
size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
    for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        for (size_t j = 1; j <= b.size(); ++j) {
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
            }
        }
    }
    return d[a.size()][b.size()];
}

}  // namespace

bool is_valid_name(std::string_view name) {
    if (name.empty() || name.size() > 64 || !is_alnum(name[0])) return false;
    return std::all_of(name.begin(), name.end(),
                       [](char c) { return is_alnum(c) || c == '_' || c == '-'; });
}

void check_name(std::string_view name, std::string_view what) {
    if (is_valid_name(name)) return;
    std::string why;
    if (name.empty()) {
        why = "it is empty";
    } else if (name.size() > 64) {
        why = "it is longer than 64 characters";
    } else if (!is_alnum(name[0])) {
        why = "it must start with a letter or digit";
    } else {
        why = "only letters, digits, '_' and '-' are allowed";
    }
    throw usage_error("invalid " + std::string(what) + " " + quote(name) + ": " + why);
}

bool is_env_entry(std::string_view kv) {
    auto eq = kv.find('=');
    if (eq == std::string_view::npos || eq == 0) return false;
    for (size_t i = 0; i < eq; ++i) {
        char c = kv[i];
        bool ok = c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                  (i > 0 && c >= '0' && c <= '9');
        if (!ok) return false;
    }
    return kv.find('\0') == std::string_view::npos;
}

std::optional<std::string> closest_name(std::string_view wrong,
                                        const std::vector<std::string>& candidates) {
    std::optional<std::string> best;
    size_t best_distance = 0;
    for (const auto& candidate : candidates) {
        size_t d = edit_distance(wrong, candidate);
        if (!best || d < best_distance) {
            best = candidate;
            best_distance = d;
        }
    }
    // Accept roughly one typo per three characters, at least one.
    size_t allowed = std::max<size_t>(1, (wrong.size() + 1) / 3);
    if (best && best_distance <= allowed) return best;
    return std::nullopt;
}

std::string did_you_mean(std::string_view wrong, const std::vector<std::string>& candidates) {
    auto best = closest_name(wrong, candidates);
    return best ? "; did you mean " + quote(*best) + "?" : "";
}

}  // namespace team
