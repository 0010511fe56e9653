#include "team/prompt_taken.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>

#include "base/cancel.hpp"
#include "base/text.hpp"
#include "state/agent_activity_rows.hpp"
#include "state/change_watch.hpp"
#include "tmux/server.hpp"

namespace team {

namespace {

struct Screen {
    std::string text;         // the visible screen, as capture-pane gives it
    std::string cursor_line;  // the line the cursor is on
    std::string tty;          // the pane's terminal
    bool ok = false;
};

Screen look(tmux::Tmux& tmux, const std::string& pane_id) {
    Screen s;
    auto r = tmux.run({"capture-pane", "-p", "-t", pane_id, ";", "display-message", "-p", "-t",
                       pane_id, "#{cursor_y} #{pane_tty}"});
    if (!r.ok()) return s;
    std::string out = r.out;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    auto last = out.rfind('\n');
    std::string tail = last == std::string::npos ? out : out.substr(last + 1);
    s.text = last == std::string::npos ? "" : out.substr(0, last);
    auto space = tail.find(' ');
    if (space == std::string::npos) return s;
    int y = std::atoi(tail.substr(0, space).c_str());
    s.tty = tail.substr(space + 1);
    std::size_t start = 0;
    for (int i = 0; i < y && start != std::string::npos; ++i) {
        start = s.text.find('\n', start);
        if (start != std::string::npos) ++start;
    }
    if (start != std::string::npos && start <= s.text.size()) {
        s.cursor_line = s.text.substr(start, s.text.find('\n', start) - start);
    }
    s.ok = true;
    return s;
}

// The terminal's input as its reader left it.
struct Input {
    int unread = -1;         // bytes typed that no program has read yet; -1: unknown
    bool canonical = false;  // line mode: a read takes a whole line, its Enter included
};

Input terminal_input(const std::string& tty) {
    Input in;
    if (tty.empty()) return in;
    int fd = ::open(tty.c_str(), O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return in;
    int n = 0;
    if (::ioctl(fd, TIOCINQ, &n) == 0) in.unread = n;
    termios t{};
    if (::tcgetattr(fd, &t) == 0) in.canonical = (t.c_lflag & ICANON) != 0;
    ::close(fd);
    return in;
}

// The end of the text as a terminal shows it: its last line's last characters.
std::string text_end(const std::string& text) {
    std::string last = text;
    auto nl = last.find_last_not_of("\n");
    if (nl == std::string::npos) return "";
    last = last.substr(0, nl + 1);
    auto start = last.rfind('\n');
    if (start != std::string::npos) last = last.substr(start + 1);
    while (!last.empty() && (last.back() == ' ' || last.back() == '\t')) last.pop_back();
    return std::string(utf8_tail(last, 16));
}

}  // namespace

PromptTaken type_and_wait_taken(Store& store, tmux::Tmux& tmux, std::int64_t agent_id,
                                const std::string& pane_id, const std::string& text,
                                std::chrono::milliseconds timeout, const Clock& clock) {
    using Steady = std::chrono::steady_clock;
    AskedWait asked;
    ChangeWatch watch(store);
    auto source = [&] {
        auto row = load_agent_activity(store, agent_id);
        return row ? row->source : std::string();
    };
    bool reports = source() == "hooks";
    EpochMs typed_at = clock.now();
    Screen before = reports ? Screen{} : look(tmux, pane_id);
    tmux::TmuxServer(tmux).type_text(pane_id, text, true);
    std::string end = text_end(text);
    auto deadline = Steady::now() + timeout;
    auto pause = std::chrono::milliseconds(5);
    PromptTaken out;
    while (true) {
        if (reports) {
            auto row = load_agent_activity(store, agent_id);
            if (row && row->prompted_at && *row->prompted_at >= typed_at) {
                out.taken = true;
                out.how = "report";
                return out;
            }
        }
        Screen now = look(tmux, pane_id);
        if (now.ok && !reports) {
            // In line mode a read takes the whole line: nothing left unread is the line taken.
            // A program that reads key by key (a full-screen agent) may keep what it read in an
            // input box: its cursor's line must not show the text, and its screen must change.
            Input input = terminal_input(now.tty);
            bool line_clear = end.empty() || now.cursor_line.find(end) == std::string::npos;
            if (input.unread == 0 &&
                (input.canonical || (line_clear && now.text != before.text))) {
                out.taken = true;
                out.how = "screen";
                return out;
            }
        }
        if (Steady::now() >= deadline) {
            out.screen = now.text;
            while (!out.screen.empty() && (out.screen.back() == '\n' || out.screen.back() == ' '))
                out.screen.pop_back();
            return out;
        }
        // A report wakes this at its commit; a screen is looked at again a little later.
        auto next = std::min(deadline, Steady::now() + pause);
        watch.wait_until(next);
        pause = std::min(pause * 2, std::chrono::milliseconds(100));
    }
}

}  // namespace team
