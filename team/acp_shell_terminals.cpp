// The ACP agent's terminals as its background shells (team/acp_shell_terminals.hpp).
#include "team/acp_shell_terminals.hpp"

#include <signal.h>

#include <vector>

#include "base/error.hpp"
#include "base/time.hpp"
#include "proc/signals.hpp"
#include "shells/shells.hpp"
#include "state/store.hpp"

namespace team {

using namespace std::chrono_literals;

ShellTerminals::ShellTerminals(std::filesystem::path home, std::int64_t team_id, std::string agent,
                               std::string cwd)
    : home_(std::move(home)), team_id_(team_id), agent_(std::move(agent)), cwd_(std::move(cwd)) {}

std::string ShellTerminals::create(const acp::TerminalSpec& spec) {
    Store store(home_);
    SystemClock clock;
    shells::Shells shells(store, clock);
    shells::ShellStart start;
    start.argv.push_back(spec.command);
    start.argv.insert(start.argv.end(), spec.args.begin(), spec.args.end());
    start.cwd = spec.cwd.empty() ? cwd_ : spec.cwd.string();
    for (const auto& [k, v] : spec.env) start.env.push_back(k + "=" + v);
    start.env.push_back("PAGER=cat");
    start.team_id = team_id_;
    start.agent = agent_;
    start.actor = agent_;
    ShellRecord shell = shells.start(start);
    std::lock_guard lock(mutex_);
    limits_[shell.id] = spec.output_byte_limit;
    return shell.id;
}

acp::TerminalOutput ShellTerminals::output(const std::string& id) {
    auto limit = known(id);
    Store store(home_);
    SystemClock clock;
    shells::Shells shells(store, clock);
    ShellRecord shell = shells.get(id);
    acp::TerminalOutput out;
    auto slice = shells.output(shell, limit ? std::optional<std::size_t>(*limit) : std::nullopt);
    out.output = std::move(slice.output);
    out.truncated = slice.truncated || shell.output_truncated;
    if (!shell.running()) out.exit = exit_of(shell);
    return out;
}

acp::ExitStatus ShellTerminals::wait_for_exit(const std::string& id) {
    known(id);
    Store store(home_);
    SystemClock clock;
    shells::Shells shells(store, clock);
    auto shell = shells.wait(id, std::nullopt);
    known(id);  // released meanwhile: not_found
    return shell ? exit_of(*shell) : acp::ExitStatus{};
}

void ShellTerminals::kill(const std::string& id) {
    known(id);
    end(id);
}

void ShellTerminals::release(const std::string& id) {
    known(id);
    {
        std::lock_guard lock(mutex_);
        limits_.erase(id);
    }
    end(id);
}

void ShellTerminals::release_all() {
    std::vector<std::string> ids;
    {
        std::lock_guard lock(mutex_);
        for (const auto& [id, limit] : limits_) ids.push_back(id);
        limits_.clear();
    }
    for (const auto& id : ids) end(id);
}

std::optional<std::uint64_t> ShellTerminals::known(const std::string& id) {
    std::lock_guard lock(mutex_);
    auto it = limits_.find(id);
    if (it == limits_.end()) throw not_found("no terminal " + quote(id));
    return it->second;
}

void ShellTerminals::end(const std::string& id) {
    try {
        Store store(home_);
        SystemClock clock;
        shells::Shells shells(store, clock);
        if (shells.get(id).running()) shells.kill(id, SIGTERM, 2000ms, true, agent_);
    } catch (const std::exception&) {
    }
}

acp::ExitStatus ShellTerminals::exit_of(const ShellRecord& shell) {
    acp::ExitStatus status;
    status.exit_code = shell.exit_code;
    if (shell.signal) {
        try {
            status.signal = proc::parse_signal(*shell.signal, "signal", false);
        } catch (const std::exception&) {
        }
    }
    return status;
}

}  // namespace team
