#include <catch2/catch.hpp>

#include "base/error.hpp"
#include "base/names.hpp"

using namespace team;

TEST_CASE("names follow SPEC 1.2", "[names]") {
    for (std::string good : std::vector<std::string>{"a", "web", "worker-2", "A_b-C9", "9lives",
                                                     std::string(64, 'x')}) {
        CHECK(is_valid_name(good));
    }
    for (std::string bad :
         std::vector<std::string>{"", "a b", "x;y", "../x", "$(id)", "-lead", "_x", "wörker",
                                  "a\nb", std::string(65, 'x'), "a@b", "a/b", "'q'"}) {
        CHECK_FALSE(is_valid_name(bad));
    }
}

TEST_CASE("check_name quotes the bad name and says why", "[names]") {
    try {
        check_name("x;y", "team name");
        FAIL("no error");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::usage);
        CHECK(std::string(e.what()) ==
              "invalid team name 'x;y': only letters, digits, '_' and '-' are allowed");
    }
    CHECK_THROWS_WITH(check_name("", "agent name"), Catch::Contains("it is empty"));
    CHECK_THROWS_WITH(check_name(std::string(65, 'a'), "agent name"),
                      Catch::Contains("longer than 64"));
    CHECK_THROWS_WITH(check_name("a\nb", "agent name"), Catch::Contains("'a\\nb'"));
}

TEST_CASE("did you mean finds likely typos only", "[names]") {
    std::vector<std::string> names{"web", "worker", "api-server"};
    CHECK(closest_name("wbe", names) == "web");
    CHECK(closest_name("wroker", names) == "worker");
    CHECK(closest_name("api-srever", names) == "api-server");
    CHECK_FALSE(closest_name("zzz", names));
    CHECK_FALSE(closest_name("x", {}));
    CHECK(did_you_mean("wroker", names) == "; did you mean 'worker'?");
    CHECK(did_you_mean("nothing-like-it", names).empty());
}

TEST_CASE("quote escapes control characters and shortens long values", "[names]") {
    CHECK(quote("a\tb\x1b") == "'a\\tb\\x1b'");
    std::string long_value(1 << 20, 'z');
    CHECK(quote(long_value).size() < 100);
}
