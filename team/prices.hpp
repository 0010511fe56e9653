// What a model's tokens cost (SPEC 18): list prices in US dollars per million tokens, per model,
// for input, output, cache reads and cache writes. team ships the known models' list prices
// with the date they were taken and where from; `team config set prices FILE` adds models or
// replaces their prices (a file of the same form). A model that is in neither has no price: its
// cost is unknown, never guessed.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "state/store.hpp"
#include "state/usage_rows.hpp"

namespace team {

struct ModelPrice {
    double input = 0, output = 0, cache_read = 0, cache_write = 0;  // USD per million tokens
};

struct PriceTable {
    std::string taken;   // the date the prices were taken
    std::string source;  // where from
    std::map<std::string, ModelPrice> models;
    // The price of `model`: its own, else that of the name in the table it is a dated release
    // of ("claude-sonnet-4-5-20250929", "gpt-4.1-2025-04-14", "...-latest"); none when unknown
    // (never the price of a name it merely starts with: claude-opus-4-8 is not claude-opus-4).
    const ModelPrice* find(std::string_view model) const;
};

// The table team ships.
const PriceTable& shipped_prices();
// A table from its JSON form ({"taken", "source", "models": {NAME: {"input", "output",
// "cacheRead", "cacheWrite"}}}); a usage error naming `where` for anything else.
PriceTable parse_prices(const nlohmann::json& doc, std::string_view where);
// The shipped table with the home's `prices` over it.
PriceTable prices_in_force(Store& store);
nlohmann::json to_json(const PriceTable& table);

// The cost of the tokens of each model; none when a model with tokens has no price (its name
// added to `unknown`).
std::optional<double> cost_of(const PriceTable& prices,
                              const std::map<std::string, ModelTokens>& models,
                              std::vector<std::string>* unknown = nullptr);

// The config check of `prices`: FILE read and checked; its table is what is kept.
std::string check_prices_file(std::string_view key, std::string_view value);

}  // namespace team
