// The per-team advisory lock (SPEC 2): spawn, kill-agent, teardown and delete of one team run
// one after the other, never interleaved. It is an flock(2) on <home>/locks/<team>.lock, so the
// kernel drops it when its holder dies: a lock held by a dead process never blocks anyone.
// The descriptor is close-on-exec, so processes we start (tmux, agents) never inherit it.
// On a PostgreSQL store, which homes on other machines share, it is a session-level advisory
// lock of the store's connection instead (keyed by the team's name), which the server drops when
// that connection ends, so a holder that dies blocks no one there either.
#pragma once

#include <filesystem>
#include <string>

namespace team {

class Db;
class Store;

class TeamLock {
  public:
    // Blocks until the lock is ours.
    TeamLock(const std::filesystem::path& home, const std::string& team);
    // The lock of the store's kind: the home's file (SQLite), or the store's (PostgreSQL).
    TeamLock(Store& store, const std::string& team);
    ~TeamLock();
    TeamLock(TeamLock&& other) noexcept;
    TeamLock& operator=(TeamLock&& other) noexcept;
    TeamLock(const TeamLock&) = delete;
    TeamLock& operator=(const TeamLock&) = delete;

    static std::filesystem::path path(const std::filesystem::path& home, const std::string& team);

  private:
    int fd_ = -1;
    Db* db_ = nullptr;  // the PostgreSQL connection holding the advisory lock
    std::string team_;
};

}  // namespace team
