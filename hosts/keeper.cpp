#include "hosts/keeper.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "proc/detach.hpp"
#include "proc/processes.hpp"
#include "proc/terminate.hpp"
#include "state/host_rows.hpp"
#include "state/members.hpp"
#include "tmux/server.hpp"
#include "tmux/tmux.hpp"

namespace team::hosts {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

namespace {

fs::path lock_path(const fs::path& home) {
    return home / "keeper.lock";
}

// What the keeper ends when its lease is gone: each agent's tree with its supervisor, found by
// its records (read while the store still answered) and by its marker.
std::vector<proc::TreeTarget> targets_of(const fs::path& home,
                                         const std::vector<AgentRecord>& agents) {
    std::vector<proc::TreeTarget> out;
    for (const auto& a : agents) {
        out.push_back(proc::tree_of_record(a.supervisor_pid, a.supervisor_start, a.pid, a.pid_start,
                                           agent_marker(home, a), true));
    }
    return out;
}

void end_everything(const fs::path& home, const std::vector<AgentRecord>& agents) {
    proc::SystemProcesses processes;
    processes.terminate_trees(targets_of(home, agents), SIGTERM, 1s, true);
    // The panes' server: nothing of this home's agents is left to show in it.
    if (tmux::TmuxServer::server_alive(home)) {
        tmux::TmuxClient client(tmux::TmuxServer::socket_args(home),
                                tmux::TmuxServer::ensure_config(home), 5s);
        client.run({"kill-server"});
    }
}

}  // namespace

std::string ensure_keeper(Store& store, const std::string& team_binary) {
    if (store.engine() != Db::Engine::postgresql) return "";
    if (!find_host_by_home(store, store.home_id())) return "";  // not a host: no lease to hold
    int fd = ::open(lock_path(store.home()).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0) {
        bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0;
        ::close(fd);
        if (held) return "";  // a keeper runs
    }
    auto answer = proc::start_detached(
        team_binary, {team_binary, "__keeper", "--home", store.home().string()}, 5s);
    if (answer.rfind("ok", 0) == 0) return "";
    return "the host's keeper did not start" + (answer.empty() ? std::string() : ": " + answer);
}

int run_keeper(const fs::path& home, const Clock& clock, int ready_fd) {
    int lock_fd = ::open(lock_path(home).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (lock_fd < 0 || ::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
        proc::answer_starter(ready_fd, "ok");  // another keeper holds the lease
        return 0;
    }
    Store store(home);
    auto host = find_host_by_home(store, store.home_id());
    if (!host) {
        proc::answer_starter(ready_fd, "err this home is no host of the store");
        return 1;
    }
    const auto lease = std::chrono::milliseconds(host->lease_ms);
    const auto every = std::chrono::milliseconds(renew_every_ms(*host));
    const auto home_id = store.home_id();

    // The renewals run on a thread of their own: a store cut off may hang a statement for as
    // long as TCP takes to give up, and the keeper's own deadline must not wait for that.
    std::mutex m;
    std::condition_variable cv;
    std::vector<AgentRecord> agents;  // the live agents, as of the last renewal
    std::atomic<std::int64_t> last_ok{SteadyClock::now().time_since_epoch().count()};
    std::atomic<bool> lost{false}, empty{false};
    std::thread renewer([&] {
        int empty_rounds = 0;
        for (;;) {
            try {
                bool renewed =
                    store.write([&] { return renew_host_lease(store, home_id, clock.now()); });
                if (!renewed) {
                    lost = true;  // declared lost, or removed: our agents' tasks went back
                } else {
                    last_ok = SteadyClock::now().time_since_epoch().count();
                }
                std::vector<AgentRecord> now;
                for (auto id : live_agents_of_home(store, home_id)) {
                    if (auto a = load_agent(store, id)) now.push_back(*a);
                }
                empty_rounds = now.empty() ? empty_rounds + 1 : 0;
                {
                    std::lock_guard lock(m);
                    if (!now.empty() || empty_rounds > 0) agents = std::move(now);
                }
                if (empty_rounds >= 2 && !lost) {
                    store.write([&] { release_host_lease(store, home_id); });
                    // Handed over without a gap: a spawn makes its agent's record before it
                    // looks for a keeper. Unlocked first, then read: either that spawn finds
                    // the lock free and starts a keeper, or this read sees its agent and this
                    // keeper goes on (unless the new one took the lock meanwhile).
                    ::flock(lock_fd, LOCK_UN);
                    if (!live_agents_of_home(store, home_id).empty() &&
                        ::flock(lock_fd, LOCK_EX | LOCK_NB) == 0) {
                        empty_rounds = 0;
                        continue;
                    }
                    empty = true;
                }
            } catch (const std::exception&) {
                // the store did not answer: the deadline below decides
            }
            cv.notify_all();
            if (lost || empty) return;
            std::this_thread::sleep_for(every);
        }
    });
    renewer.detach();
    proc::answer_starter(ready_fd, "ok");
    // 3/4 of the lease without a renewal: end everything before anyone hands its tasks back.
    const auto give_up = lease * 3 / 4;
    for (;;) {
        std::unique_lock lock(m);
        cv.wait_for(lock, 100ms);
        if (empty) break;
        auto since =
            SteadyClock::now() - SteadyClock::time_point(SteadyClock::duration(last_ok.load()));
        if (lost || since > give_up) {
            auto copy = agents;
            lock.unlock();
            end_everything(home, copy);
            break;
        }
    }
    // The renewer may be stuck in a statement that never returns: leave without waiting for it.
    std::_Exit(0);
}

}  // namespace team::hosts
