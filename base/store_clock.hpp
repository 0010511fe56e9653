// The store's clock (SPEC 16: times come from the store's clock, not the host's). The homes of a
// shared store stamp their records and compare deadlines set on other machines: they must agree
// on the time. Opening a PostgreSQL store measures how far the server's clock is from this
// machine's (state/pg_db.cpp); SystemClock::now() (base/time.hpp) adds that. A SQLite home has
// no other clock: nothing is added.
#pragma once

#include <cstdint>

namespace team {

// Sets what SystemClock::now() adds to this machine's wall clock, from one measurement: the
// server's time `server_ms`, taken between this machine's `sent_ms` and `received_ms`. A
// difference within the measurement's error (half the round trip, and a millisecond of rounding
// on each side) counts as none, so that homes on one machine keep exactly its clock.
void measure_store_clock(std::int64_t server_ms, std::int64_t sent_ms, std::int64_t received_ms);

// What is added now (ms); 0 until a store's clock was measured.
std::int64_t store_clock_offset();

// This machine's wall clock, milliseconds since the epoch, with nothing added.
std::int64_t machine_wall_ms();

}  // namespace team
