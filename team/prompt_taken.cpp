#include "team/prompt_taken.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <thread>
#include <vector>

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
    std::string line_above;   // the one above it
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
        if (start > 0) {  // the text up to the newline that ends the line above
            auto above = start >= 2 ? s.text.rfind('\n', start - 2) : std::string::npos;
            above = above == std::string::npos ? 0 : above + 1;
            s.line_above = s.text.substr(above, start - 1 - above);
        }
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

// How many times `needle` stands in `text`.
int occurrences(const std::string& text, const std::string& needle) {
    if (needle.empty()) return 0;
    int n = 0;
    for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
    return n;
}

// The Enter became a newline in the agent's input box: the cursor on an empty line of it, the
// text's end on the line above. Gemini CLI does that to an Enter that comes within a while
// (measured: up to ~0.8 s) of a bracketed paste, which it takes for an Enter of the paste.
bool enter_became_newline(const Screen& s, const std::string& end) {
    if (end.empty() || s.line_above.find(end) == std::string::npos) return false;
    return s.cursor_line.find_first_not_of(" \t") == std::string::npos;
}

// How many of the lines `before` showed (not blank) `now` shows nowhere: a dialog that closed
// takes its question and its choices (three lines and more), a spinner's turn one.
int lines_gone(const std::string& before, const std::string& now) {
    auto lines = [](const std::string& text) {
        std::vector<std::string> out;
        std::size_t at = 0;
        while (at <= text.size()) {
            auto nl = text.find('\n', at);
            std::string line = text.substr(at, nl == std::string::npos ? nl : nl - at);
            while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.pop_back();
            if (line.find_first_not_of(" \t") != std::string::npos) out.push_back(line);
            if (nl == std::string::npos) break;
            at = nl + 1;
        }
        return out;
    };
    auto shown = lines(now);
    std::sort(shown.begin(), shown.end());
    int gone = 0;
    for (const auto& line : lines(before)) {
        if (!std::binary_search(shown.begin(), shown.end(), line)) ++gone;
    }
    return gone;
}

// Gemini CLI still loading a resumed conversation: it reports SessionStart (idle) first, then
// draws "Resuming session..." in place of its input box, and drops every key until it is done
// (0.61: its input box is unmounted while it resumes; tests/agents/resume.mjs).
bool still_resuming(const std::string& screen) {
    return screen.find("Resuming session...") != std::string::npos;
}

// Its report of a prompt submitted since `at`.
bool prompted_since(Store& store, std::int64_t agent_id, EpochMs at) {
    auto row = load_agent_activity(store, agent_id);
    return row && row->prompted_at && *row->prompted_at >= at;
}

// What of a typed text the screen shows, wrapped lines joined: its end, and the placeholder an
// agent shows for a long paste (Codex's and Claude Code's "[Pasted …]").
std::pair<int, int> shown_of(tmux::Tmux& tmux, const std::string& pane_id, const std::string& end) {
    auto r = tmux.run({"capture-pane", "-p", "-J", "-t", pane_id});
    if (!r.ok()) return {0, 0};
    return {occurrences(r.out, end), occurrences(r.out, "[Pasted")};
}

}  // namespace

PromptTaken type_and_wait_taken(Store& store, tmux::Tmux& tmux, std::int64_t agent_id,
                                const std::string& pane_id, const std::string& text,
                                std::chrono::milliseconds timeout, const Clock& clock,
                                Typed typed) {
    using Steady = std::chrono::steady_clock;
    AskedWait asked;
    ChangeWatch watch(store);
    auto first = load_agent_activity(store, agent_id);
    bool reports = first && first->source == "hooks";
    // Typed at a dialog (a permission, a question): the answer is taken when the wait ends,
    // or when the screen says so as any pane agent's does (the key read, the dialog gone).
    // A dialog's choice is a key ("1", "y"), typed as keys: Codex's and Gemini CLI's dialogs
    // ignore a paste, and the Enter after it chose their first option, whatever was typed. No
    // Enter after the key, which would land in whatever shows next (the agent's next dialog);
    // an Enter only for text left on the cursor's line a second on (a dialog's text field).
    bool answering = reports && first->state == "waiting";
    Screen before = reports && !answering ? Screen{} : look(tmux, pane_id);
    if (answering) {
        // The dialog on the screen first, as a person sees it before typing: the screen still
        // for 300 ms (at most 2 s). A key that comes before the dialog reads keys is lost (Gemini
        // CLI reports its wait ~0.3 s before), and the lines it takes away when it closes are
        // the lines of the dialog.
        auto settle = Steady::now() + std::chrono::seconds(2);
        auto still_since = Steady::now();
        while (Steady::now() < settle &&
               Steady::now() - still_since < std::chrono::milliseconds(300)) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            Screen again = look(tmux, pane_id);
            if (again.text != before.text) still_since = Steady::now();
            before = again;
        }
    }
    auto deadline = Steady::now() + timeout;
    // Typed to an agent that reports, not at a dialog: not while it is still resuming (its keys
    // dropped); and what of the text shows before, so that text the agent never saw can be told
    // from text it took or keeps (below).
    bool retype = reports && !answering && !text.empty();
    auto wait_resumed = [&] {
        while (Steady::now() < deadline && still_resuming(look(tmux, pane_id).text))
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
    };
    EpochMs typed_at = clock.now();
    std::string end = text_end(text);
    std::pair<int, int> shown_before;
    if (retype) {
        wait_resumed();
        typed_at = clock.now();
        shown_before = shown_of(tmux, pane_id, end);
    }
    if (answering && typed == Typed::notice) {
        // A notice at a dialog: pasted, which the dialog ignores. Shown in an input box within a
        // second (its end once more on the screen, wrapped lines joined, or a paste's
        // placeholder once more: Codex and Claude Code fold a long paste into "[Pasted …]"), the
        // wait was over (none reported its end): entered as a prompt is.
        auto shown = [&] {
            auto r = tmux.run({"capture-pane", "-p", "-J", "-t", pane_id});
            if (!r.ok()) return std::make_pair(0, 0);
            return std::make_pair(occurrences(r.out, end), occurrences(r.out, "[Pasted"));
        };
        auto seen_before = shown();
        tmux::TmuxServer(tmux).type_text(pane_id, text, false);
        auto shown_by = Steady::now() + std::chrono::seconds(1);
        for (auto seen = shown();
             !end.empty() && seen.first <= seen_before.first && seen.second <= seen_before.second;
             seen = shown()) {
            if (Steady::now() >= shown_by) {
                PromptTaken left;
                left.how = "dialog";
                left.screen = look(tmux, pane_id).text;
                return left;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        answering = false;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));  // (as type_text's pause)
        tmux.run({"send-keys", "-t", pane_id, "Enter"});
    } else if (answering && !text.empty()) {
        tmux.run({"send-keys", "-t", pane_id, "-l", text});
    } else {
        tmux::TmuxServer(tmux).type_text(pane_id, text, true);
    }
    auto pause = std::chrono::milliseconds(5);
    // An agent that reports: its Enter pressed again, a second apart, while it shows that it
    // took the last one for a newline (enter_became_newline). Its report of the prompt comes
    // before it does anything with it (the hook runs first), so no Enter lands in a dialog.
    auto enter_again = Steady::now() + std::chrono::seconds(1);
    bool answer_entered = text.empty();  // (an empty text is just the Enter)
    int retypes = 0;
    PromptTaken out;
    while (true) {
        if (reports && Steady::now() >= enter_again && !(answering && answer_entered)) {
            enter_again = Steady::now() + std::chrono::seconds(1);
            Screen now = look(tmux, pane_id);
            auto shown = retype ? shown_of(tmux, pane_id, end) : shown_before;
            if (now.ok && !answering && enter_became_newline(now, end)) {
                tmux.run({"send-keys", "-t", pane_id, "Enter"});
            } else if (retype && now.ok && retypes < 2 && !still_resuming(now.text) &&
                       shown.first <= shown_before.first && shown.second <= shown_before.second &&
                       !prompted_since(store, agent_id, typed_at)) {
                // Nothing of it shows a second on and no report came: the agent dropped the keys
                // (Gemini CLI, when it began resuming just after its SessionStart report, before
                // it drew so). Typed again, at most twice.
                ++retypes;
                tmux::TmuxServer(tmux).type_text(pane_id, text, true);
            } else if (retype && now.ok && !end.empty() &&
                       now.cursor_line.find(end) != std::string::npos) {
                // It sits in the input line a second on, unsubmitted: its Enter was dropped.
                tmux.run({"send-keys", "-t", pane_id, "Enter"});
            } else if (now.ok && answering && now.cursor_line.find(end) != std::string::npos) {
                tmux.run({"send-keys", "-t", pane_id, "Enter"});
                answer_entered = true;
            }
        }
        if (reports) {
            auto row = load_agent_activity(store, agent_id);
            bool prompted = row && row->prompted_at && *row->prompted_at >= typed_at;
            bool answered = answering && row && row->state != "waiting" && row->since >= typed_at;
            if (prompted || answered) {
                out.taken = true;
                out.how = "report";
                return out;
            }
        }
        // Any pane agent's screen; also at a dialog, which may close long before the agent's
        // next report (an allowed command's PostToolUse comes when the command has run): then
        // the dialog's lines gone (lines_gone), not just a spinner's turn.
        Screen now = look(tmux, pane_id);
        if (now.ok && (!reports || answering)) {
            // In line mode a read takes the whole line: nothing left unread is the line taken.
            // A program that reads key by key (a full-screen agent) may keep what it read in an
            // input box: its cursor's line must not show the text, and its screen must change
            // (a dialog answered: three of its lines gone).
            Input input = terminal_input(now.tty);
            bool line_clear = end.empty() || now.cursor_line.find(end) == std::string::npos;
            bool changed =
                answering ? lines_gone(before.text, now.text) >= 3 : now.text != before.text;
            if (input.unread == 0 && ((input.canonical && !answering) || (line_clear && changed))) {
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
