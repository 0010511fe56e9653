// Finding a program as exec would: an OS primitive that the tmux client and the supervisors share.
#pragma once

#include <optional>
#include <string>

namespace team {

// Whether `path` is a regular file this process may execute.
bool is_executable_file(const std::string& path);

// The path exec would run for `program` with this PATH, or nothing if none is executable. A
// relative path with a '/' (./run.sh) is taken from `cwd`, where the command will run.
std::optional<std::string> find_program(const std::string& program, const std::string& path,
                                        const std::string& cwd = "");

}  // namespace team
