// The bell of an agent's pane supervisor on a shared store (SPEC 16). A command that changes an
// agent's shutdown requests wakes its supervisor: with SIGUSR1 when the agent lives in the
// command's home, and where it lives in another (another machine), by ringing this bell through
// the store: a NOTIFY on kPgSupervisorChannel carrying the agent's id, sent in the command's
// transaction, so that it arrives once the change is committed. A SQLite home has no bell: its
// agents all live there.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace team {

class PgListener;
class Store;

class SupervisorBell {
  public:
    // Listens for rings of `agent_id` when the home's store is PostgreSQL; otherwise a bell that
    // never rings. A store that cannot be reached now is tried again at each check().
    SupervisorBell(const std::filesystem::path& home, std::int64_t agent_id);
    ~SupervisorBell();
    SupervisorBell(const SupervisorBell&) = delete;
    SupervisorBell& operator=(const SupervisorBell&) = delete;

    // Whether there is a bell to listen to (a PostgreSQL home).
    bool present() const { return !url_.empty(); }
    // The descriptor to poll (-1 while its connection is lost; it changes on a reconnect).
    int fd() const;
    // Reads what arrived: true when it rang, or when its connection was lost and is back (a
    // ring sent meanwhile is lost: look again). While the connection is lost, each call tries
    // to get it back; call it every kRetry then.
    bool check();

    static constexpr std::chrono::milliseconds kRetry{200};

  private:
    std::string url_;
    std::string agent_;
    std::unique_ptr<PgListener> listener_;
};

// Rings the bell of agent `agent_id`'s supervisor (in the caller's write, or on its own), on a
// PostgreSQL store; nothing on SQLite.
void ring_supervisor_bell(Store& store, std::int64_t agent_id);

}  // namespace team
