// Test support: proving that nothing a test started is left alive. A test gives every process
// it starts an environment variable TEAM_TEST_MARK=<unique>, inherited by all their descendants
// (escaped daemons included); afterwards it scans /proc for that marker. The guard kills any
// leftover at the end of the test, even when the test failed, so no test leaks into another.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace team::test {

class Marker {
  public:
    Marker();   // a new unique marker
    ~Marker();  // SIGKILLs whatever still carries it
    Marker(const Marker&) = delete;
    Marker& operator=(const Marker&) = delete;

    // "TEAM_TEST_MARK=<unique>"
    const std::string& entry() const { return entry_; }
    const std::string& key() const { return key_; }
    const std::string& value() const { return value_; }

    // Live (not zombie) processes whose environment carries the marker.
    std::vector<pid_t> alive() const;
    // Waits up to `ms` for none to be alive; true if none is.
    bool none_alive_within(int ms) const;
    // A machine going down: SIGKILLs every process with the marker, again for any that appears
    // meanwhile, and waits up to `ms` until each has exited, not only stopped showing its
    // environment (a process being killed loses it before it has exited: a look would still
    // see it running). True when all have.
    bool kill_all_within(int ms) const;

  private:
    std::string key_ = "TEAM_TEST_MARK";
    std::string value_;
    std::string entry_;
};

}  // namespace team::test
