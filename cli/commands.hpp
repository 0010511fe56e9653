// One function per command file: each declares its subcommand, its options and its body.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace CLI {
class App;
}

namespace team::cli {

// A kept worktree (team/worktrees.hpp's JSON) in a line, for kill-agent's and teardown's views.
std::string kept_worktree_line(const nlohmann::json& worktree);

void add_create_command(CLI::App& app);
void add_list_command(CLI::App& app);
void add_status_command(CLI::App& app);
void add_delete_command(CLI::App& app);
void add_activity_command(CLI::App& app);
void add_shell_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_supervise_command(CLI::App& app);
void add_spawn_command(CLI::App& app);
void add_agents_command(CLI::App& app);
void add_attach_command(CLI::App& app);
void add_logs_command(CLI::App& app);
void add_prompt_command(CLI::App& app);
void add_wait_command(CLI::App& app);
void add_usage_command(CLI::App& app);
void add_config_command(CLI::App& app);
void add_send_command(CLI::App& app);
void add_inbox_command(CLI::App& app);
void add_task_command(CLI::App& app);
void add_kill_command(CLI::App& app);
void add_shutdown_command(CLI::App& app);
void add_teardown_command(CLI::App& app);
void add_resume_command(CLI::App& app);
void add_diff_command(CLI::App& app);
void add_merge_command(CLI::App& app);
void add_worktree_command(CLI::App& app);
void add_land_command(CLI::App& app);
void add_lands_command(CLI::App& app);
void add_cancel_command(CLI::App& app);
void add_permission_command(CLI::App& app);
void add_session_command(CLI::App& app);
void add_mcp_command(CLI::App& app);
void add_host_command(CLI::App& app);
void add_serve_command(CLI::App& app);

}  // namespace team::cli
