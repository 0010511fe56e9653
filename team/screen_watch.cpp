#include "team/screen_watch.hpp"

#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>

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
    int fd = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    if (fd < 0) return 1;
    // The log is made before the pane opens (team/spawn.cpp); tmux appends to it.
    if (::inotify_add_watch(fd, agent->log_file->c_str(), IN_MODIFY | IN_DELETE_SELF) < 0) {
        ::close(fd);
        return 1;
    }
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
    // What came before the watch was set counts as output now.
    std::error_code ec;
    if (std::filesystem::file_size(*agent->log_file, ec) > 0 && !ec) {
        working = true;
        last_output = Steady::now();
        try {
            quiet = config_duration(store, team_id, "idle-after");
        } catch (const std::exception&) {
        }
        if (!report("working")) {
            ::close(fd);
            return 0;
        }
    }
    alignas(inotify_event) char buf[4096];
    while (true) {
        int timeout = -1;
        if (working) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                last_output + quiet - Steady::now());
            timeout = static_cast<int>(std::max<long long>(0, left.count()));
        }
        pollfd p{fd, POLLIN, 0};
        int n = ::poll(&p, 1, timeout);
        if (n < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (n == 0) {
            working = false;
            if (!report("idle")) break;
            continue;
        }
        bool gone = false;
        ssize_t got;
        while ((got = ::read(fd, buf, sizeof buf)) > 0) {
            for (char* at = buf; at < buf + got;) {
                auto* e = reinterpret_cast<inotify_event*>(at);
                if (e->mask & (IN_DELETE_SELF | IN_IGNORED)) gone = true;
                at += sizeof(inotify_event) + e->len;
            }
        }
        if (gone) break;  // the log is gone (a purge): so is the agent
        last_output = Steady::now();
        if (!working) {
            working = true;
            try {
                quiet = config_duration(store, team_id, "idle-after");
            } catch (const std::exception&) {
            }
            if (!report("working")) break;
        }
    }
    ::close(fd);
    return 0;
}

}  // namespace team
