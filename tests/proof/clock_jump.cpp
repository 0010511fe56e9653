// A preload library (LD_PRELOAD) that makes the wall clock of a process jump, to prove that
// deadlines are measured on the monotonic clock (issue 8). Nothing of it is linked into team.
//
//   CLOCK_JUMP_SECONDS   how far the wall clock jumps: a signed number of seconds, fractions
//                        allowed ("3600", "-3600", "+0.5"). Unset, empty, unparsable or 0: no
//                        jump, every call passes straight through.
//   CLOCK_JUMP_AFTER_MS  when it jumps: that many milliseconds, measured on CLOCK_MONOTONIC,
//                        after the library was loaded into the process. Unset or 0: at once,
//                        from the very first call.
//
// Before the jump the wall clock is the real one; from the jump on it is the real one plus the
// offset, for good (one step, like an NTP step or `date -s`, not a drift). Every process that
// loads the library counts from its own start: children inherit LD_PRELOAD and the variables,
// so a `team` command, the supervisor it starts and the command under it each jump
// CLOCK_JUMP_AFTER_MS after they started.
//
// What moves: clock_gettime(CLOCK_REALTIME) and clock_gettime(CLOCK_REALTIME_COARSE) (what
// std::chrono::system_clock and SQLite read), gettimeofday and time. Every other clock
// (CLOCK_MONOTONIC, CLOCK_BOOTTIME, CPU clocks...) passes through to the real clock_gettime,
// found with dlsym(RTLD_NEXT) (under AddressSanitizer that is its interceptor, which calls
// libc's). A call made while dlsym itself runs (should dlsym ever read a clock) is answered by
// the raw system call, so the library never recurses into itself.
//
// Under AddressSanitizer the program's ASAN_OPTIONS must include verify_asan_link_order=0:
// ASan refuses to run when another library is preloaded before its runtime.
#include <dlfcn.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>

namespace {

using ClockGettime = int (*)(clockid_t, struct timespec*);

std::atomic<ClockGettime> g_real{nullptr};
thread_local bool t_resolving = false;

// The offset in nanoseconds (0: no jump), and the CLOCK_MONOTONIC time (ns) from which it
// applies. Read once, at load (or at the first call, should one come before the constructor).
std::atomic<bool> g_ready{false};
std::int64_t g_offset_ns = 0;
std::int64_t g_jump_at_ns = 0;

int raw_clock_gettime(clockid_t clock, struct timespec* ts) {
    return static_cast<int>(::syscall(SYS_clock_gettime, clock, ts));
}

int real_clock_gettime(clockid_t clock, struct timespec* ts) {
    ClockGettime real = g_real.load(std::memory_order_acquire);
    if (real == nullptr) {
        if (t_resolving) return raw_clock_gettime(clock, ts);
        t_resolving = true;
        real = reinterpret_cast<ClockGettime>(::dlsym(RTLD_NEXT, "clock_gettime"));
        t_resolving = false;
        if (real == nullptr) return raw_clock_gettime(clock, ts);
        g_real.store(real, std::memory_order_release);
    }
    return real(clock, ts);
}

std::int64_t monotonic_ns() {
    struct timespec ts {};
    real_clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// A signed decimal ("-3600", "+0.25", "12"); false when the text is not one.
bool parse_seconds(const char* text, double& out) {
    if (text == nullptr || *text == '\0') return false;
    char* end = nullptr;
    int saved = errno;
    out = std::strtod(text, &end);
    errno = saved;
    return end != text && *end == '\0';
}

void set_up() {
    if (g_ready.load(std::memory_order_acquire)) return;
    double seconds = 0;
    double after_ms = 0;
    std::int64_t offset = 0;
    if (parse_seconds(std::getenv("CLOCK_JUMP_SECONDS"), seconds)) {
        offset = static_cast<std::int64_t>(seconds * 1e9);
    }
    if (!parse_seconds(std::getenv("CLOCK_JUMP_AFTER_MS"), after_ms) || after_ms < 0) after_ms = 0;
    // Two threads setting up at once compute the same values; the first load time wins only by
    // a few microseconds, which nothing here can tell apart.
    g_offset_ns = offset;
    g_jump_at_ns = monotonic_ns() + static_cast<std::int64_t>(after_ms * 1e6);
    g_ready.store(true, std::memory_order_release);
}

__attribute__((constructor)) void clock_jump_load() {
    set_up();
}

// The offset that applies now: 0 before the jump, the whole offset from then on.
std::int64_t offset_now() {
    set_up();
    if (g_offset_ns == 0) return 0;
    return monotonic_ns() >= g_jump_at_ns ? g_offset_ns : 0;
}

void shift(struct timespec* ts, std::int64_t offset) {
    std::int64_t ns = static_cast<std::int64_t>(ts->tv_sec) * 1'000'000'000 + ts->tv_nsec + offset;
    std::int64_t sec = ns / 1'000'000'000;
    std::int64_t rest = ns % 1'000'000'000;
    if (rest < 0) {
        rest += 1'000'000'000;
        --sec;
    }
    ts->tv_sec = static_cast<time_t>(sec);
    ts->tv_nsec = static_cast<long>(rest);
}

}  // namespace

extern "C" {

int clock_gettime(clockid_t clock, struct timespec* ts) {
    int rc = real_clock_gettime(clock, ts);
    if (rc == 0 && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE)) {
        shift(ts, offset_now());
    }
    return rc;
}

// glibc declares tv non-null; the timezone argument is obsolete (glibc fills it with zeros).
int gettimeofday(struct timeval* tv, void* tz) {
    if (tz != nullptr) {
        auto* zone = static_cast<struct timezone*>(tz);
        zone->tz_minuteswest = 0;
        zone->tz_dsttime = 0;
    }
    struct timespec ts {};
    int rc = clock_gettime(CLOCK_REALTIME, &ts);
    if (rc != 0) return rc;
    tv->tv_sec = ts.tv_sec;
    tv->tv_usec = static_cast<suseconds_t>(ts.tv_nsec / 1000);
    return 0;
}

time_t time(time_t* out) {
    struct timespec ts {};
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return static_cast<time_t>(-1);
    if (out != nullptr) *out = ts.tv_sec;
    return ts.tv_sec;
}

}  // extern "C"
