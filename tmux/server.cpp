#include "tmux/server.hpp"

#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <thread>

#include "base/error.hpp"
#include "base/text.hpp"
#include "base/whole_file.hpp"

namespace team::tmux {

namespace fs = std::filesystem;

namespace {

// sun_path is 108 bytes; leave room for tmux's own suffixes.
constexpr size_t kMaxSocketPath = 100;

constexpr const char* kConfig =
    R"(# Written by team: the settings of this home's private tmux server.
set -g remain-on-exit on
set -g exit-empty on
set -g history-limit 20000
set -g default-size 240x80
set -g pane-border-status top
set -g pane-border-format " #{pane_title} "
set -g allow-rename off
set -g automatic-rename off
)";

constexpr const char* kPaneFormat = "#{pane_id} #{pane_pid} #{session_name}";

// tmux reads an argument that ends in ';' as a command separator: escape it.
std::string tmux_literal(std::string s) {
    if (!s.empty() && s.back() == ';') {
        s.pop_back();
        s += "\\;";
    }
    return s;
}

// tmux expands formats in some arguments (a start directory, a pane title, pipe-pane's command),
// and `#(...)` in a format runs a shell command: a home, a cwd or a name with `#(` in it would
// run it. `##` is a literal '#'.
std::string tmux_format_literal(const std::string& s) {
    std::string out;
    for (char c : s) {
        out += c;
        if (c == '#') out += '#';
    }
    return tmux_literal(out);
}

std::optional<int> optional_int(const std::string& s) {
    if (s.empty()) return std::nullopt;
    try {
        return std::stoi(s);
    } catch (...) {
        return std::nullopt;
    }
}

}  // namespace

bool is_no_server(const TmuxResult& r) {
    return r.err.find("no server running") != std::string::npos ||
           r.err.find("error connecting to") != std::string::npos ||
           r.err.find("can't find session") != std::string::npos ||
           r.err.find("can't find pane") != std::string::npos ||
           r.err.find("server exited unexpectedly") != std::string::npos;
}

std::vector<std::string> TmuxServer::socket_args(const fs::path& home) {
    fs::path socket = home / "tmux.sock";
    if (socket.string().size() <= kMaxSocketPath) return {"-S", socket.string()};
    char name[32];
    std::snprintf(name, sizeof name, "team-%016zx", std::hash<std::string>{}(home.string()));
    return {"-L", name};
}

bool TmuxServer::server_alive(const fs::path& home) {
    auto args = socket_args(home);
    std::string path = args[0] == "-S" ? args[1] : "";
    if (path.empty()) {
        const char* dir = std::getenv("TMUX_TMPDIR");
        path = std::string(dir && *dir ? dir : "/tmp") + "/tmux-" + std::to_string(::getuid()) +
               "/" + args[1];
    }
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
    bool alive = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    return alive;
}

void TmuxServer::exec_attach(const fs::path& home, const std::string& session,
                             const std::string& pane) {
    std::string exe = tmux_binary();
    if (exe.empty()) throw failed("tmux is not installed");
    std::vector<std::string> argv{"tmux"};
    for (const auto& a : socket_args(home)) argv.push_back(a);
    argv.insert(argv.end(), {"-f", ensure_config(home).string()});
    if (!pane.empty()) argv.insert(argv.end(), {"select-pane", "-t", pane, ";"});
    argv.insert(argv.end(), {"attach-session", "-t", "=" + session + ":"});
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    ::unsetenv("TMUX");  // attaching from inside another tmux is fine: it is another server
    ::execv(exe.c_str(), cargv.data());
    throw failed("cannot run tmux");
}

fs::path TmuxServer::ensure_config(const fs::path& home) {
    fs::path config = home / "tmux.conf";
    if (!fs::exists(config)) replace_file(config, kConfig);
    return config;
}

TmuxResult TmuxServer::checked(const std::vector<std::string>& args, std::string_view input) {
    TmuxResult r = tmux_.run(args, input);
    if (!r.ok()) {
        std::string err = r.err;
        while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.pop_back();
        throw failed("tmux " + args.front() +
                     " failed: " + (err.empty() ? "exit " + std::to_string(r.exit_code) : err));
    }
    return r;
}

// How many times open_pane tries again while a session is going (see there).
constexpr int kOpenAttempts = 5;

PaneInfo TmuxServer::open_pane(const std::string& session, const std::vector<std::string>& argv,
                               const std::string& cwd, const std::string& title,
                               const fs::path& log) {
    std::string target = "=" + session + ":";
    // pipe-pane runs its command through /bin/sh.
    std::string pipe = "exec cat >> " + shell_quote(log.string());
    std::vector<std::string> command{
        "-P", "-F", "#{pane_id} #{pane_pid}", "-c", tmux_format_literal(cwd), "--"};
    for (const auto& a : argv) command.push_back(tmux_literal(a));

    // Without -d the new pane becomes the current one, so the commands after it in the same
    // call apply to it before tmux reads a byte of its output; last-pane gives the focus back.
    std::vector<std::string> split{"split-window", "-t", target};
    split.insert(split.end(), command.begin(), command.end());
    split.insert(split.end(), {";", "select-pane", "-T", tmux_format_literal(title), ";",
                               "pipe-pane", "-o", tmux_format_literal(pipe), ";", "select-layout",
                               "-t", target, "tiled", ";", "last-pane", "-t", target});
    TmuxResult r = tmux_.run(split);
    std::vector<std::string> create{"new-session", "-d", "-s", session, "-n", session};
    create.insert(create.end(), command.begin(), command.end());
    create.insert(create.end(), {";", "select-pane", "-t", target, "-T", tmux_format_literal(title),
                                 ";", "pipe-pane", "-t", target, "-o", tmux_format_literal(pipe)});
    for (int attempt = 1; !r.ok(); ++attempt) {
        // No server or no session yet: this pane starts the session.
        TmuxResult created = tmux_.run(create);
        if (created.ok()) {
            r = created;
            break;
        }
        bool exists = created.err.find("duplicate session") != std::string::npos;
        if (!exists || attempt == kOpenAttempts) {
            // Once more, the call that fits (the session exists: split): it throws with the
            // message that explains, or, when the first failure passed, makes the pane.
            r = checked(exists ? split : create);
            break;
        }
        r = tmux_.run(split);
        bool going = r.err.find("no current target") != std::string::npos ||
                     r.err.find("can't find") != std::string::npos;
        if (r.ok() || !going) {
            if (!r.ok()) r = checked(split);
            break;
        }
        // The session is there for new-session and has no pane for split-window ("no current
        // target"): it is going, its last pane ended (a spawn killed mid-way, its supervisor
        // gone; the crash proof's seed 1022). Once it has gone, new-session makes it again.
        std::this_thread::sleep_for(std::chrono::milliseconds(10 * attempt));
    }
    PaneInfo pane;
    std::istringstream fields(r.out);
    long pid = 0;
    fields >> pane.id >> pid;
    pane.pid = static_cast<pid_t>(pid);
    pane.session = session;
    if (pane.id.empty() || pane.id[0] != '%' || pane.pid <= 0) {
        throw failed("tmux did not report the new pane: " + r.out);
    }
    return pane;
}

std::vector<PaneInfo> TmuxServer::list_panes() {
    TmuxResult r = tmux_.run({"list-panes", "-a", "-F", kPaneFormat});
    if (!r.ok()) {
        if (is_no_server(r)) return {};
        // Once more: the server may have been exiting (its last pane gone) during the call.
        r = tmux_.run({"list-panes", "-a", "-F", kPaneFormat});
        if (!r.ok() && is_no_server(r)) return {};
        if (!r.ok()) checked({"list-panes", "-a", "-F", kPaneFormat});
    }
    std::vector<PaneInfo> panes;
    std::istringstream lines(r.out);
    std::string line;
    while (std::getline(lines, line)) {
        // Split on single spaces; the session name comes last.
        std::vector<std::string> f;
        for (size_t start = 0;;) {
            size_t end = line.find(' ', start);
            if (end == std::string::npos || f.size() == 2) {
                f.push_back(line.substr(start));
                break;
            }
            f.push_back(line.substr(start, end - start));
            start = end + 1;
        }
        if (f.size() < 3 || f[0].empty() || f[0][0] != '%') continue;
        PaneInfo p;
        p.id = f[0];
        p.pid = static_cast<pid_t>(optional_int(f[1]).value_or(0));
        p.session = f[2];
        panes.push_back(p);
    }
    return panes;
}

bool TmuxServer::kill_target(const std::vector<std::string>& args) {
    // A server exits by itself with its last pane (exit-empty), possibly while this call talks
    // to it: the first answer is then something else than "no server". Once more, to know.
    for (int attempt = 0;; ++attempt) {
        TmuxResult r = tmux_.run(args);
        if (r.ok()) return true;
        if (is_no_server(r)) return false;
        if (attempt == 1) checked(args);  // the same failure twice: say what tmux says
    }
}

bool TmuxServer::kill_pane_run_by(const std::vector<PaneInfo>& panes, const std::string& pane_id,
                                  const std::string& session, pid_t first_pid) {
    for (const auto& p : panes) {
        if (p.id == pane_id && p.session == session && p.pid == first_pid) return kill_pane(p.id);
    }
    return false;
}

bool TmuxServer::kill_pane(const std::string& pane_id) {
    return kill_target({"kill-pane", "-t", pane_id});
}

bool TmuxServer::kill_session(const std::string& session) {
    return kill_target({"kill-session", "-t", "=" + session});
}

namespace {

// The last word of `text` (at most 24 bytes of it), which a program that shows what it was given
// puts on one line of its screen: how type_text sees that the paste arrived.
std::string last_word(std::string_view text) {
    size_t end = text.find_last_not_of(" \t\r\n");
    if (end == std::string_view::npos) return {};
    size_t start = text.find_last_of(" \t\r\n", end);
    start = start == std::string_view::npos ? 0 : start + 1;
    std::string_view word = text.substr(start, end + 1 - start);
    return std::string(utf8_tail(word, 24));
}

size_t occurrences(std::string_view screen, std::string_view word) {
    size_t n = 0;
    for (size_t at = screen.find(word); at != std::string_view::npos;
         at = screen.find(word, at + word.size())) {
        ++n;
    }
    return n;
}

}  // namespace

// The least time between the typed text's showing and the Enter (see type_text).
constexpr std::chrono::milliseconds kEnterPause{50};

void TmuxServer::type_text(const std::string& pane_id, const std::string& text, bool press_enter) {
    // One paste, in one tmux call: no line is sent on its own before the rest arrives, and a
    // program that asked for bracketed paste (Claude Code, readline) is told where the paste
    // ends. (Typed as keys, a busy program could read the text and the Enter in one go and take
    // the Enter for part of a paste.)
    std::string word = press_enter ? last_word(text) : std::string();
    size_t seen_before = 0;
    auto screen = [&] {
        TmuxResult r = tmux_.run({"capture-pane", "-p", "-J", "-t", pane_id}, {});
        return r.ok() ? occurrences(r.out, word) : 0;
    };
    if (!word.empty()) seen_before = screen();
    if (!text.empty()) {  // (tmux refuses an empty buffer: an empty text is just the Enter)
        unsigned char bytes[6];
        (void)!::getrandom(bytes, sizeof bytes, 0);
        std::string buffer = "team-prompt-";
        for (unsigned char b : bytes) buffer += "0123456789abcdef"[b & 15];
        checked({"load-buffer", "-b", buffer, "-", ";", "paste-buffer", "-p", "-d", "-b", buffer,
                 "-t", pane_id},
                text);
    }
    if (press_enter) {
        // The Enter once the program shows the text, within a bound: a program that reads the
        // paste and the Enter in one go may act on the Enter before the text is in its input
        // (Claude Code, busy, submitted its empty box and kept the text unsent). A program that
        // shows nothing (no echo) gets the Enter after the bound.
        // Then a pause as a person's before Enter: Gemini CLI takes an Enter that comes within
        // 30 ms of typed text for a newline in the text (its guard for terminals that send a
        // paste as keys), and kept the notice unsent in its input box.
        if (!word.empty()) {
            auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
            auto pause = std::chrono::milliseconds(2);
            bool shown = false;
            while (!(shown = screen() > seen_before) &&
                   std::chrono::steady_clock::now() < deadline) {
                std::this_thread::sleep_for(pause);
                pause = std::min(pause * 2, std::chrono::milliseconds(40));
            }
            if (shown) std::this_thread::sleep_for(kEnterPause);
        }
        checked({"send-keys", "-t", pane_id, "Enter"});
    }
}

}  // namespace team::tmux
