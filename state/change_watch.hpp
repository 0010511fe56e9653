// Wakes a waiting reader the moment any process commits to the store, without polling.
//
// Every Store::write() announces its commit, once it is durable and visible, by touching
// <home>/team.db.changed; readers watch the home directory with inotify for that touch and wake
// at once. (Watching team.db-wal itself is not enough: SQLite writes the WAL frames before it
// publishes the commit in the shared-memory index, so a reader woken by the WAL write can look
// too early and then sleep through the commit.) Usage, race-free:
//     ChangeWatch watch(home);          // 1. watch first
//     while (!(rows = query()).size())  // 2. then look
//         if (!watch.wait_until(deadline)) break;  // 3. sleep until a commit or the deadline
// A commit between the query and the wait is still seen, because the watch was set up first.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace team {

// Tells every ChangeWatch of `home` that the store changed. Cheap (one utimensat); never throws.
void announce_change(const std::filesystem::path& home);

class ChangeWatch {
  public:
    // Watches the store of `home`.
    explicit ChangeWatch(const std::filesystem::path& home);
    // Watches one file, `dir`/`name`, for writes, creation and removal.
    ChangeWatch(const std::filesystem::path& dir, const std::string& name);
    ~ChangeWatch();
    ChangeWatch(const ChangeWatch&) = delete;
    ChangeWatch& operator=(const ChangeWatch&) = delete;

    // Returns true when the store may have changed since the last call (or since construction),
    // false when the deadline passed first. Spurious wake-ups are possible; callers re-query.
    bool wait_until(std::chrono::steady_clock::time_point deadline);

    // The same, also returning when any of `others` is readable (a pidfd that ends, another
    // watch). Returns true for a change or a readable other, false at the deadline.
    bool wait_until(std::chrono::steady_clock::time_point deadline, const std::vector<int>& others);

    // The descriptor to poll() alongside others (readable when a change is pending).
    int fd() const { return fd_; }

  private:
    // Drains pending events; true when one of them concerns the watched name.
    bool drain();

    int fd_ = -1;
    std::string name_;
};

}  // namespace team
