#include "base/time.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "base/store_clock.hpp"

namespace team {

namespace {
std::atomic<std::int64_t> offset_ms{0};
}  // namespace

std::int64_t machine_wall_ms() {
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

void measure_store_clock(std::int64_t server_ms, std::int64_t sent_ms, std::int64_t received_ms) {
    std::int64_t round_trip = received_ms - sent_ms;
    std::int64_t difference = server_ms - (sent_ms + round_trip / 2);
    offset_ms = std::llabs(difference) <= round_trip / 2 + 2 ? 0 : difference;
}

std::int64_t store_clock_offset() {
    return offset_ms;
}

EpochMs SystemClock::now() const {
    return machine_wall_ms() + offset_ms.load(std::memory_order_relaxed);
}

std::int64_t SystemClock::boot_ms() const {
    struct timespec ts {};
    ::clock_gettime(CLOCK_BOOTTIME, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

std::string iso8601(EpochMs t) {
    std::time_t seconds = static_cast<std::time_t>(t / 1000);
    int millis = static_cast<int>(t % 1000);
    if (millis < 0) {
        millis += 1000;
        --seconds;
    }
    std::tm tm{};
    gmtime_r(&seconds, &tm);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, millis);
    return buf;
}

EpochMs parse_iso8601(const std::string& text) {
    std::tm tm{};
    int millis = 0;
    char zone = 0;
    if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3d%c", &tm.tm_year, &tm.tm_mon,
                    &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &millis, &zone) != 8 ||
        zone != 'Z') {
        return 0;
    }
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return static_cast<EpochMs>(timegm(&tm)) * 1000 + millis;
}

std::string relative_time(EpochMs then, EpochMs now) {
    long long delta = (now - then) / 1000;
    bool future = delta < 0;
    if (future) delta = -delta;
    std::string amount;
    if (delta < 5) return "just now";
    if (delta < 60) {
        amount = std::to_string(delta) + " s";
    } else if (delta < 3600) {
        amount = std::to_string(delta / 60) + " min";
    } else if (delta < 86400) {
        amount = std::to_string(delta / 3600) + " h";
    } else {
        long long days = delta / 86400;
        amount = std::to_string(days) + (days == 1 ? " day" : " days");
    }
    return future ? "in " + amount : amount + " ago";
}

}  // namespace team
