// The sampler of what an agent spends (SPEC 18): a thread of its pane supervisor, and the same
// loop as a process of its own (`team __usage ID`) (team/usage.hpp).
#include <poll.h>
#include <pthread.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "base/duration.hpp"
#include "proc/tree_sample.hpp"
#include "state/members.hpp"
#include "state/usage_rows.hpp"
#include "team/config.hpp"
#include "team/usage.hpp"

namespace team {

namespace {

// What a sampler last wrote, so that it writes only what moved.
struct Saved {
    std::int64_t cpu = -1, memory = -1;
    EpochMs at = 0;
};

// One period of a sampler: the tree, the record's new calls, the limits. False when the agent
// has ended (nothing more to sample).
bool sample_once(Store& store, const Clock& clock, std::int64_t agent_id, pid_t root,
                 Saved& saved) {
    auto agent = load_agent(store, agent_id);
    if (!agent || !agent->live()) return false;
    proc::TreeSample sample = proc::sample_tree(root);
    if (sample.processes == 0) return false;  // the agent's process is gone
    read_agent_records(store, agent_id);
    EpochMs now = clock.now();
    // Written when it moved: CPU by half a second, memory by a MiB and 1 %, else every 30 s
    // (each commit wakes every watch of the store).
    std::int64_t memory = sample.pss > 0 ? sample.pss : sample.rss;
    bool moved = saved.cpu < 0 || sample.cpu_ms - saved.cpu >= 500 ||
                 (std::llabs(memory - saved.memory) >= (1 << 20) &&
                  std::llabs(memory - saved.memory) * 100 >= saved.memory) ||
                 now - saved.at >= 30'000;
    if (moved) {
        store.write([&] {
            save_usage_sample(store, agent_id, sample.cpu_ms, sample.rss, sample.pss, now);
        });
        saved = {sample.cpu_ms, memory, now};
    }
    enforce_limits(store, clock, agent_id, sample);
    return true;
}

Millis sample_period(Store& store, std::int64_t team_id) {
    try {
        return config_duration(store, team_id, "sample-every");
    } catch (const std::exception&) {
        return Millis(2000);
    }
}

}  // namespace

UsageSampler::UsageSampler(std::filesystem::path home, std::string url, std::int64_t agent_id,
                           pid_t root)
    : home_(std::move(home)), url_(std::move(url)), agent_id_(agent_id), root_(root) {
    thread_ = std::thread([this] { run(); });
}

UsageSampler::~UsageSampler() {
    stop();
}

void UsageSampler::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    woken_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void UsageSampler::run() {
    ::pthread_setname_np(::pthread_self(), "team-usage");  // its CPU, apart (bench/usage.cpp)
    SystemClock clock;
    std::optional<Store> store;
    std::optional<std::int64_t> team_id;
    Saved saved;
    // The first sample a moment after the start, off the spawn's path (which has its last
    // write to make): a tenth of a second, then every period.
    Millis every{100};
    while (true) {
        {
            std::unique_lock lock(mutex_);
            if (woken_.wait_for(lock, every, [this] { return stopping_; })) return;
        }
        try {
            if (!store) store.emplace(home_, url_);
            if (!team_id) {
                auto agent = load_agent(*store, agent_id_);
                if (!agent) return;
                team_id = agent->team_id;
            }
            every = sample_period(*store, *team_id);
            if (!sample_once(*store, clock, agent_id_, root_, saved)) return;
        } catch (const std::exception&) {
            // a busy or unreachable store: the next period tries again
            every = std::max(every, Millis(1000));
        }
    }
}

int watch_usage(Store& store, std::int64_t agent_id) {
    SystemClock clock;
    auto agent = load_agent(store, agent_id);
    if (!agent || !agent->pid) return 1;
    Saved saved;
    while (true) {
        Millis every = sample_period(store, agent->team_id);
        try {
            if (!sample_once(store, clock, agent_id, static_cast<pid_t>(*agent->pid), saved)) break;
        } catch (const std::exception&) {
            // a busy store: the next period tries again
        }
        pollfd none{-1, 0, 0};
        if (::poll(&none, 0, static_cast<int>(every.count())) < 0 && errno != EINTR) break;
    }
    return 0;
}

}  // namespace team
