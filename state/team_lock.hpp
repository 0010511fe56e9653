// The per-team advisory lock (SPEC 2): spawn, kill-agent, teardown and delete of one team run
// one after the other, never interleaved. It is an flock(2) on <home>/locks/<team>.lock, so the
// kernel drops it when its holder dies: a lock held by a dead process never blocks anyone.
// The descriptor is close-on-exec, so processes we start (tmux, agents) never inherit it.
#pragma once

#include <filesystem>
#include <string>

namespace team {

class TeamLock {
  public:
    // Blocks until the lock is ours.
    TeamLock(const std::filesystem::path& home, const std::string& team);
    ~TeamLock();
    TeamLock(TeamLock&& other) noexcept;
    TeamLock& operator=(TeamLock&&) = delete;
    TeamLock(const TeamLock&) = delete;
    TeamLock& operator=(const TeamLock&) = delete;

    static std::filesystem::path path(const std::filesystem::path& home, const std::string& team);

  private:
    int fd_;
};

}  // namespace team
