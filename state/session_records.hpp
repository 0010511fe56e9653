// The sessions repository (SPEC 9): sessions (a name per home, the state as JSON) and the
// session execs running now, as the store keeps them. Every write is one transaction of its own
// (Store::write), with its activity entry. What the state means is sessions/'s business: here
// it is a JSON document.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/time.hpp"
#include "state/store.hpp"

namespace team {

struct StoredSession {
    std::int64_t id = 0;
    std::string name;
    nlohmann::json state;  // sessions/session_state.hpp
    std::optional<std::int64_t> team_id;
    std::string created_by;
    EpochMs created_at = 0, updated_at = 0;
    std::int64_t commands = 0;
};

// A `session exec` running now.
struct SessionExec {
    std::int64_t id = 0;
    std::string command, actor;
    std::int64_t supervisor_pid = 0, supervisor_start = 0;  // the `team session exec` process
    EpochMs started_at = 0;
};

// A new session's first state, and the cwd its creation is logged with.
struct NewSession {
    nlohmann::json state;
    std::string cwd;
};

// What a close took away: the session's execs and running shells at that moment.
struct ClosedSession {
    std::vector<SessionExec> execs;
    std::vector<std::string> shell_ids;
};

class SessionRecords {
  public:
    explicit SessionRecords(Store& store) : store_(store) {}

    std::optional<StoredSession> find(const std::string& name);
    // By name.
    std::vector<StoredSession> list();
    std::vector<SessionExec> execs(std::int64_t session_id);

    // The session, made (session_created logged) from what `fresh` gives if it does not exist; its
    // command counted and its last use set to `at`.
    StoredSession open(const std::string& name, std::optional<std::int64_t> team_id,
                       const std::string& actor, EpochMs at,
                       const std::function<NewSession()>& fresh);
    // The same, and in the same transaction an exec row (the calling process as its
    // supervisor). Returns the session and the exec's id.
    std::pair<StoredSession, std::int64_t> open_exec(
        const std::string& name, std::optional<std::int64_t> team_id, const std::string& actor,
        EpochMs at, const std::function<NewSession()>& fresh, const std::string& command,
        std::int64_t supervisor_pid, std::int64_t supervisor_start);
    void remove_exec(std::int64_t exec_id);
    // Removes the exec row; with `merge`, in the same transaction, the session's state as it
    // is now (if the session still exists) goes through `merge`, and what it returns, if
    // anything, is written.
    void finish_exec(std::int64_t exec_id, std::int64_t session_id,
                     const std::function<std::optional<nlohmann::json>(nlohmann::json)>& merge);
    // Forgets the session (its exec rows go with it) and logs session_closed; nothing when
    // there is no such session.
    std::optional<ClosedSession> close(const std::string& name, EpochMs at,
                                       const std::string& actor);

  private:
    StoredSession open_in_write(const std::string& name, std::optional<std::int64_t> team_id,
                                const std::string& actor, EpochMs at,
                                const std::function<NewSession()>& fresh);
    Store& store_;
};

}  // namespace team
