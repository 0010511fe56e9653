#include <catch2/catch.hpp>

#include "base/duration.hpp"
#include "base/error.hpp"

using namespace team;

TEST_CASE("durations of SPEC 1.3 parse", "[duration]") {
    CHECK(parse_duration("250ms", "--grace") == Millis(250));
    CHECK(parse_duration("5s", "--grace") == Millis(5000));
    CHECK(parse_duration("2m", "--grace") == Millis(120'000));
    CHECK(parse_duration("1h", "--grace") == Millis(3'600'000));
    CHECK(parse_duration("7", "--grace") == Millis(7000));
    CHECK(parse_duration("1.5s", "--grace") == Millis(1500));
    CHECK(parse_duration("0.5", "--grace") == Millis(500));
}

TEST_CASE("bad durations are usage errors naming the option", "[duration]") {
    for (const char* bad : {"0", "0s", "-1s", "-5", "", "s", "5x", "5 s", "five", "1e3", "5ss",
                            "0.0001s", "1..2s", "99999h", "nan", "inf", "5s;rm"}) {
        INFO(bad);
        try {
            parse_duration(bad, "--timeout");
            FAIL("accepted");
        } catch (const Error& e) {
            CHECK(e.code() == ErrorCode::usage);
            CHECK_THAT(e.what(), Catch::Contains("--timeout"));
        }
    }
}

TEST_CASE("durations format back to their shortest form", "[duration]") {
    CHECK(format_duration(Millis(250)) == "250ms");
    CHECK(format_duration(Millis(5000)) == "5s");
    CHECK(format_duration(Millis(120'000)) == "2m");
    CHECK(format_duration(Millis(3'600'000)) == "1h");
    CHECK(format_duration(Millis(1500)) == "1500ms");
}
