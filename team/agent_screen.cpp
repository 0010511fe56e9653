#include "team/agent_screen.hpp"


#include <fstream>
#include <sstream>

#include "base/terminal_text.hpp"
#include "base/whole_file.hpp"
#include "tmux/capture.hpp"

namespace team {

namespace fs = std::filesystem;

fs::path screen_file(const fs::path& log_file) {
    fs::path p = log_file;
    p.replace_extension(".screen");
    return p;
}

namespace {

// Whether the log draws a screen, judged by its end (a full-screen program draws all along).
bool log_draws_screen(const fs::path& log_file) {
    constexpr std::streamoff kTail = 1 << 20;
    std::ifstream in(log_file, std::ios::binary | std::ios::ate);
    if (!in) return false;
    std::streamoff size = in.tellg();
    std::streamoff from = size > kTail ? size - kTail : 0;
    in.seekg(from);
    std::string tail(static_cast<std::size_t>(size - from), '\0');
    in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
    tail.resize(static_cast<std::size_t>(in.gcount()));
    return draws_screen(tail);
}

}  // namespace

void keep_screen(tmux::Tmux& tmux, const std::string& pane_id, const fs::path& log_file) noexcept {
    try {
        if (!log_draws_screen(log_file)) return;
        auto text = tmux::capture_pane(tmux, pane_id, true);
        if (!text) return;
        replace_file(screen_file(log_file), *text);
    } catch (const std::exception&) {
        // tmux or the disk refused: the raw log stays, and reads stripped
    }
}

std::optional<std::string> live_screen(tmux::Tmux& tmux, const AgentRecord& agent, bool history) {
    if (!agent.live() || !agent.pane_id) return std::nullopt;
    return tmux::capture_pane(tmux, *agent.pane_id, history);
}

ReadableLog readable_log(tmux::Tmux& tmux, const AgentRecord& agent, const std::string& raw) {
    if (!draws_screen(raw)) return {raw, "log"};
    if (auto screen = live_screen(tmux, agent, true)) return {*screen, "pane"};
    if (agent.log_file) {
        std::ifstream in(screen_file(*agent.log_file), std::ios::binary);
        if (in) {
            std::stringstream s;
            s << in.rdbuf();
            return {s.str(), "kept"};
        }
    }
    return {strip_escapes(raw), "stripped"};
}

}  // namespace team
