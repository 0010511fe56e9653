#include "ops/supervisors.hpp"

#include "hosts/keeper.hpp"
#include "hosts/link.hpp"
#include "ops/remote.hpp"
#include "shells/shells.hpp"
#include "team/acp_host.hpp"
#include "team/agents.hpp"
#include "team/worktree_watch.hpp"

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

int watch_worktree(Core& core, std::int64_t agent_id) {
    return team::watch_worktree(core.store(), agent_id);
}

int run_link(Core& core, const std::string& name, const std::string& ssh,
             const std::string& team_path, const std::string& version, int ready_fd) {
    // The far side is asked to use this home's store (its hello).
    std::string url = core.store().url();
    return hosts::run_link(core.home(), {name, ssh, team_path}, version, url, ready_fd);
}

int run_keeper(Core& core, int ready_fd) {
    return hosts::run_keeper(core.ensure_home(), core.clock(), ready_fd);
}

int run_channel(const std::string& version) {
    return serve_channel(version, 0, 1);
}

}  // namespace team::ops
