// Operations on other hosts (SPEC 16, second half). Near side: an operation whose agent (or
// host, for spawn --host) is on another host of the store is run by that host's own `team`,
// through the home's link to it (hosts/link.hpp), with the same values and identity; its result
// comes back whole. Far side: `team __channel`, which reads those requests on stdin and runs
// each through `invoke` as a command of that host would, many at once.
#pragma once

#include <optional>
#include <string>

#include "ops/operation.hpp"

namespace team::ops {

// The result from the host that runs `op` for these values, or nothing when it runs here (no
// host involved, or the host is this home). Throws a team::Error for an unknown host.
std::optional<Result> run_on_host(Core& core, const Operation& op, const Args& args,
                                  const std::optional<TeamRecord>& team);

// kill-agent --force of an agent whose host did not answer (`why`): the force is stored for its
// supervisor and the result is `unconfirmed` (ops/stop_ops.cpp).
Result kill_agent_unanswered(Request& r, const std::string& why);

// `team __channel`: serves requests on `in_fd`, replies on `out_fd`, until `in_fd` ends. Returns
// the exit code.
int serve_channel(const std::string& version, int in_fd, int out_fd);

}  // namespace team::ops
