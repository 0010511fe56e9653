#include "team/screen_watch.hpp"

#include <poll.h>
#include <sys/stat.h>

#include <cerrno>
#include <chrono>

#include "base/programs.hpp"
#include "proc/companion.hpp"
#include "state/members.hpp"
#include "team/agent_activity.hpp"
#include "team/config.hpp"

namespace team {

bool start_screen_watch(const std::filesystem::path& home, std::int64_t agent_id) {
    try {
        proc::start_companion(own_binary(), {own_binary(), "__screen", "--home", home.string(),
                                             std::to_string(agent_id)});
        return true;
    } catch (const std::exception&) {
        return false;
    }
}

int watch_screen(Store& store, std::int64_t agent_id) {
    using Steady = std::chrono::steady_clock;
    SystemClock clock;
    AgentActivity activity(store, clock);
    auto agent = load_agent(store, agent_id);
    if (!agent || !agent->log_file) return 1;
    std::optional<std::int64_t> team_id = agent->team_id;
    auto report = [&](const char* state) {
        ActivityReport r;
        r.state = state;
        r.source = "screen";
        r.event = "screen";
        try {
            return activity.report(agent_id, r);
        } catch (const std::exception&) {
            return true;  // a busy store: said again at the next change
        }
    };
    auto size = [&]() -> long long {
        struct stat st {};
        if (::stat(agent->log_file->c_str(), &st) != 0) return -1;
        return static_cast<long long>(st.st_size);
    };
    // A screen still from the start is idle too, once the quiet time has passed.
    bool working = true, said = false;
    auto quiet = std::chrono::milliseconds(5000);
    try {
        quiet = config_duration(store, team_id, "idle-after");
    } catch (const std::exception&) {
    }
    Steady::time_point last_output = Steady::now();
    long long seen = 0;  // what came before the watch counts as output now
    while (true) {
        long long now = size();
        if (now < 0) break;  // the log is gone (a purge): so is the agent
        if (now != seen) {
            seen = now;
            last_output = Steady::now();
            if (!working || !said) {
                working = true;
                said = true;
                try {
                    quiet = config_duration(store, team_id, "idle-after");
                } catch (const std::exception&) {
                }
                if (!report("working")) break;
            }
        } else if (working && Steady::now() - last_output >= quiet) {
            working = false;
            said = true;
            if (!report("idle")) break;
        }
        // A look at the log's size every kLook: the pane's output is appended there as it
        // comes. (Not inotify: closing a descriptor that has a watch waits for the kernel's
        // grace period, 10-15 ms, which every kill of the agent's tree would wait for.)
        pollfd none{-1, 0, 0};
        if (::poll(&none, 0, static_cast<int>(kScreenLook.count())) < 0 && errno != EINTR) break;
    }
    return 0;
}

}  // namespace team
