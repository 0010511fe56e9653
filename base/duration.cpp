#include "base/duration.hpp"

#include <cmath>
#include <cstdlib>

#include "base/error.hpp"

namespace team {

Millis parse_duration(std::string_view text, std::string_view option) {
    auto bad = [&](const std::string& why) {
        return usage_error("invalid duration " + quote(text) + " for " + std::string(option) +
                           ": " + why + " (examples: 250ms, 5s, 2m, 1h)");
    };
    size_t i = 0;
    bool negative = false;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) negative = text[i++] == '-';
    size_t digits_start = i;
    bool seen_dot = false;
    while (i < text.size() &&
           ((text[i] >= '0' && text[i] <= '9') || (text[i] == '.' && !seen_dot))) {
        seen_dot = seen_dot || text[i] == '.';
        ++i;
    }
    std::string number(text.substr(digits_start, i - digits_start));
    if (number.empty() || number == ".") throw bad("it does not start with a number");
    std::string_view unit = text.substr(i);
    double scale;
    if (unit == "ms") {
        scale = 1;
    } else if (unit.empty() || unit == "s") {
        scale = 1000;
    } else if (unit == "m") {
        scale = 60'000;
    } else if (unit == "h") {
        scale = 3'600'000;
    } else {
        throw bad("unknown unit " + quote(unit));
    }
    double value = std::strtod(number.c_str(), nullptr) * scale;
    if (negative || value <= 0) throw bad("it must be more than zero");
    if (!std::isfinite(value) || value > 30.0 * 24 * 3'600'000)
        throw bad("it is more than 30 days");
    auto ms = static_cast<long long>(std::llround(value));
    if (ms == 0) throw bad("it must be at least 1ms");
    return Millis(ms);
}

std::string format_duration(Millis d) {
    long long ms = d.count();
    if (ms % 3'600'000 == 0) return std::to_string(ms / 3'600'000) + "h";
    if (ms % 60'000 == 0) return std::to_string(ms / 60'000) + "m";
    if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
    return std::to_string(ms) + "ms";
}

}  // namespace team
