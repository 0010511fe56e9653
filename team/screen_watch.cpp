#include "team/screen_watch.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "base/programs.hpp"
#include "base/text.hpp"
#include "state/members.hpp"
#include "team/agent_activity.hpp"
#include "team/config.hpp"

namespace team {

bool start_screen_watch(tmux::Tmux& tmux, const std::string& pane_id,
                        const std::filesystem::path& home, std::int64_t agent_id) {
    // tmux runs the command through sh: every word quoted, whatever the home's path holds.
    std::string command = "exec " + shell_quote(own_binary()) + " --home " +
                          shell_quote(home.string()) + " __screen " + std::to_string(agent_id);
    return tmux.run({"pipe-pane", "-O", "-t", pane_id, command}).ok();
}

int watch_screen(Store& store, std::int64_t agent_id) {
    using Steady = std::chrono::steady_clock;
    SystemClock clock;
    AgentActivity activity(store, clock);
    auto agent = load_agent(store, agent_id);
    if (!agent) return 1;
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
    bool working = false;
    auto quiet = std::chrono::milliseconds(5000);
    Steady::time_point last_output{};
    char buf[16384];
    while (true) {
        int timeout = -1;
        if (working) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                last_output + quiet - Steady::now());
            timeout = static_cast<int>(std::max<long long>(0, left.count()));
        }
        pollfd p{0, POLLIN, 0};
        int n = ::poll(&p, 1, timeout);
        if (n < 0) {
            if (errno == EINTR) continue;
            return 1;
        }
        if (n == 0) {
            working = false;
            if (!report("idle")) return 0;
            continue;
        }
        ssize_t got = ::read(0, buf, sizeof buf);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return 0;  // the pane is gone
        last_output = Steady::now();
        if (!working) {
            working = true;
            try {
                quiet = config_duration(store, team_id, "idle-after");
            } catch (const std::exception&) {
            }
            if (!report("working")) return 0;
        }
    }
}

}  // namespace team
