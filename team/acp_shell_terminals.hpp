// The terminals of an ACP agent (SPEC 15) as section 8's background shells of that agent, for
// its host (team/acp_host.hpp): `team shell list`, the executions API and the dashboard's Stop
// see them. Each call opens a store of its own (they run on the client's worker threads, and
// wait_for_exit blocks). A released terminal is ended but its shell stays, with its whole
// output, until `team shell gc`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "acp/terminals.hpp"
#include "state/shell_records.hpp"

namespace team {

class ShellTerminals final : public acp::Terminals {
  public:
    ShellTerminals(std::filesystem::path home, std::int64_t team_id, std::string agent,
                   std::string cwd);

    std::string create(const acp::TerminalSpec& spec) override;
    acp::TerminalOutput output(const std::string& id) override;
    acp::ExitStatus wait_for_exit(const std::string& id) override;
    void kill(const std::string& id) override;
    void release(const std::string& id) override;
    void release_all() override;

  private:
    // The output limit of terminal `id`; not_found when it is not (or no longer) the agent's.
    std::optional<std::uint64_t> known(const std::string& id);
    // Its whole tree: SIGTERM, 2 s, SIGKILL (a shell that ended already is left as it is).
    void end(const std::string& id);
    static acp::ExitStatus exit_of(const ShellRecord& shell);

    std::filesystem::path home_;
    std::int64_t team_id_;
    std::string agent_, cwd_;
    std::mutex mutex_;
    std::map<std::string, std::optional<std::uint64_t>> limits_;
};

}  // namespace team
