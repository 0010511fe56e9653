#include "cli/usage_cells.hpp"

#include <cstdio>

#include "base/amounts.hpp"

namespace team::cli {

std::string tokens_cell(long long n) {
    char buf[32];
    if (n < 1000) {
        std::snprintf(buf, sizeof buf, "%lld", n);
    } else if (n < 1'000'000) {
        std::snprintf(buf, sizeof buf, "%.1fk", static_cast<double>(n) / 1e3);
    } else if (n < 1'000'000'000) {
        std::snprintf(buf, sizeof buf, "%.1fM", static_cast<double>(n) / 1e6);
    } else {
        std::snprintf(buf, sizeof buf, "%.1fG", static_cast<double>(n) / 1e9);
    }
    return buf;
}

std::string time_cell(long long ms) {
    char buf[32];
    long long s = ms / 1000;
    if (ms < 60'000) {
        std::snprintf(buf, sizeof buf, "%.1fs", static_cast<double>(ms) / 1000);
    } else if (s < 3600) {
        std::snprintf(buf, sizeof buf, "%lldm%02llds", s / 60, s % 60);
    } else {
        std::snprintf(buf, sizeof buf, "%lldh%02lldm", s / 3600, s / 60 % 60);
    }
    return buf;
}

std::string cost_cell(const nlohmann::json& usage) {
    if (!usage.is_object()) return "-";
    if (usage["cost"].is_number()) return format_usd(usage["cost"].get<double>());
    return "unknown";
}

std::string memory_cell(const nlohmann::json& usage) {
    if (!usage.is_object() || !usage["memory"].is_object()) return "-";
    const auto& m = usage["memory"];
    if (m["pss"].is_number() && m["pss"].get<long long>() > 0) return format_size(m["pss"]);
    if (m["rss"].is_number()) return format_size(m["rss"]);
    return "-";
}

std::string limits_cell(const nlohmann::json& usage) {
    if (!usage.is_object() || !usage["limits"].is_object()) return "-";
    const auto& l = usage["limits"];
    std::string out;
    auto add = [&](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
    if (l["maxTokens"].is_number()) add(tokens_cell(l["maxTokens"].get<long long>()) + " tokens");
    if (l["maxCost"].is_number()) add(format_usd(l["maxCost"].get<double>()));
    if (l["maxMemory"].is_number()) add(format_size(l["maxMemory"].get<long long>()));
    if (l["maxRuntime"].is_string()) add(l["maxRuntime"].get<std::string>());
    return out.empty() ? "-" : out;
}

}  // namespace team::cli
