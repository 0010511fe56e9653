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

// The absolute path of this process's own binary (/proc/self/exe): what team starts again for
// its supervisors, hosts and servers, never a `team` found on the PATH (another version, maybe).
// Throws a general failure, naming why, when it cannot be read.
std::string own_binary();

// What a configuration that outlives this process should name to run `self` again (the MCP
// servers that spawn presets write): the `program` found on `path` when it is the same binary
// (the same file, or a copy with the same bytes, as `cmake --install` and the package make),
// else `self`. An empty `path` is the process's PATH.
std::string installed_or_self(const std::string& program, const std::string& self,
                              const std::string& path = "");

}  // namespace team
