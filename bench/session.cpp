// Figures of sessions (SPEC 9): the round trip of `team session exec NAME -- true`, and, as a
// second reference for it, `bash --noprofile --norc -c true` (what the fresh bash each session
// command runs in costs by itself on this machine).

#include <string>
#include <vector>

#include "bench/harness.hpp"

namespace bench {

std::vector<Figure> session_figures(const std::string& team) {
    std::vector<Figure> list;
    // The bash every session command starts, alone: no goal, a reference for the next figure.
    list.push_back({"bash --noprofile --norc -c true (session reference)", 0.0, nullptr,
                    sample_argv({"bash", "--noprofile", "--norc", "-c", "true"}), nullptr});
    // `team session exec bench -- true` on a session that holds a small state (a cwd, an
    // exported variable, a function, an alias): the session read and the exec registered (one
    // write transaction), a bash restoring the state and taking its two snapshots, the
    // snapshots read and compared, the exec's row removed (a second write transaction).
    // Goal: median <= 15 ms.
    list.push_back({"session exec NAME -- true round trip", 15.0,
                    [](Env& env) {
                        run_checked(env, {env.team, "session", "exec", "bench", "--",
                                          "cd '" + env.dir +
                                              "' && export API_KEY=x; "
                                              "greet() { echo \"hi $1\"; }; alias ll='ls -l'"});
                    },
                    sample_argv({team, "session", "exec", "bench", "--", "true"}), nullptr});
    return list;
}

}  // namespace bench
