// team task add | list | show | claim | update | done   (SPEC 6)
#include <CLI/CLI.hpp>

#include "base/states.hpp"
#include "base/time.hpp"
#include "cli/commands.hpp"
#include "cli/op_command.hpp"
#include "ops/table.hpp"

namespace team::cli {

namespace {

std::string status_text(const Output& out, const std::string& status) {
    switch (parse_state<TaskStatus>(status).value_or(TaskStatus::pending)) {
        case TaskStatus::in_progress:
            return out.yellow(status);
        case TaskStatus::completed:
            return out.green(status);
        case TaskStatus::deleted:
            return out.dim(status);
        default:
            return status;
    }
}

std::string ids_text(const nlohmann::json& ids) {
    std::string s;
    for (const auto& id : ids) s += (s.empty() ? "" : ",") + id.get<std::string>();
    return s.empty() ? "-" : s;
}

std::string or_dash(const nlohmann::json& v) {
    return v.is_string() ? v.get<std::string>() : "-";
}

EpochMs time_of(const nlohmann::json& v) {
    return parse_iso8601(v.get<std::string>());
}

// One task, in full, for a person.
void print_task(const Output& out, const nlohmann::json& t, EpochMs now) {
    out.line(out.bold("#" + t["id"].get<std::string>()) + "  " + cell(t["subject"], 200));
    out.line("  status:     " + status_text(out, t["status"]));
    out.line("  owner:      " + or_dash(t["owner"]) +
             (t["claimedAt"].is_string()
                  ? "  (claimed " + relative_time(time_of(t["claimedAt"]), now) + ")"
                  : ""));
    if (!t["blockedBy"].empty()) out.line("  blocked by: " + ids_text(t["blockedBy"]));
    if (t["warning"].is_string()) out.line("  warning:    " + out.yellow(cell(t["warning"], 200)));
    out.line("  created:    " + relative_time(time_of(t["createdAt"]), now) + ", updated " +
             relative_time(time_of(t["updatedAt"]), now));
    std::string description = t["description"];
    if (!description.empty()) out.line("  " + cell(description, 2000));
}

// A result that is one task: a line saying what happened, then the task.
Printer task_printer(const std::string& what) {
    return [what](Context& ctx, const ops::Result& r) {
        ctx.out().line(what + " " + r.doc["id"].get<std::string>());
        print_task(ctx.out(), r.doc, ctx.clock().now());
    };
}

void add_add(CLI::App& task) {
    auto* cmd = add_operation(task, ops::add_task_op, task_printer("added task"));
    cmd->footer(
        "Examples:\n"
        "  team task add 'write the parser'\n"
        "  team task add 'test the parser' --blocked-by 1 --description 'cover every error'");
}

void add_list(CLI::App& task) {
    auto* cmd = add_operation(task, ops::list_tasks_op, [](Context& ctx, const ops::Result& r) {
        const auto& out = ctx.out();
        if (r.doc.empty()) {
            out.line(r.view.value("available", false) ? "no available tasks" : "no tasks");
            return;
        }
        auto now = ctx.clock().now();
        Table table({"ID", "STATUS", "OWNER", "BLOCKED BY", "UPDATED", "SUBJECT"});
        for (const auto& t : r.doc) {
            table.add(
                {t["id"], status_text(out, t["status"]), or_dash(t["owner"]),
                 ids_text(t["blockedBy"]), relative_time(time_of(t["updatedAt"]), now),
                 cell(t["subject"]) + (t["warning"].is_string() ? " " + out.yellow("(!)") : "")});
        }
        table.print(out);
    });
    cmd->footer(
        "(!) marks a task with a warning (team task show ID).\n"
        "Example: team task list --available --json");
}

void add_show(CLI::App& task) {
    auto* cmd = add_operation(task, ops::show_task_op, [](Context& ctx, const ops::Result& r) {
        print_task(ctx.out(), r.doc, ctx.clock().now());
    });
    cmd->footer("Example: team task show 3 --json");
}

void add_claim(CLI::App& task) {
    auto* cmd = add_operation(task, ops::claim_task_op, task_printer("claimed task"));
    cmd->footer(
        "Of several agents claiming the same task at once exactly one wins; the others are\n"
        "refused (exit 4) with who has it. Without ID and nothing available: exit 3.\n"
        "Examples:\n"
        "  team task claim 3\n"
        "  team task claim --json      (the next available task)");
}

void add_update(CLI::App& task) {
    auto* cmd = add_operation(task, ops::update_task_op, task_printer("updated task"));
    cmd->footer(
        "An unowned task may be changed by any member; an owned one by its owner or the leader.\n"
        "Examples:\n"
        "  team task update 3 --owner worker-2\n"
        "  team task update 3 --unassign\n"
        "  team task update 4 --status deleted");
}

void add_done(CLI::App& task) {
    auto* cmd = add_operation(task, ops::complete_task_op, task_printer("completed task"));
    cmd->footer("Tasks it blocked can be claimed from now on.\nExample: team task done 3");
}

}  // namespace

void add_task_command(CLI::App& app) {
    auto* task = app.add_subcommand("task", "the team's task list: add, list, claim, finish");
    task->require_subcommand(1);
    add_add(*task);
    add_list(*task);
    add_show(*task);
    add_claim(*task);
    add_update(*task);
    add_done(*task);
    task->footer(
        "Statuses: pending, in_progress, completed, deleted. When an agent is terminated, its\n"
        "unfinished tasks go back to the pool (pending, unowned) with a warning.");
}

}  // namespace team::cli
