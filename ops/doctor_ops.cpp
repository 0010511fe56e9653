// The operation `doctor`: a short check that team can run here, each line ok, warn or fail with
// words a new user can act on: tmux and its version, git, the home's permissions, the store,
// the agents' CLIs on the PATH and what a preset gives each, and the dashboard's port. It
// changes nothing: a home that is not there is not made, a store is only opened when it exists.
#include "ops/doctor_ops.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "base/programs.hpp"
#include "base/store_clock.hpp"
#include "ops/serve_record.hpp"
#include "state/home.hpp"
#include "state/pg_text.hpp"
#include "state/store.hpp"
#include "state/teams.hpp"
#include "team/presets.hpp"

extern char** environ;

namespace team::ops {

namespace {

namespace fs = std::filesystem;

struct Check {
    std::string name;
    std::string status;  // ok, warn, fail
    std::string message;
    std::string hint = "";
};

nlohmann::json to_json(const Check& c) {
    nlohmann::json j = {{"check", c.name}, {"status", c.status}, {"message", c.message}};
    j["hint"] = c.hint.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.hint);
    return j;
}

std::string path_env() {
    const char* p = std::getenv("PATH");
    return p ? p : "";
}

// How long a program may take to print its version.
constexpr std::chrono::seconds kVersionTimeout{3};

// The first line `program ARG` prints on stdout, run as given (no shell); none when it fails or
// takes longer than kVersionTimeout.
std::optional<std::string> first_line(const std::string& program, const char* arg) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    std::string prog = program;
    std::string a = arg;
    char* argv[] = {prog.data(), a.data(), nullptr};
    pid_t pid = 0;
    int rc = ::posix_spawn(&pid, prog.c_str(), &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    std::string out;
    if (rc == 0) {
        // Within a bound: a program that hangs on --version (a wrapper that starts its agent
        // whatever it is given) is killed, and says nothing.
        auto deadline = std::chrono::steady_clock::now() + kVersionTimeout;
        bool ended = false;
        char buf[512];
        for (;;) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            pollfd p{fds[0], POLLIN, 0};
            if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) == 0) break;
            ssize_t n = ::read(fds[0], buf, sizeof buf);
            if (n <= 0) {
                ended = n == 0;
                break;
            }
            if (out.size() < 4096) out.append(buf, n);
        }
        if (!ended) {
            ::kill(pid, SIGKILL);
            out.clear();
        }
        int status = 0;
        ::waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) out.clear();
    }
    ::close(fds[0]);
    if (out.empty()) return std::nullopt;
    return out.substr(0, out.find('\n'));
}

Check check_tmux() {
    auto path = find_program("tmux", path_env());
    if (!path) {
        return {"tmux", "fail", "tmux is not on the PATH: agents run in its panes",
                "install it: sudo apt install tmux"};
    }
    auto version = first_line(*path, "-V").value_or("");
    // "tmux 3.3a": team is built and tested on 3.3; pane_dead_status and friends need 3.x.
    double number = 0;
    if (auto space = version.find(' '); space != std::string::npos) {
        number = std::atof(version.c_str() + space + 1);
    }
    if (number > 0 && number < 3.0) {
        return {"tmux", "warn", version + " at " + *path + " is older than team knows (3.3)",
                "install tmux 3.2 or newer"};
    }
    return {"tmux", "ok", (version.empty() ? "tmux" : version) + " at " + *path};
}

Check check_git() {
    auto path = find_program("git", path_env());
    if (!path) {
        return {"git", "warn", "git is not on the PATH: agents' worktrees and branches need it",
                "install it: sudo apt install git"};
    }
    return {"git", "ok", first_line(*path, "--version").value_or("git") + " at " + *path};
}

// Whether a file or directory keeps to its mode: no access for the group or others.
bool private_mode(const fs::path& p) {
    struct stat st {};
    return ::lstat(p.c_str(), &st) != 0 || (st.st_mode & 077) == 0;
}

Check check_home(const fs::path& home) {
    if (!fs::exists(home)) {
        return {"home", "ok", home.string() + " does not exist yet: team create makes it (0700)"};
    }
    if (!private_mode(home)) {
        return {"home", "warn", home.string() + " can be read by others: its state is private",
                "chmod 700 " + home.string()};
    }
    std::vector<std::string> open;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(home, ec);
         !ec && it != fs::recursive_directory_iterator() && open.size() < 3; it.increment(ec)) {
        if (it.depth() > 2) it.disable_recursion_pending();
        if (it->is_regular_file() && !private_mode(it->path())) open.push_back(it->path());
    }
    if (!open.empty()) {
        std::string list;
        for (const auto& f : open) list += " " + f;
        return {"home", "warn", "files of the home can be read by others:" + list,
                "chmod -R go= " + home.string()};
    }
    return {"home", "ok", home.string() + " (0700, its files 0600)"};
}

// A shared store (PostgreSQL, SPEC 16): reached, its schema this team's, its teams counted.
Check check_shared_store(Core& core, const std::string& url) {
    std::string shown = redact_store_url(url);
    try {
        auto teams = list_teams(core.store(), false);
        return {"store", "ok",
                shown + " (PostgreSQL) opens: " + std::to_string(teams.size()) + " live team" +
                    (teams.size() == 1 ? "" : "s") + ", clock " +
                    std::to_string(store_clock_offset()) + " ms from this machine's"};
    } catch (const std::exception& e) {
        return {"store", "fail", std::string("the store does not open: ") + e.what(),
                "check the URL, that the server runs and takes this role (~/.pgpass for its "
                "password), and the schema: 'team store check' says more"};
    }
}

Check check_store(Core& core, const fs::path& home) {
    std::string url;
    try {
        url = resolve_store_url(home);
    } catch (const std::exception& e) {
        return {"store", "fail", e.what(), "see 'team store use'"};
    }
    if (!url.empty()) return check_shared_store(core, url);
    if (!fs::exists(home / "team.db")) {
        return {"store", "ok", "no store yet: team create makes " + (home / "team.db").string()};
    }
    try {
        auto teams = list_teams(core.store(), false);
        return {"store", "ok",
                (home / "team.db").string() + " opens: " + std::to_string(teams.size()) +
                    " live team" + (teams.size() == 1 ? "" : "s")};
    } catch (const std::exception& e) {
        return {"store", "fail", std::string("the store does not open: ") + e.what(),
                "check the owner and mode of " + (home / "team.db").string()};
    }
}

Check check_agent_clis() {
    std::string found, missing;
    for (const char* cli : {"claude", "codex", "gemini", "opencode"}) {
        if (auto p = find_program(cli, path_env())) {
            found += (found.empty() ? "" : ", ") + std::string(cli) + " (" + *p + ")";
        } else {
            missing += (missing.empty() ? "" : ", ") + std::string(cli);
        }
    }
    if (found.empty()) {
        return {"agents", "warn",
                "no coding agent's CLI on the PATH (claude, codex, gemini, opencode); any program "
                "can still be spawned",
                "install one, e.g. npm install -g @anthropic-ai/claude-code, then team spawn A "
                "--preset claude"};
    }
    return {"agents", "ok", found + (missing.empty() ? "" : "; not found: " + missing)};
}

// The version of an agent's CLI installed from npm: the `version` of the nearest package.json
// above the file the program resolves to, when it is the package's (its name begins with
// `package`: a platform's binary package counts too). Cheap: Gemini CLI's own --version takes
// seconds.
std::optional<std::string> npm_version(const std::string& program, const std::string& package) {
    std::error_code ec;
    fs::path real = fs::canonical(program, ec);
    if (ec) return std::nullopt;
    for (fs::path dir = real.parent_path(); dir != dir.root_path() && !dir.empty();
         dir = dir.parent_path()) {
        std::ifstream in(dir / "package.json");
        if (!in) continue;
        auto doc = nlohmann::json::parse(in, nullptr, false);
        if (doc.is_object() && doc.value("name", "").rfind(package, 0) == 0 &&
            doc.contains("version") && doc["version"].is_string()) {
            return doc["version"].get<std::string>();
        }
        return std::nullopt;
    }
    return std::nullopt;
}

// a < b for dotted versions ("0.61.0"), number by number.
bool older(const std::string& a, const std::string& b) {
    std::istringstream x(a), y(b);
    for (;;) {
        long p = -1, q = -1;
        char dot;
        if (!(x >> p)) p = -1;
        if (!(y >> q)) q = -1;
        if (p < 0 || q < 0) return false;
        if (p != q) return p < q;
        x >> dot;
        y >> dot;
        if (!x || !y) return false;
    }
}

// What a preset gives each agent found on the PATH (issue 37): the team's server, its tools
// allowed unasked and nothing else, as proven offline with a release of each (docs/mcp.md); for
// Gemini CLI, a settings file where it reads one.
std::vector<Check> check_presets(const fs::path& home) {
    struct Agent {
        const char* cli;
        const char* proven;   // the release tests/agents runs
        const char* allows;   // how the preset allows the team's tools
        const char* install;  // the npm package
        // Gemini CLI: its --version takes seconds (not asked), and its preset needs a settings
        // file where Gemini reads one.
        bool settings_file = false;
    };
    static const Agent agents[] = {
        {"claude", "2.1.197", "--allowedTools mcp__team", "@anthropic-ai/claude-code"},
        {"codex", "0.169.0", "mcp_servers.team.default_tools_approval_mode = \"approve\"",
         "@openai/codex"},
        {"gemini", "0.61.0", "\"trust\": true on the server in its settings file",
         "@google/gemini-cli", true},
    };
    std::vector<Check> checks;
    for (const auto& a : agents) {
        auto path = find_program(a.cli, path_env());
        if (!path) continue;
        std::string name = a.cli;
        auto version = npm_version(*path, a.install);
        if (!version && !a.settings_file) {
            // "2.1.197 (Claude Code)", "codex-cli 0.169.0": the first word with a digit.
            std::istringstream words(first_line(*path, "--version").value_or(""));
            for (std::string w; words >> w;) {
                if (std::isdigit(static_cast<unsigned char>(w[0]))) {
                    version = w;
                    break;
                }
            }
        }
        std::string shown =
            std::string(a.cli) + " " + version.value_or("(version unknown)") + " (" + *path + ")";
        if (a.settings_file) {
            fs::path file = home / "presets" / "TEAM.NAME.gemini.json";
            if (auto why = gemini_settings_skipped(file)) {
                checks.push_back(
                    {name, "warn",
                     shown + ": --preset gemini is refused in this home, since " + *why,
                     gemini_settings_fix()});
                continue;
            }
        }
        if (version && older(*version, a.proven)) {
            checks.push_back({name, "warn",
                              shown + " is older than the release --preset " + a.cli +
                                  " was proven with (" + a.proven +
                                  "): it may ask before the team's tools",
                              std::string("update it: npm install -g ") + a.install});
            continue;
        }
        checks.push_back({name, "ok",
                          shown + ": --preset " + a.cli + " allows the team's tools unasked (" +
                              a.allows + "), and nothing else"});
    }
    return checks;
}

Check check_port(const fs::path& home) {
    if (auto serve = running_server(home)) {
        return {"dashboard", "ok", "team serve runs at " + serve->url + " (team serve --url)"};
    }
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(kServePort);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool free = fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    if (fd >= 0) ::close(fd);
    std::string port = default_listen();
    if (!free) {
        return {"dashboard", "warn", port + " is taken by another program",
                "start the dashboard elsewhere: team serve --listen " + std::string(kServeHost) +
                    ':' + std::to_string(kServePort + 1)};
    }
    return {"dashboard", "ok", port + " is free for team serve"};
}

Result doctor(Request& r) {
    fs::path home = resolve_home(r.core.identity().home);
    std::vector<Check> checks{check_tmux(), check_git(), check_home(home),
                              check_store(r.core, home), check_agent_clis()};
    for (auto& c : check_presets(home)) checks.push_back(std::move(c));
    checks.push_back(check_port(home));
    bool failed = false;
    nlohmann::json list = nlohmann::json::array();
    for (const auto& c : checks) {
        failed = failed || c.status == "fail";
        list.push_back(to_json(c));
    }
    return {{{"ok", !failed}, {"home", home.string()}, {"checks", list}}, failed ? 1 : 0};
}

}  // namespace

const Operation doctor_op{
    .name = "doctor",
    .command = "doctor",
    .tool = "team_doctor",
    .routes = {{"GET", "/api/doctor"}},
    .summary =
        "check that team can run here: tmux, git, the home's permissions, the store, the "
        "agents' CLIs and their presets, and the dashboard's port; exit 0 when nothing fails",
    .params = {},
    .access = Access::read,
    .scope = Scope::none,
    .body = doctor,
};

}  // namespace team::ops
