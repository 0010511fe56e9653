// Test support: run a function in several forked processes at once (for tests of what
// concurrent processes do to one store). The function returns the child's exit code; no
// Catch2 assertion may be used inside it.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <vector>

namespace team::test {

// Forks n children that each wait on a shared start pipe, then run fn(i) and exit with its
// result. Returns the exit codes in order of i.
inline std::vector<int> run_in_children(int n, const std::function<int(int)>& fn) {
    int gate[2];
    if (::pipe(gate) != 0) return {};
    std::vector<pid_t> pids;
    for (int i = 0; i < n; ++i) {
        pid_t pid = ::fork();
        if (pid == 0) {
            ::close(gate[1]);
            char c;
            (void)!::read(gate[0], &c, 1);  // returns when the parent closes the gate
            int code = 1;
            try {
                code = fn(i);
            } catch (...) {
                code = 99;
            }
            ::_exit(code);
        }
        pids.push_back(pid);
    }
    ::close(gate[0]);
    ::close(gate[1]);  // go
    std::vector<int> codes;
    for (pid_t pid : pids) {
        int status = 0;
        ::waitpid(pid, &status, 0);
        codes.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    }
    return codes;
}

}  // namespace team::test
