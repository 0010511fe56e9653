// An agent's spending as table cells (SPEC 18), for `team usage` and `team agents`.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace team::cli {

// "0", "950", "12.3k", "4.1M": a count of tokens.
std::string tokens_cell(long long n);
// "$0.0123", "$1.25", "unknown" (a model without a price), "-" when nothing says.
std::string cost_cell(const nlohmann::json& usage);
// The tree's PSS (RSS when PSS is unknown): "210 MiB"; "-" before the first sample.
std::string memory_cell(const nlohmann::json& usage);
// "0.4s", "12.0s", "3m02s", "2h05m": CPU or wall time.
std::string time_cell(long long ms);
// Its limits as set: "tokens 1.0M, $5.00, 2.0 GiB, 1h"; "-" when none.
std::string limits_cell(const nlohmann::json& usage);

}  // namespace team::cli
