#include "ops/table.hpp"

#include <array>

#include "ops/doctor_ops.hpp"
#include "ops/execution_ops.hpp"
#include "ops/store_ops.hpp"

namespace team::ops {

namespace {

// The order of SPEC 3-10: teams, agents, messages, tasks, stopping agents, background shells,
// executions (SPEC 13), team run, sessions, activity, worktrees (SPEC 14), ACP agents (SPEC 15);
// then doctor, the store and its hosts (SPEC 16).
// clang-format off
const std::array kTable{
    &create_team_op,     &list_teams_op,       &team_status_op,     &delete_team_op,
    &spawn_agent_op,     &list_agents_op,      &attach_op,          &agent_logs_op,
    &prompt_agent_op,    &wait_agents_op,      &usage_op,           &send_message_op,     &read_inbox_op,      &ack_messages_op,
    &add_task_op,        &list_tasks_op,       &show_task_op,       &claim_task_op,
    &update_task_op,     &complete_task_op,    &kill_agent_op,      &approve_shutdown_op,
    &reject_shutdown_op, &confirm_shutdown_op, &shutdown_status_op, &teardown_op,        &resume_op,
    &start_shell_op,     &list_shells_op,      &shell_status_op,    &shell_output_op,
    &wait_shell_op,      &kill_shell_op,       &release_shell_op,   &gc_shells_op,
    &list_executions_op, &execution_status_op, &terminate_execution_op,
    &run_op,
    &exec_in_session_op, &start_in_session_op, &list_sessions_op,   &show_session_op,
    &close_session_op,
    &list_activity_op,
    &diff_agent_op,      &merge_agent_op,      &merge_check_op,     &list_worktrees_op,
    &restore_worktree_op, &remove_worktree_op, &gc_worktrees_op,    &repair_worktrees_op,
    &land_op,            &lands_op,
    &cancel_turn_op,     &list_permissions_op, &answer_permission_op, &allow_permission_op,
    &deny_permission_op,
    &config_list_op,     &config_get_op,       &config_set_op,      &config_unset_op,
    &doctor_op,
    &store_check_op,     &store_migrate_op,    &store_use_op,
    &add_host_op,        &list_hosts_op,       &check_host_op,      &remove_host_op,
    &lost_host_op,
    &show_agent_op,
};
// clang-format on

}  // namespace

std::span<const Operation* const> operations() {
    return kTable;
}

const Operation* find_operation(std::string_view name) {
    for (const auto* op : kTable) {
        if (op->name == name) return op;
    }
    return nullptr;
}

const Operation* find_command(std::string_view words) {
    if (words.empty()) return nullptr;  // operations that have no command line verb
    for (const auto* op : kTable) {
        if (op->command == words) return op;
    }
    return nullptr;
}

}  // namespace team::ops
