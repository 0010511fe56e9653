#include "base/amounts.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "base/error.hpp"

namespace team {

namespace {

// The number at the start of `text` (digits, at most one point), its length in `used`; none
// for anything else.
bool leading_number(std::string_view text, double& value, std::size_t& used) {
    std::size_t i = 0;
    bool digits = false, point = false;
    while (i < text.size()) {
        char c = text[i];
        if (std::isdigit(static_cast<unsigned char>(c))) {
            digits = true;
        } else if (c == '.' && !point) {
            point = true;
        } else {
            break;
        }
        ++i;
    }
    if (!digits || i > 32) return false;
    value = std::strtod(std::string(text.substr(0, i)).c_str(), nullptr);
    used = i;
    return std::isfinite(value);
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

}  // namespace

std::int64_t parse_size(std::string_view text, std::string_view option) {
    auto bad = [&](const std::string& why) {
        return usage_error(std::string(option) + " " + quote(text) + ": " + why +
                           " (a size: bytes, or 512M, 1.5G; K, M, G, T are powers of 1024)");
    };
    double value = 0;
    std::size_t used = 0;
    if (!leading_number(text, value, used)) throw bad("not a size");
    std::string unit = lower(trim(text.substr(used)));
    double scale = 0;
    if (unit.empty() || unit == "b") {
        scale = 1;
    } else if (unit == "k" || unit == "kb" || unit == "kib") {
        scale = 1024.0;
    } else if (unit == "m" || unit == "mb" || unit == "mib") {
        scale = 1024.0 * 1024;
    } else if (unit == "g" || unit == "gb" || unit == "gib") {
        scale = 1024.0 * 1024 * 1024;
    } else if (unit == "t" || unit == "tb" || unit == "tib") {
        scale = 1024.0 * 1024 * 1024 * 1024;
    } else {
        throw bad("unknown unit " + quote(unit));
    }
    double bytes = value * scale;
    if (bytes < 1) throw bad("must be at least 1 byte");
    if (bytes > 1024.0 * 1024 * 1024 * 1024 * 1024) throw bad("more than 1 PiB");
    return static_cast<std::int64_t>(std::llround(bytes));
}

std::string format_size(std::int64_t bytes) {
    static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = static_cast<double>(bytes);
    int u = 0;
    while (v >= 1024 && u < 5) {
        v /= 1024;
        ++u;
    }
    char buf[32];
    if (u == 0) {
        std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
    } else {
        std::snprintf(buf, sizeof buf, v < 10 ? "%.1f %s" : "%.0f %s", v, units[u]);
    }
    return buf;
}

double parse_usd(std::string_view text, std::string_view option) {
    auto bad = [&](const std::string& why) {
        return usage_error(std::string(option) + " " + quote(text) + ": " + why +
                           " (US dollars: 5, 0.25, $12.50)");
    };
    std::string_view rest = trim(text);
    if (!rest.empty() && rest.front() == '$') rest.remove_prefix(1);
    double value = 0;
    std::size_t used = 0;
    if (!leading_number(rest, value, used) || used != rest.size()) throw bad("not a sum");
    if (value <= 0) throw bad("must be more than 0");
    if (value > 1'000'000) throw bad("more than 1,000,000");
    return value;
}

std::string format_usd(double usd) {
    char buf[48];
    if (usd < 1) {
        std::snprintf(buf, sizeof buf, "$%.4f", usd);
    } else {
        std::snprintf(buf, sizeof buf, "$%.2f", usd);
    }
    return buf;
}

}  // namespace team
