// team task add | list | show | claim | update | done   (SPEC 6)
#include <CLI/CLI.hpp>

#include "base/error.hpp"
#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "cli/input.hpp"
#include "tasks/tasks.hpp"
#include "team/agents.hpp"

namespace team::cli {

namespace {

using tasks::Task;
using tasks::TaskList;

std::string status_text(const Output& out, const Task& t) {
    std::string text = str(t.status);
    if (t.status == TaskStatus::in_progress) return out.yellow(text);
    if (t.status == TaskStatus::completed) return out.green(text);
    if (t.status == TaskStatus::deleted) return out.dim(text);
    return text;
}

std::string ids_text(const std::vector<std::int64_t>& ids) {
    std::string s;
    for (auto id : ids) s += (s.empty() ? "" : ",") + std::to_string(id);
    return s.empty() ? "-" : s;
}

// One task, in full, for a person.
void print_task(const Output& out, const Task& t, EpochMs now) {
    out.line(out.bold("#" + std::to_string(t.id)) + "  " + cell(t.subject, 200));
    out.line("  status:     " + status_text(out, t));
    out.line("  owner:      " + t.owner.value_or("-") +
             (t.claimed_at ? "  (claimed " + relative_time(*t.claimed_at, now) + ")" : ""));
    if (!t.blocked_by.empty()) out.line("  blocked by: " + ids_text(t.blocked_by));
    if (t.warning) out.line("  warning:    " + out.yellow(cell(*t.warning, 200)));
    out.line("  created:    " + relative_time(t.created_at, now) + ", updated " +
             relative_time(t.updated_at, now));
    if (!t.description.empty()) out.line("  " + cell(t.description, 2000));
}

// A result that is one task: JSON, or a line saying what happened and the task.
int print_result(Context& ctx, const Task& t, const std::string& what) {
    if (ctx.out().json()) {
        ctx.out().print_json(tasks::to_json(t));
    } else {
        ctx.out().line(what);
        print_task(ctx.out(), t, ctx.clock().now());
    }
    return 0;
}

// Every task command first finds the agents whose process has ended (SPEC 4: "by the next
// command that looks"), so that no task shows as, stays with, or goes to a terminated agent.
void reconcile(Context& ctx, const TeamRecord& team) {
    Agents(ctx.store(), ctx.clock(), ctx.tmux()).reconcile(team);
}

void add_add(CLI::App& task) {
    struct Options {
        std::string subject, description;
        std::optional<std::string> owner;
        std::vector<std::string> blocked_by;
    };
    auto o = std::make_shared<Options>();
    auto* cmd = add_command(task, "add", "a new task, pending", [o](Context& ctx) {
        TeamRecord team = ctx.team();
        reconcile(ctx, team);
        tasks::NewTask request{text_argument(o->subject), o->description, o->owner, o->blocked_by};
        if (request.description == "-") request.description = text_argument("-");
        Task t = TaskList(ctx.store(), ctx.clock()).add(team, ctx.caller(team), request);
        return print_result(ctx, t, "added task " + std::to_string(t.id));
    });
    cmd->add_option("SUBJECT", o->subject, "what is to be done, in a line ('-': stdin)")
        ->required();
    cmd->add_option("--description", o->description, "the details ('-': read them from stdin)")
        ->type_name("TEXT");
    optional_value(cmd, "--owner", o->owner, "give it to this agent (it stays pending)")
        ->type_name("NAME");
    verbatim(cmd->add_option("--blocked-by", o->blocked_by,
                             "it cannot be claimed until task ID is completed (repeatable)"))
        ->type_name("ID");
    cmd->footer(
        "Examples:\n"
        "  team task add 'write the parser'\n"
        "  team task add 'test the parser' --blocked-by 1 --description 'cover every error'");
}

void add_list(CLI::App& task) {
    struct Options {
        std::optional<std::string> owner, status;
        bool available = false;
    };
    auto o = std::make_shared<Options>();
    auto* cmd = add_command(task, "list", "the team's tasks", [o](Context& ctx) {
        TeamRecord team = ctx.team();
        reconcile(ctx, team);
        auto list = TaskList(ctx.store(), ctx.clock())
                        .list(team, tasks::TaskFilter{o->owner, o->status, o->available});
        if (ctx.out().json()) {
            nlohmann::json doc = nlohmann::json::array();
            for (const auto& t : list) doc.push_back(tasks::to_json(t));
            ctx.out().print_json(doc);
            return 0;
        }
        if (list.empty()) {
            ctx.out().line(o->available ? "no available tasks" : "no tasks");
            return 0;
        }
        auto now = ctx.clock().now();
        Table table({"ID", "STATUS", "OWNER", "BLOCKED BY", "UPDATED", "SUBJECT"});
        for (const auto& t : list) {
            table.add({std::to_string(t.id), status_text(ctx.out(), t), t.owner.value_or("-"),
                       ids_text(t.blocked_by), relative_time(t.updated_at, now),
                       cell(t.subject) + (t.warning ? " " + ctx.out().yellow("(!)") : "")});
        }
        table.print(ctx.out());
        return 0;
    });
    optional_value(cmd, "--owner", o->owner, "only this agent's tasks")->type_name("NAME");
    optional_value(cmd, "--status", o->status,
                   "only tasks in this status: pending, in_progress, completed, deleted "
                   "(without it, deleted ones are left out)")
        ->type_name("STATUS");
    cmd->add_flag("--available", o->available,
                  "only tasks that can be claimed: pending, unowned, not blocked");
    cmd->footer(
        "(!) marks a task with a warning (team task show ID).\n"
        "Example: team task list --available --json");
}

void add_show(CLI::App& task) {
    auto id = std::make_shared<std::string>();
    auto* cmd = add_command(task, "show", "one task", [id](Context& ctx) {
        TeamRecord team = ctx.team();
        reconcile(ctx, team);
        Task t = TaskList(ctx.store(), ctx.clock()).show(team, *id);
        if (ctx.out().json()) {
            ctx.out().print_json(tasks::to_json(t));
        } else {
            print_task(ctx.out(), t, ctx.clock().now());
        }
        return 0;
    });
    cmd->add_option("ID", *id, "the task")->required();
    cmd->footer("Example: team task show 3 --json");
}

void add_claim(CLI::App& task) {
    auto id = std::make_shared<std::optional<std::string>>();
    auto* cmd = add_command(
        task, "claim", "take a task: it becomes in_progress and yours", [id](Context& ctx) {
            TeamRecord team = ctx.team();
            reconcile(ctx, team);
            Task t = TaskList(ctx.store(), ctx.clock()).claim(team, ctx.caller(team), *id);
            return print_result(ctx, t, "claimed task " + std::to_string(t.id));
        });
    optional_value(cmd, "ID", *id, "the task (default: the lowest available one)");
    cmd->footer(
        "Of several agents claiming the same task at once exactly one wins; the others are\n"
        "refused (exit 4) with who has it. Without ID and nothing available: exit 3.\n"
        "Examples:\n"
        "  team task claim 3\n"
        "  team task claim --json      (the next available task)");
}

void add_update(CLI::App& task) {
    struct Options {
        std::string id;
        tasks::TaskChange change;
    };
    auto o = std::make_shared<Options>();
    auto* cmd = add_command(task, "update", "change a task", [o](Context& ctx) {
        TeamRecord team = ctx.team();
        reconcile(ctx, team);
        tasks::TaskChange change = o->change;
        if (change.description == "-") change.description = text_argument("-");
        Task t = TaskList(ctx.store(), ctx.clock()).update(team, ctx.caller(team), o->id, change);
        return print_result(ctx, t, "updated task " + std::to_string(t.id));
    });
    cmd->add_option("ID", o->id, "the task")->required();
    optional_value(cmd, "--status", o->change.status, "pending, in_progress, completed or deleted")
        ->type_name("STATUS");
    optional_value(cmd, "--owner", o->change.owner, "give it to this agent")->type_name("NAME");
    cmd->add_flag("--unassign", o->change.unassign,
                  "take it from its owner (an in_progress task becomes pending)");
    optional_value(cmd, "--subject", o->change.subject, "a new subject")->type_name("TEXT");
    optional_value(cmd, "--description", o->change.description,
                   "a new description ('-': read it from stdin)")
        ->type_name("TEXT");
    cmd->footer(
        "An unowned task may be changed by any member; an owned one by its owner or the leader.\n"
        "Examples:\n"
        "  team task update 3 --owner worker-2\n"
        "  team task update 3 --unassign\n"
        "  team task update 4 --status deleted");
}

void add_done(CLI::App& task) {
    auto id = std::make_shared<std::string>();
    auto* cmd = add_command(
        task, "done", "mark a task completed (its owner or the leader)", [id](Context& ctx) {
            TeamRecord team = ctx.team();
            reconcile(ctx, team);
            Task t = TaskList(ctx.store(), ctx.clock()).done(team, ctx.caller(team), *id);
            return print_result(ctx, t, "completed task " + std::to_string(t.id));
        });
    cmd->add_option("ID", *id, "the task")->required();
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
