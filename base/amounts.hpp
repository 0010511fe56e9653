// Amounts on the command line besides durations (base/duration.hpp): sizes of memory and sums
// of money (SPEC 18's limits).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace team {

// A positive size: bytes as a whole number, or with a unit K, M, G, T (powers of 1024; "KiB",
// "MB" and "GB" read the same), "512M", "1.5G". Throws a usage error naming `option` for
// anything else: zero, negative, malformed, an unknown unit, or more than 1 PiB.
std::int64_t parse_size(std::string_view text, std::string_view option);

// "512 MiB", "1.5 GiB", "734 B": for messages and tables.
std::string format_size(std::int64_t bytes);

// A positive sum in US dollars: "5", "0.25", "$12.50". Throws a usage error naming `option` for
// anything else: zero, negative, malformed, more than 1,000,000.
double parse_usd(std::string_view text, std::string_view option);

// "$0.0123", "$1.25", "$1,234.50": cents, or four decimals under a dollar.
std::string format_usd(double usd);

}  // namespace team
