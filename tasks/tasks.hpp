// The task list of a team (SPEC 6): add, list, show, claim, update, done.
//
// Ids are per team (1, 2, ...), shown as strings. A task is *available* when it is pending,
// unowned and not blocked; it is *blocked* while one of its blockers is pending or in progress
// (a completed or deleted blocker no longer blocks). A claim is one conditional UPDATE inside a
// BEGIN IMMEDIATE transaction: of several concurrent claimers exactly one changes the row, and
// the others are told who has it.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/time.hpp"
#include "state/records.hpp"
#include "state/store.hpp"
#include "state/task_rows.hpp"

namespace team::tasks {

using Task = TaskRecord;  // state/task_rows.hpp

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
    // The epoch of the claim the caller acts under (SPEC 16): refused when the task's is newer.
    std::optional<std::int64_t> epoch;
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
    // Its owner or the leader. With `epoch`, refused when the task has been handed back since.
    Task done(const TeamRecord& team, const Caller& caller, const std::string& id,
              std::optional<std::int64_t> epoch = std::nullopt);

  private:
    Store& store_;
    const Clock& clock_;
};

}  // namespace team::tasks
