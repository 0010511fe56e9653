// The shells repository: the records of background shells (SPEC 8) as the store keeps them.
// Every write is one transaction of its own (Store::write), with its activity entry.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/states.hpp"
#include "base/time.hpp"
#include "state/store.hpp"

namespace team {

struct ShellRecord {
    std::string id;
    std::optional<std::int64_t> team_id;
    std::optional<std::string> agent;  // name@team
    std::vector<std::string> command;
    std::string cwd;
    std::vector<std::string> env;  // the --env entries
    ShellStatus status = ShellStatus::starting;
    std::optional<std::int64_t> pid, pid_start, supervisor_pid, supervisor_start;
    std::optional<std::int64_t> timeout_ms, output_limit;
    std::string output_file;
    bool output_truncated = false;
    std::optional<std::string> kill_requested_by;
    EpochMs started_at = 0;
    std::optional<EpochMs> ended_at;
    std::optional<int> exit_code;
    std::optional<std::string> signal;
    std::optional<std::string> error;
    std::optional<std::string> session;  // started by `team session start`

    bool running() const {
        return status == ShellStatus::starting || status == ShellStatus::running;
    }
};

// How a shell ended, as it is recorded.
struct ShellEnd {
    ShellStatus status = ShellStatus::completed;
    EpochMs at = 0;
    std::optional<int> exit_code;
    std::optional<std::string> signal;  // SIGKILL, ...
    std::optional<std::string> error;
};

class ShellRecords {
  public:
    explicit ShellRecords(Store& store) : store_(store) {}

    std::optional<ShellRecord> find(const std::string& id);
    // Oldest first: every shell, or only those recorded as starting or running; of one agent
    // or one session.
    std::vector<ShellRecord> list(bool running_only, const std::optional<std::string>& agent,
                                  const std::optional<std::string>& session);
    // Whether the shell `id` is this home's (a shared store holds other homes' too).
    bool mine(const std::string& id);
    // The restore script of a session's shell not yet running.
    std::optional<std::string> script(const std::string& id);

    // Inserts `shell` (status starting) under a fresh id from `new_id` (tried again while
    // taken), its output file <dir>/ID.out, and logs shell_started with `details` (the id
    // added). Sets shell.id and shell.output_file.
    void insert(ShellRecord& shell, const std::optional<std::string>& script,
                const std::function<std::string()>& new_id, const std::filesystem::path& dir,
                const std::string& actor, nlohmann::json details);
    // starting -> running, with the command's and the supervisor's pids; the script cleared.
    void mark_running(const std::string& id, std::int64_t pid, std::int64_t pid_start,
                      std::int64_t supervisor_pid, std::int64_t supervisor_start);
    void mark_truncated(const std::string& id);
    // Records the end unless the shell has already ended; logs shell_exited with
    // `details(record)`. Returns the record as it is then. Throws not_found for an unknown id.
    ShellRecord mark_finished(const std::string& id, const ShellEnd& end, const std::string& actor,
                              const std::function<nlohmann::json(const ShellRecord&)>& details);
    // Who asked for the kill (the first one kept), and execution_cancelled logged with
    // `details` (null: not logged now; the caller logs the outcome with log_cancelled).
    void request_kill(const ShellRecord& shell, EpochMs at, const std::string& actor,
                      const nlohmann::json& details);
    // execution_cancelled with `details`: a terminate's outcome (SPEC 13).
    void log_cancelled(const ShellRecord& shell, EpochMs at, const std::string& actor,
                       const nlohmann::json& details);
    // Forgets the shell and logs shell_released. False when there was no such shell.
    bool remove(const ShellRecord& shell, EpochMs at, const std::string& actor);

  private:
    Store& store_;
};

}  // namespace team
