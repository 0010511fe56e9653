// Durations on the command line (SPEC 1.3): 250ms, 5s, 2m, 1h; a bare number is seconds.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace team {

using Millis = std::chrono::milliseconds;

// Parses a positive duration. Throws a usage error naming `option` for anything else:
// zero, negative, malformed, an unknown unit, or more than 30 days.
Millis parse_duration(std::string_view text, std::string_view option);

// "250ms", "5s", "2m", "1h", "1.5s" - the shortest exact form, for messages and JSON.
std::string format_duration(Millis d);

}  // namespace team
