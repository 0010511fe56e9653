// What a spawn (team/spawn.cpp) and a resume (team/resume.cpp) share: the steps that start an
// agent's pane for a record that says `spawning`.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include "base/time.hpp"
#include "proc/processes.hpp"
#include "state/records.hpp"
#include "state/store.hpp"
#include "tmux/server.hpp"

namespace team {

// A file only its user may read (a preset's settings), replaced whole; the directories made for
// it are the user's alone too (Gemini CLI skips a settings file in a directory others may write).
void write_private_file(const std::filesystem::path& path, const std::string& content);

// The agent's log file, made private (SPEC 2), appended to by its pane.
void make_log_file(const std::string& log_file);

// The pane, running `team __agent ID`, and the wait for its supervisor to record the command
// running (or its end, or why it could not start). On any failure the pane goes and `undo` runs
// (a spawn deletes its record; a resume records the agent lost again), then the error is thrown.
AgentRecord open_pane_and_wait(Store& store, const Clock& clock, proc::Processes& processes,
                               tmux::TmuxServer& server, const TeamRecord& team,
                               const AgentRecord& agent, const std::function<void()>& undo);

}  // namespace team
