// The amounts of SPEC 18's limits (base/amounts.hpp) and the price table's rules
// (team/prices.hpp): a dated release takes its model's price, another name never does.
#include <catch2/catch.hpp>

#include "base/amounts.hpp"
#include "base/error.hpp"
#include "team/prices.hpp"

TEST_CASE("amounts: sizes and sums read as people write them, the rest refused", "[usage]") {
    using team::parse_size;
    using team::parse_usd;
    CHECK(parse_size("512M", "--max-memory") == 512LL << 20);
    CHECK(parse_size("1.5G", "--max-memory") == 3LL << 29);
    CHECK(parse_size("2gib", "--max-memory") == 2LL << 30);
    CHECK(parse_size("4096", "--max-memory") == 4096);
    CHECK(parse_size("64 MB", "--max-memory") == 64LL << 20);
    for (const char* bad : {"", "0", "-1G", "G", "12X", "1..5G", "2048T", "1e3", "$(x)"}) {
        INFO(bad);
        CHECK_THROWS_AS(parse_size(bad, "--max-memory"), team::Error);
    }
    CHECK(parse_usd("5", "--max-cost") == 5.0);
    CHECK(parse_usd("$12.50", "--max-cost") == 12.5);
    CHECK(parse_usd("0.25", "--max-cost") == 0.25);
    for (const char* bad : {"", "0", "-1", "abc", "$", "1e9", "2000000", "5;rm", "1,5"}) {
        INFO(bad);
        CHECK_THROWS_AS(parse_usd(bad, "--max-cost"), team::Error);
    }
    CHECK(team::format_usd(0.0123) == "$0.0123");
    CHECK(team::format_usd(1.5) == "$1.50");
    CHECK(team::format_size(512LL << 20) == "512 MiB");
    CHECK(team::format_size(3LL << 29) == "1.5 GiB");
}

TEST_CASE("prices: a dated release takes its model's price, another name is unknown", "[usage]") {
    const auto& t = team::shipped_prices();
    CHECK_FALSE(t.taken.empty());
    CHECK(t.find("claude-sonnet-4-5") == t.find("claude-sonnet-4-5-20250929"));
    CHECK(t.find("claude-sonnet-4-5-20250929") != nullptr);
    CHECK(t.find("gpt-4.1-2025-04-14") == t.find("gpt-4.1"));
    CHECK(t.find("gemini-2.5-flash") != t.find("gemini-2.5-flash-lite"));
    // Another model, not a release of the one it starts with.
    CHECK(t.find("claude-opus-4-9") == nullptr);
    CHECK(t.find("claude-opus-4-8")->input == 5);
    CHECK(t.find("gpt-5-turbo") == nullptr);
    CHECK(t.find("") == nullptr);

    std::map<std::string, team::ModelTokens> models;
    models["claude-haiku-4-5-20251001"] = {1, 1'000'000, 1'000'000, 1'000'000, 1'000'000};
    auto cost = team::cost_of(t, models);
    REQUIRE(cost);
    CHECK(*cost == Approx(1 + 5 + 0.1 + 1.25));
    models["acme"] = {1, 10, 0, 0, 0};
    std::vector<std::string> unknown;
    CHECK_FALSE(team::cost_of(t, models, &unknown));
    CHECK(unknown == std::vector<std::string>{"acme"});

    auto own = team::parse_prices(
        nlohmann::json::parse(R"({"models": {"acme": {"input": 2, "output": 8}}})"), "test");
    CHECK(own.find("acme-latest")->output == 8);
    CHECK_THROWS_AS(
        team::parse_prices(nlohmann::json::parse(R"({"models": {"m": {"input": -1}}})"), "test"),
        team::Error);
}
