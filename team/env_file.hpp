// An agent's --env values on their way to its pane supervisor (SPEC 19: the store keeps their
// names only). Its spawn (or resume) writes them to a file of the home that only the user may
// read, `<home>/spawn/<agent id>-<spawner pid>.env`; the supervisor takes them, and the file
// goes. The spawner's pid in its name: a pane opened by a resume that died never takes the file
// of the resume that started the record again.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace team {

std::filesystem::path env_file_path(const std::filesystem::path& home, std::int64_t agent_id,
                                    std::int64_t spawner);

// Writes `entries` ("KEY=VALUE") for the agent's supervisor, from this process (its spawner),
// mode 0600 in a directory of mode 0700. Throws a general failure when it cannot.
void write_env_file(const std::filesystem::path& home, std::int64_t agent_id,
                    const std::vector<std::string>& entries);

// The entries `spawner` wrote for the agent, and the file removed; none when there is no file.
std::vector<std::string> take_env_file(const std::filesystem::path& home, std::int64_t agent_id,
                                       std::int64_t spawner);

// Removes the file `spawner` wrote, if its spawn failed (or died) before its supervisor took it.
void drop_env_file(const std::filesystem::path& home, std::int64_t agent_id, std::int64_t spawner);

// The names of `entries` ("KEY=VALUE" → "KEY"), as the store keeps them.
std::vector<std::string> env_names(const std::vector<std::string>& entries);

}  // namespace team
