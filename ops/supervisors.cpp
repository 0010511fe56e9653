#include "ops/supervisors.hpp"

#include "shells/shells.hpp"
#include "team/acp_host.hpp"
#include "team/agents.hpp"

namespace team::ops {

int supervise_shell(Core& core, const std::string& id, int ready_fd) {
    return shells::Shells::supervise(core.store(), id, ready_fd);
}

int supervise_agent(Core& core, std::int64_t agent_id) {
    return Agents::supervise(core.store(), agent_id);
}

int host_acp_agent(Core& core, std::int64_t agent_id) {
    return team::host_acp_agent(core.store(), agent_id);
}

}  // namespace team::ops
