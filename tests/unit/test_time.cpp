#include <catch2/catch.hpp>

#include "base/store_clock.hpp"
#include "base/time.hpp"

using namespace team;

TEST_CASE("times are ISO-8601 UTC with milliseconds", "[time]") {
    CHECK(iso8601(0) == "1970-01-01T00:00:00.000Z");
    CHECK(iso8601(1795341845123) == "2026-11-22T10:04:05.123Z");
}

TEST_CASE("an ISO-8601 time reads back as the time it was written from", "[time]") {
    for (EpochMs t : {EpochMs{0}, EpochMs{1795341845123}, EpochMs{951782400999}}) {
        CHECK(parse_iso8601(iso8601(t)) == t);
    }
    CHECK(parse_iso8601("") == 0);
    CHECK(parse_iso8601("2026-11-22 10:04:05") == 0);
    CHECK(parse_iso8601("2026-11-22T10:04:05.123+01") == 0);
}

TEST_CASE("relative times read as a person would say them", "[time]") {
    EpochMs now = 1'000'000'000;
    CHECK(relative_time(now, now) == "just now");
    CHECK(relative_time(now - 42'000, now) == "42 s ago");
    CHECK(relative_time(now - 5 * 60'000, now) == "5 min ago");
    CHECK(relative_time(now - 3 * 3'600'000, now) == "3 h ago");
    CHECK(relative_time(now - 86'400'000, now) == "1 day ago");
    CHECK(relative_time(now - 3 * 86'400'000LL, now) == "3 days ago");
    CHECK(relative_time(now + 5 * 60'000, now) == "in 5 min");
}

TEST_CASE("the system clock is close to time()", "[time]") {
    SystemClock clock;
    auto diff = clock.now() / 1000 - static_cast<EpochMs>(::time(nullptr));
    CHECK(diff >= -1);
    CHECK(diff <= 1);
}

TEST_CASE(
    "the store's clock: a difference beyond the measurement's error is added, one within "
    "it is not",
    "[time]") {
    using team::measure_store_clock;
    // The server 5 s ahead, measured over a 2 ms round trip.
    measure_store_clock(1'000'005'001, 1'000'000'000, 1'000'000'002);
    CHECK(team::store_clock_offset() == 5000);
    team::SystemClock clock;
    auto now = clock.now();
    CHECK(now - team::machine_wall_ms() >= 4999);
    CHECK(now - team::machine_wall_ms() <= 5001);
    // Behind by 3 s.
    measure_store_clock(999'997'001, 1'000'000'000, 1'000'000'002);
    CHECK(team::store_clock_offset() == -3000);
    // Within the error (half the round trip, and 2 ms of rounding): none.
    measure_store_clock(1'000'000'004, 1'000'000'000, 1'000'000'002);
    CHECK(team::store_clock_offset() == 0);
    measure_store_clock(1'000'000'010, 1'000'000'000, 1'000'000'020);
    CHECK(team::store_clock_offset() == 0);
    CHECK(clock.now() - team::machine_wall_ms() <= 1);
}
