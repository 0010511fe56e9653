// Wall-clock time as the store keeps it (milliseconds since the Unix epoch), the clock behind
// an interface so rules that depend on time can be tested without sleeping, and the two ways
// times are shown: ISO-8601 UTC with milliseconds (JSON) and relative ("5 min ago", humans).
//
// The wall clock can step (NTP, `date -s`), so nothing that must happen *at* a time is armed
// from it. A deadline that outlives the process that set it (a --force-after, kept by an
// agent's supervisor) is stored on the boot clock too: CLOCK_BOOTTIME, which no one sets and
// every process of the machine reads alike.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace team {

using EpochMs = std::int64_t;

class Clock {
  public:
    virtual ~Clock() = default;
    // Wall-clock milliseconds since the Unix epoch: what records and users see.
    virtual EpochMs now() const = 0;
    // Milliseconds on CLOCK_BOOTTIME: never steps, shared by every process of the machine.
    virtual std::int64_t boot_ms() const = 0;
    // The monotonic clock that deadlines of this process are measured on (waits, timeouts). A
    // fake may run it ahead of the real one, so that a deadline passes without waiting for it:
    // waits still sleep on the real clock, for at most what is left by this one.
    virtual std::chrono::steady_clock::time_point steady() const {
        return std::chrono::steady_clock::now();
    }
};

class SystemClock final : public Clock {
  public:
    EpochMs now() const override;
    std::int64_t boot_ms() const override;
};

// 2026-11-22T10:04:05.123Z
std::string iso8601(EpochMs t);
// The time iso8601 wrote; 0 for text it did not write.
EpochMs parse_iso8601(const std::string& text);

// "just now", "42 s ago", "5 min ago", "3 h ago", "2 days ago", "in 5 min".
std::string relative_time(EpochMs then, EpochMs now);

}  // namespace team
