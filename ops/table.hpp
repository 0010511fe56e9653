// The entries of the operations table, one per verb, defined beside their bodies (ops/*_ops.cpp)
// and listed in order by ops/table.cpp. Faces use operations() and find_operation()
// (ops/operation.hpp), not these names.
#pragma once

#include "ops/operation.hpp"

namespace team::ops {

extern const Operation create_team_op, list_teams_op, team_status_op, delete_team_op;
extern const Operation spawn_agent_op, list_agents_op, attach_op, agent_logs_op, prompt_agent_op;
extern const Operation show_agent_op;  // the HTTP API's GET of one agent
extern const Operation send_message_op, read_inbox_op, ack_messages_op;
extern const Operation add_task_op, list_tasks_op, show_task_op, claim_task_op, update_task_op,
    complete_task_op;
extern const Operation kill_agent_op, approve_shutdown_op, reject_shutdown_op, confirm_shutdown_op,
    shutdown_status_op, teardown_op;
extern const Operation list_activity_op;
extern const Operation wait_agents_op, config_list_op, config_get_op, config_set_op,
    config_unset_op;
extern const Operation usage_op;
extern const Operation resume_op;          // SPEC 19
extern const Operation land_op, lands_op;  // SPEC 20
extern const Operation diff_agent_op, merge_agent_op, merge_check_op, list_worktrees_op,
    restore_worktree_op, remove_worktree_op, gc_worktrees_op, repair_worktrees_op;
extern const Operation cancel_turn_op, list_permissions_op, answer_permission_op,
    allow_permission_op, deny_permission_op;
extern const Operation kill_shell_op, release_shell_op, gc_shells_op;
extern const Operation start_shell_op, list_shells_op, shell_status_op, shell_output_op,
    wait_shell_op, run_op;
extern const Operation add_host_op, list_hosts_op, check_host_op, remove_host_op, lost_host_op;
extern const Operation exec_in_session_op, start_in_session_op, list_sessions_op, show_session_op,
    close_session_op;

}  // namespace team::ops
