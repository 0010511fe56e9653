#include "team/claude_state_watch.hpp"

#include <poll.h>
#include <sys/stat.h>

#include <cerrno>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/programs.hpp"
#include "proc/companion.hpp"
#include "team/agent_activity.hpp"
#include "team/screen_watch.hpp"

namespace team {

namespace fs = std::filesystem;

bool runs_claude_code(const std::vector<std::string>& argv) {
    if (argv.empty()) return false;
    return fs::path(argv[0]).filename().string().rfind("claude", 0) == 0;
}

fs::path claude_config_dir(const std::vector<std::string>& env) {
    std::string home;
    for (const auto& kv : env) {
        if (kv.rfind("CLAUDE_CONFIG_DIR=", 0) == 0 && kv.size() > 18) return kv.substr(18);
        if (kv.rfind("HOME=", 0) == 0) home = kv.substr(5);
    }
    return home.empty() ? fs::path() : fs::path(home) / ".claude";
}

bool start_claude_state_watch(const fs::path& home, std::int64_t agent_id, std::int64_t pid,
                              const fs::path& dir) {
    if (dir.empty()) return false;
    try {
        proc::start_companion(own_binary(),
                              {own_binary(), "__claude-state", "--home", home.string(),
                               std::to_string(agent_id), std::to_string(pid), dir.string()});
        return true;
    } catch (const std::exception&) {
        return false;
    }
}

namespace {

// The file's status, if it is there and says one.
std::optional<std::string> status_in(const fs::path& file) {
    try {
        std::ifstream in(file);
        if (!in) return std::nullopt;
        std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
        auto doc = nlohmann::json::parse(text, nullptr, false);
        if (doc.is_object() && doc.contains("status") && doc["status"].is_string())
            return doc["status"].get<std::string>();
    } catch (const std::exception&) {
    }
    return std::nullopt;
}

}  // namespace

int watch_claude_state(Store& store, std::int64_t agent_id, std::int64_t pid, const fs::path& dir) {
    SystemClock clock;
    AgentActivity activity(store, clock);
    fs::path file = dir / "sessions" / (std::to_string(pid) + ".json");
    std::string last;
    struct timespec seen {};
    while (true) {
        // The file's time, looked at every kScreenLook (not inotify: closing a watch waits for
        // the kernel's grace period, which every kill of the agent's tree would wait for).
        struct stat st {};
        if (::stat(file.c_str(), &st) == 0 &&
            (st.st_mtim.tv_sec != seen.tv_sec || st.st_mtim.tv_nsec != seen.tv_nsec)) {
            seen = st.st_mtim;
            auto status = status_in(file);
            if (status && *status != last) {
                last = *status;
                ActivityReport r;
                r.source = "hooks";
                r.event = "state file: " + *status;
                r.state = *status == "busy"      ? "working"
                          : *status == "idle"    ? "idle"
                          : *status == "waiting" ? "waiting"
                                                 : "";
                // A wait is told once, with what it waits on: the file only confirms one a
                // hook reported.
                r.only_while_waiting = *status == "waiting";
                if (!r.state.empty()) {
                    try {
                        activity.report(agent_id, r);
                    } catch (const std::exception&) {
                        last.clear();  // a busy store: said again at the next look
                    }
                }
            }
        }
        // (It ends with its pane supervisor: proc/companion.hpp.)
        pollfd none{-1, 0, 0};
        if (::poll(&none, 0, static_cast<int>(kScreenLook.count())) < 0 && errno != EINTR) break;
    }
    return 0;
}

}  // namespace team
