// The operations of the task list (SPEC 6). Every one first has the team's agents reconciled
// (SPEC 4: "by the next command that looks"), so that no task shows as, stays with, or goes to a
// terminated agent.
#include "base/states.hpp"
#include "ops/operation.hpp"
#include "ops/table.hpp"
#include "tasks/tasks.hpp"

namespace team::ops {

namespace {

const std::vector<std::string>& task_status_choices() {
    static const std::vector<std::string> kNames{StateNames<TaskStatus>::names.begin(),
                                                 StateNames<TaskStatus>::names.end()};
    return kNames;
}

using tasks::Task;
using tasks::TaskList;

TaskList task_list(Request& r) {
    return TaskList(r.core.store(), r.core.clock());
}

Result add_task(Request& r) {
    const auto& a = r.args;
    tasks::NewTask request{a.string("subject"), a.string("description"), a.optional_string("owner"),
                           a.strings("blocked_by")};
    return {tasks::to_json(task_list(r).add(*r.team, r.caller(), request))};
}

Result list_tasks(Request& r) {
    const auto& a = r.args;
    auto list = task_list(r).list(
        *r.team, tasks::TaskFilter{a.optional_string("owner"), a.optional_string("status"),
                                   a.flag("available")});
    nlohmann::json doc = nlohmann::json::array();
    for (const auto& t : list) doc.push_back(tasks::to_json(t));
    Result result{doc};
    result.view = {{"available", a.flag("available")}};
    return result;
}

Result show_task(Request& r) {
    return {tasks::to_json(task_list(r).show(*r.team, r.args.string("id")))};
}

Result claim_task(Request& r) {
    return {tasks::to_json(task_list(r).claim(*r.team, r.caller(), r.args.optional_string("id")))};
}

Result update_task(Request& r) {
    const auto& a = r.args;
    tasks::TaskChange change{
        a.optional_string("status"),  a.optional_string("owner"),       a.flag("unassign"),
        a.optional_string("subject"), a.optional_string("description"), a.integer("epoch")};
    return {tasks::to_json(task_list(r).update(*r.team, r.caller(), a.string("id"), change))};
}

Result complete_task(Request& r) {
    return {tasks::to_json(
        task_list(r).done(*r.team, r.caller(), r.args.string("id"), r.args.integer("epoch")))};
}

const Param kTaskId{.name = "id",
                    .help = "the task",
                    .placeholder = "ID",
                    .required = true,
                    .positional = true,
                    .kind = Kind::task};
// SPEC 16's fencing token: the epoch the caller's claim returned.
const Param kEpoch{.name = "epoch",
                   .type = Type::integer,
                   .help =
                       "refuse the write when the task was handed back since the claim that "
                       "returned this epoch",
                   .placeholder = "N"};

}  // namespace

const Operation add_task_op{
    .name = "add_task",
    .command = "task add",
    .tool = "task_add",
    .routes = {{"POST", "/api/teams/{team}/tasks"}},
    .summary = "a new task, pending",
    .params = {{.name = "subject",
                .type = Type::text,
                .help = "what is to be done, in a line ('-': stdin)",
                .placeholder = "SUBJECT",
                .required = true,
                .positional = true},
               {.name = "description",
                .type = Type::text,
                .help = "the details ('-': read them from stdin)",
                .placeholder = "TEXT"},
               {.name = "owner",
                .help = "give it to this agent (it stays pending)",
                .placeholder = "NAME",
                .kind = Kind::agent},
               {.name = "blocked_by",
                .type = Type::strings,
                .help = "it cannot be claimed until task ID is completed (repeatable)",
                .placeholder = "ID",
                .kind = Kind::task}},
    .access = Access::write,
    .reconcile = true,
    .body = add_task,
};

const Operation list_tasks_op{
    .name = "list_tasks",
    .command = "task list",
    .tool = "task_list",
    .routes = {{"GET", "/api/teams/{team}/tasks"}},
    .summary = "the team's tasks",
    .params = {{.name = "owner",
                .help = "only this agent's tasks",
                .placeholder = "NAME",
                .kind = Kind::agent},
               {.name = "status",
                .help = "only tasks in this status: pending, in_progress, completed, deleted "
                        "(without it, deleted ones are left out)",
                .placeholder = "STATUS",
                .choices = task_status_choices},
               {.name = "available",
                .type = Type::boolean,
                .help = "only tasks that can be claimed: pending, unowned, not blocked"}},
    .access = Access::read,
    .reconcile = true,
    .body = list_tasks,
};

const Operation show_task_op{
    .name = "show_task",
    .command = "task show",
    .tool = "task_get",
    .routes = {{"GET", "/api/teams/{team}/tasks/{id}"}},
    .summary = "one task",
    .params = {kTaskId},
    .access = Access::read,
    .reconcile = true,
    .body = show_task,
};

const Operation claim_task_op{
    .name = "claim_task",
    .command = "task claim",
    .tool = "task_claim",
    .routes = {{"POST", "/api/teams/{team}/tasks/{id}/claim"}},
    .summary = "take a task: it becomes in_progress and yours",
    .params = {{.name = "id",
                .help = "the task (default: the lowest available one)",
                .placeholder = "ID",
                .positional = true,
                .kind = Kind::task}},
    .access = Access::write,
    .reconcile = true,
    .body = claim_task,
};

const Operation update_task_op{
    .name = "update_task",
    .command = "task update",
    .tool = "task_update",
    .routes = {{"PATCH", "/api/teams/{team}/tasks/{id}"}},
    .summary = "change a task",
    .params = {kTaskId,
               {.name = "status",
                .help = "pending, in_progress, completed or deleted",
                .placeholder = "STATUS",
                .choices = task_status_choices},
               {.name = "owner",
                .help = "give it to this agent",
                .placeholder = "NAME",
                .kind = Kind::agent},
               {.name = "unassign",
                .type = Type::boolean,
                .help = "take it from its owner (an in_progress task becomes pending)"},
               {.name = "subject", .help = "a new subject", .placeholder = "TEXT"},
               {.name = "description",
                .type = Type::text,
                .help = "a new description ('-': read it from stdin)",
                .placeholder = "TEXT"},
               kEpoch},
    .access = Access::write,
    .reconcile = true,
    .body = update_task,
};

const Operation complete_task_op{
    .name = "complete_task",
    .command = "task done",
    .tool = "task_done",
    .routes = {{"POST", "/api/teams/{team}/tasks/{id}/done"}},
    .summary = "mark a task completed (its owner or the leader)",
    .params = {kTaskId, kEpoch},
    .access = Access::write,
    .reconcile = true,
    .body = complete_task,
};

}  // namespace team::ops
