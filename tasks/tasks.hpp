// The task list of a team (SPEC 6): add, list, show, claim, update, done.
//
// Ids are per team (1, 2, ...), shown as strings. A task is *available* when it is pending,
// unowned and not blocked; it is *blocked* while one of its blockers is pending or in progress
// (a completed or deleted blocker no longer blocks). A claim is one conditional UPDATE inside a
// BEGIN IMMEDIATE transaction: of several concurrent claimers exactly one changes the row, and
// the others are told who has it.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/time.hpp"
#include "state/members.hpp"
#include "state/records.hpp"
#include "state/store.hpp"

namespace team::tasks {

struct Task {
    std::int64_t id = 0;
    std::string subject;
    std::string description;
    TaskStatus status = TaskStatus::pending;
    std::optional<std::string> owner;
    std::vector<std::int64_t> blocked_by;
    std::optional<EpochMs> claimed_at;
    std::optional<std::string> warning;
    EpochMs created_at = 0;
    EpochMs updated_at = 0;
};

nlohmann::json to_json(const Task& task);

// "3" -> 3; anything but a positive whole number is a usage error.
std::int64_t parse_task_id(const std::string& text);

// Throws a usage error unless `status` is one of the four.
void check_status(const std::string& status);

struct NewTask {
    std::string subject;
    std::string description;
    std::optional<std::string> owner;  // a live member
    std::vector<std::string> blocked_by;
};

struct TaskFilter {
    std::optional<std::string> owner;
    std::optional<std::string> status;  // without it, deleted tasks are left out
    bool available = false;
};

struct TaskChange {
    std::optional<std::string> status;
    std::optional<std::string> owner;
    bool unassign = false;
    std::optional<std::string> subject;
    std::optional<std::string> description;
};

class TaskList {
  public:
    TaskList(Store& store, const Clock& clock) : store_(store), clock_(clock) {}

    Task add(const TeamRecord& team, const Caller& caller, const NewTask& task);
    std::vector<Task> list(const TeamRecord& team, const TaskFilter& filter);
    Task show(const TeamRecord& team, const std::string& id);
    // Task `id`, or without one the lowest available task, becomes in_progress and the caller's.
    Task claim(const TeamRecord& team, const Caller& caller, const std::optional<std::string>& id);
    // Any member may change an unowned task; an owned one only its owner or the leader.
    Task update(const TeamRecord& team, const Caller& caller, const std::string& id,
                const TaskChange& change);
    // Its owner or the leader.
    Task done(const TeamRecord& team, const Caller& caller, const std::string& id);

  private:
    Store& store_;
    const Clock& clock_;
};

// How many tasks of the team are in each status.
std::map<std::string, int> count_by_status(SQLite::Database& db, std::int64_t team_id);
// Open (pending or in-progress) tasks per live member that has any.
std::map<std::string, int> open_by_owner(SQLite::Database& db, std::int64_t team_id);

}  // namespace team::tasks
