// Starting a detached process and hearing from it once: fork, setsid, exec, with a pipe on
// which the child answers one line ("ok ..." or "err ...") when it has done what it was started
// for. The child is in a session of its own, detached from the caller's terminal, with
// /dev/null for stdin, stdout and stderr, the caller's umask for commands
// (base/umask.hpp) and no other descriptor of the caller open but the answer's, on fd 3.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace team::proc {

// Runs the program at `path` with `argv` (argv[0] included) detached and waits up to `timeout`
// for its one line, which it returns without the newline (what it wrote, when it closed fd 3
// before a newline; "" when it said nothing in time). Throws `failed` when the pipe or the
// fork fails.
std::string start_detached(const std::string& path, const std::vector<std::string>& argv,
                           std::chrono::milliseconds timeout);

// The child's side: writes `line` and a newline to `fd` and closes it; `fd` becomes -1. Nothing
// when `fd` is already -1.
void answer_starter(int& fd, std::string_view line);

// Writes all of `data` to `fd`, retrying on EINTR; stops at an error.
void write_all(int fd, std::string_view data);

}  // namespace team::proc
