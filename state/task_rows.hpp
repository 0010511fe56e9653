// The tasks repository (SPEC 6): a team's tasks and their blockers as the store keeps them. The
// rules (who may claim, complete or change what) are the domain's (tasks/tasks.hpp); these are
// the reads and writes it makes, inside its Store::write when they change something.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/states.hpp"
#include "base/time.hpp"
#include "state/store.hpp"

namespace team {

struct TaskRecord {
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
    // Raised each time the task is handed back from an ended owner (SPEC 16's fencing token): a
    // write that names an older epoch is refused.
    std::int64_t epoch = 0;
};

struct TaskQuery {
    std::optional<std::string> owner;  // a member name
    std::optional<TaskStatus> status;  // without it, deleted tasks are left out
    bool available = false;            // pending, unowned and not blocked
};

// Task `id` of the team, with its blockers.
std::optional<TaskRecord> find_task(Store& store, std::int64_t team_id, std::int64_t id);
// The tasks the query selects, lowest id first, with their blockers.
std::vector<TaskRecord> list_tasks(Store& store, std::int64_t team_id, const TaskQuery& query);
// The lowest available task. On PostgreSQL it is row-locked to the end of the transaction, and
// one another transaction has locked is passed over (FOR UPDATE SKIP LOCKED), so concurrent
// claimers in shared writes (Db::Turn::shared) each find a different one.
std::optional<std::int64_t> first_available_task(Store& store, std::int64_t team_id);
// The unfinished blockers of a task, as "2 (pending), 5 (in_progress)"; "" when none.
std::string unfinished_blockers(Store& store, std::int64_t team_id, std::int64_t id);

// A new pending task with the next id of the team and its blockers; returns its id.
std::int64_t insert_task(Store& store, std::int64_t team_id, const std::string& subject,
                         const std::string& description, const std::optional<std::string>& owner,
                         const std::vector<std::int64_t>& blockers, EpochMs now);
// The claim: task `id` becomes in_progress and `owner`'s, if it is still pending, unowned (or
// already `owner`'s) and not blocked. One conditional UPDATE: of concurrent claimers exactly one
// gets true.
bool claim_task_row(Store& store, std::int64_t team_id, std::int64_t id, const std::string& owner,
                    EpochMs now);
// Writes every changeable field of a task (claimed_at: none clears it).
void update_task_row(Store& store, std::int64_t team_id, std::int64_t id, TaskStatus status,
                     const std::optional<std::string>& owner, std::optional<EpochMs> claimed_at,
                     const std::string& subject, const std::string& description, EpochMs now);

// Every task of `agent` (a member name) that is not completed or deleted loses its owner and its
// claim time, becomes pending, and gets the warning "Reassigned: previous owner NAME
// terminated", and its epoch raised; with `to`, they are given to that member instead (still
// pending). Returns the
// ids of those tasks, as strings, lowest first.
std::vector<std::string> hand_back_tasks(Db& db, std::int64_t team_id, const std::string& agent,
                                         EpochMs at,
                                         const std::optional<std::string>& to = std::nullopt);

// An agent's resume (SPEC 19): the tasks handed back at its end that nobody has claimed or
// changed since are its own again, as they were (pending or in progress), at a new epoch.
// Returns their ids, lowest first.
std::vector<std::string> take_back_tasks(Db& db, std::int64_t team_id, const std::string& agent,
                                         EpochMs at);

// How many tasks of the team are in each status (every status present, 0 or more).
std::map<std::string, int> count_tasks_by_status(Store& store, std::int64_t team_id);
// Open (pending or in-progress) tasks per live member that has any.
std::map<std::string, int> open_tasks_by_owner(Store& store, std::int64_t team_id);

}  // namespace team
