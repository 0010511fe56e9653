// The home's notify command (SPEC 17): `team config set notify CMD`. Each event (needs_input,
// idle, ended; the budget events of SPEC 18) is one JSON document on the command's stdin; the
// command runs through `sh -c`, detached, in a session of its own, without the agent's TEAM_*
// variables. Nothing of team waits for it: the write that decided the event starts
// `team __notify`, a runner that lives on alone (two forks, so no process of ours has to reap
// it), and returns. The runner ends the command's process group after the `notify-timeout` setting
// (10 s), and a command that fails, cannot start or runs out of time is written to the activity log
// as `notify_failed`, with the end of what it wrote on stderr.
#pragma once

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "state/store.hpp"

namespace team {

// Inside a write: when the home has a notify command, it is run with `event` once the write has
// committed (never when it rolls back). Never throws.
void notify_after_commit(Store& store, const nlohmann::json& event);

// Starts the runner for `event` now, detached. Never throws, never waits for the command.
void start_notify(const std::filesystem::path& home, const std::string& command,
                  const nlohmann::json& event, std::chrono::milliseconds bound);

// The body of `team __notify --home HOME CMD MS`: runs CMD with the event read from stdin, within
// `bound` (the notify-timeout setting when it started), and logs a failure. Returns 0 when the
// command succeeded.
int run_notify(const std::filesystem::path& home, const std::string& command,
               std::chrono::milliseconds bound);

}  // namespace team
