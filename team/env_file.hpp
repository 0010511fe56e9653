// An agent's --env values on their way to its pane supervisor (SPEC 19: the store keeps their
// names only). Its spawn (or resume) writes them to a file of the home that only the user may
// read, `<home>/spawn/<agent id>.env`; the supervisor takes them, and the file goes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace team {

std::filesystem::path env_file_path(const std::filesystem::path& home, std::int64_t agent_id);

// Writes `entries` ("KEY=VALUE") for the agent's supervisor, mode 0600 in a directory of mode
// 0700. Throws a general failure when it cannot.
void write_env_file(const std::filesystem::path& home, std::int64_t agent_id,
                    const std::vector<std::string>& entries);

// The entries written for the agent, and the file removed; none when there is no file.
std::vector<std::string> take_env_file(const std::filesystem::path& home, std::int64_t agent_id);

// Removes the file, if a spawn that wrote it fails before its supervisor takes it.
void drop_env_file(const std::filesystem::path& home, std::int64_t agent_id);

// The names of `entries` ("KEY=VALUE" → "KEY"), as the store keeps them.
std::vector<std::string> env_names(const std::vector<std::string>& entries);

}  // namespace team
