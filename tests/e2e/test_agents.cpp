// team spawn / agents / attach / logs / prompt on real tmux (SPEC 3.1 and 4), run as a user would,
// each test on its own temporary home with its own private tmux server. Every process a test
// starts carries the test's marker (the agents get it through --env, the tmux server and the
// supervisors through the environment of the `team` calls that start them), and every test that
// starts agents proves at its end that none of them is alive.
//
// Each test uses a team name of its own: reconciling a lost agent kills processes by their
// TEAM_AGENT_ID (see the test about another home's agent), so tests that run in parallel must
// not share agent ids.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "proc/process_table.hpp"
#include "team/agents.hpp"
#include "tests/support/agents_home.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/marker.hpp"
#include "tests/support/probe.hpp"
#include "tests/support/process.hpp"
#include "tests/support/team_home.hpp"

using team::test::alive;
using team::test::bound;
using team::test::Child;
using team::test::eventually;
using team::test::Marker;
using team::test::RunResult;
using team::test::slurp;
using team::test::sq;
using team::test::TeamEnv;
using Env = std::map<std::string, std::string>;
using Json = nlohmann::json;
using Ms = std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;
namespace fs = std::filesystem;

namespace {

// Waits (up to 3 s) until the file holds at least `size` bytes; returns what it holds.
std::string wait_for_size(const fs::path& path, size_t size) {
    eventually([&] {
        std::error_code ec;
        auto n = fs::file_size(path, ec);
        return !ec && n >= size;
    });
    return slurp(path);
}

pid_t parent_of(pid_t pid) {
    auto p = team::proc::read_process(pid);
    return p ? p->ppid : 0;
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty()) out.push_back(line);
    }
    return out;
}

// One test's home, with a team in it (unless told otherwise), its marker, and helpers that run
// `team` and tmux there.
class Home : public team::test::TeamHome {
  public:
    using TeamHome::TeamHome;

    // `team spawn NAME --json --env <marker> OPTIONS -- COMMAND` without checking the result.
    RunResult try_spawn(const std::string& name, const std::vector<std::string>& command,
                        const std::vector<std::string>& options = {}, const Env& more = {}) const {
        std::vector<std::string> args{"spawn", name, "--json", "--env", mark.entry()};
        args.insert(args.end(), options.begin(), options.end());
        args.push_back("--");
        args.insert(args.end(), command.begin(), command.end());
        return run(args, more);
    }

    Json spawn(const std::string& name, const std::vector<std::string>& command,
               const std::vector<std::string>& options = {}, const Env& more = {}) const {
        auto r = try_spawn(name, command, options, more);
        INFO("spawn " << name << " stdout: " << r.out << " stderr: " << r.err);
        REQUIRE(r.exit_code == 0);
        auto doc = r.json();
        REQUIRE(doc["agentId"] == name + "@" + team());
        REQUIRE(doc["name"] == name);
        REQUIRE(doc["paneId"].is_string());
        REQUIRE(doc["pid"].is_number_integer());
        REQUIRE(doc["color"].is_string());
        return doc;
    }

    Json agents(bool all = true, const Env& more = {}) const {
        std::vector<std::string> args{"agents", "--json"};
        if (all) args.push_back("--all");
        auto r = run(args, more);
        INFO("agents stdout: " << r.out << " stderr: " << r.err);
        REQUIRE(r.exit_code == 0);
        auto doc = r.json();
        REQUIRE(doc.is_array());
        return doc;
    }

    // The newest record of that name (null when there is none).
    static Json find(const Json& list, const std::string& name) {
        Json found;
        for (const auto& a : list) {
            if (a["name"] == name) found = a;
        }
        return found;
    }

    Json agent(const std::string& name) const {
        auto a = find(agents(true), name);
        INFO("agent " << name);
        REQUIRE(a.is_object());
        return a;
    }

    // Polls `team agents --all` until the agent is terminated (up to `ms`); returns its record.
    Json wait_terminated(const std::string& name, int ms = 3000) const {
        Json last;
        eventually(
            [&] {
                last = find(agents(true), name);
                return last.is_object() && last["status"] == "terminated";
            },
            ms);
        INFO("agent " << name << ": " << last.dump());
        REQUIRE(last.is_object());
        REQUIRE(last["status"] == "terminated");
        return last;
    }

    // Pane id -> pane pid, on the home's private server (empty when no server runs).
    std::map<std::string, pid_t> pane_pids() const {
        std::map<std::string, pid_t> out;
        auto r = env.tmux({"list-panes", "-a", "-F", "#{pane_id} #{pane_pid}"});
        if (r.exit_code != 0) return out;
        for (const auto& line : lines_of(r.out)) {
            auto sp = line.find(' ');
            out[line.substr(0, sp)] = static_cast<pid_t>(std::stol(line.substr(sp + 1)));
        }
        return out;
    }

    std::set<std::string> panes() const {
        std::set<std::string> out;
        for (const auto& [id, pid] : pane_pids()) out.insert(id);
        return out;
    }

    static std::set<std::string> panes_of(const Json& agents) {
        std::set<std::string> out;
        for (const auto& a : agents) {
            if (a["paneId"].is_string()) out.insert(a["paneId"].get<std::string>());
        }
        return out;
    }

    bool pane_gone(const std::string& pane) const {
        return eventually([&] { return panes().count(pane) == 0; });
    }
};

std::map<std::string, std::string> parse_env_file(const std::string& text) {
    std::map<std::string, std::string> out;
    for (const auto& line : lines_of(text)) {
        auto eq = line.find('=');
        if (eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return out;
}

}  // namespace

TEST_CASE("spawn runs the command in a new pane of the private server, with the team's environment",
          "[agents][sanitize]") {
    Home h("ag-spawn");
    auto out = h.env.dir() / "env.txt";
    std::string extra_value = "some value; with $(stuff) and 'quotes'";
    std::vector<std::string> command{
        "sh", "-c",
        "env > " + sq(out) + ".tmp && mv " + sq(out) + ".tmp " + sq(out) + "; exec sleep 1000"};
    auto doc =
        h.spawn("worker", command, {"--role", "backend", "--env", "EXTRA_VAR=" + extra_value});
    CHECK(doc["agentId"] == "worker@ag-spawn");
    CHECK(doc["color"] == team::color_pool().front());
    std::string pane = doc["paneId"];
    auto pid = static_cast<pid_t>(doc["pid"].get<long>());

    // The pane exists on the home's own socket, in the team's session; the pane's process is the
    // supervisor and the agent's command is its child.
    CHECK(fs::exists(h.env.home() / "tmux.sock"));
    auto sessions = h.env.tmux({"list-panes", "-a", "-F", "#{pane_id} #{session_name}"});
    CHECK(sessions.out == pane + " ag-spawn\n");
    auto pane_pids = h.pane_pids();
    REQUIRE(pane_pids.count(pane) == 1);
    CHECK(alive(pid));
    CHECK(parent_of(pid) == pane_pids[pane]);

    // The agent's environment.
    REQUIRE(eventually([&] { return fs::exists(out); }));
    auto vars = parse_env_file(slurp(out));
    CHECK(vars["TEAM_HOME"] == h.env.home().string());
    CHECK(vars["TEAM_NAME"] == "ag-spawn");
    CHECK(vars["TEAM_AGENT_ID"] == "worker@ag-spawn");
    CHECK(vars["TEAM_AGENT_NAME"] == "worker");
    CHECK(vars["TEAM_AGENT_COLOR"] == doc["color"]);
    CHECK(vars["EXTRA_VAR"] == extra_value);
    CHECK(vars[h.mark.key()] == h.mark.value());

    // `team agents` agrees with tmux.
    auto list = h.agents(false);
    REQUIRE(list.size() == 1);
    const auto& a = list[0];
    CHECK(a["agentId"] == "worker@ag-spawn");
    CHECK(a["name"] == "worker");
    CHECK(a["team"] == "ag-spawn");
    CHECK(a["role"] == "backend");
    CHECK(a["status"] == "active");
    CHECK(a["paneId"] == pane);
    CHECK(a["pid"] == pid);
    CHECK(a["color"] == doc["color"]);
    CHECK(a["command"] == command);
    CHECK(a["cwd"] == fs::canonical(h.env.dir()).string());
    CHECK(a["createdAt"].get<std::string>().size() == 24);
    CHECK(a["terminatedAt"].is_null());
    CHECK(a["exitCode"].is_null());
    CHECK(a["signal"].is_null());
    CHECK(a["exitReason"].is_null());
    CHECK(Home::panes_of(list) == h.panes());

    auto human = h.run({"agents"});
    CHECK(human.exit_code == 0);
    CHECK_THAT(human.out, Catch::Contains("worker") && Catch::Contains("active") &&
                              Catch::Contains(pane) && Catch::Contains(std::to_string(pid)));
    h.finish();
}

TEST_CASE("eight parallel spawns each get their own pane, pid and colour", "[agents][pg]") {
    Home h("ag-parallel");
    std::vector<Child> children;
    for (int i = 0; i < 8; ++i) {
        children.push_back(h.env.start({"spawn", "p" + std::to_string(i), "--json", "--env",
                                        h.mark.entry(), "--", "sleep", "1000"},
                                       h.extra()));
    }
    std::set<std::string> panes, colors;
    std::set<long> pids;
    for (auto& c : children) {
        auto r = c.wait();
        INFO("stdout: " << r.out << " stderr: " << r.err);
        CHECK(r.exit_code == 0);
        if (r.exit_code != 0) continue;
        auto doc = r.json();
        panes.insert(doc["paneId"].get<std::string>());
        pids.insert(doc["pid"].get<long>());
        colors.insert(doc["color"].get<std::string>());
    }
    CHECK(panes.size() == 8);
    CHECK(pids.size() == 8);
    const auto& pool = team::color_pool();
    CHECK(colors == std::set<std::string>(pool.begin(), pool.begin() + 8));
    auto pane_pids = h.pane_pids();
    CHECK(pane_pids.size() == 8);
    for (const auto& p : panes) CHECK(pane_pids.count(p) == 1);
    for (long pid : pids) CHECK(alive(static_cast<pid_t>(pid)));

    auto list = h.agents(false);
    CHECK(list.size() == 8);
    CHECK(Home::panes_of(list) == h.panes());
    for (const auto& a : list) {
        CHECK(a["status"] == "active");
        std::string pane = a["paneId"];
        CHECK(parent_of(static_cast<pid_t>(a["pid"].get<long>())) == pane_pids[pane]);
    }
    h.finish();
}

TEST_CASE("the user's default tmux server is never touched", "[agents]") {
    Home h("ag-default");
    auto tmpdir = h.env.dir() / "tmuxtmp";
    fs::create_directories(tmpdir);
    // The user's own server, with the marker so it is killed whatever happens.
    auto user_env =
        team::test::clean_env({{"TMUX_TMPDIR", tmpdir.string()}, {h.mark.key(), h.mark.value()}});
    auto user_tmux = [&](std::vector<std::string> args) {
        args.insert(args.begin(), "/usr/bin/tmux");
        return Child(args, user_env).wait();
    };
    REQUIRE(user_tmux({"new-session", "-d", "-s", "mine", "sleep 1000"}).exit_code == 0);
    const std::vector<std::string> list_all{
        "list-panes", "-a", "-F",
        "#{session_name} #{window_index} #{pane_id} #{pane_pid} #{pane_dead}"};
    auto before = user_tmux(list_all);
    REQUIRE(before.exit_code == 0);
    REQUIRE(lines_of(before.out).size() == 1);
    auto server_pid = user_tmux({"display-message", "-p", "#{pid}"}).out;
    while (!server_pid.empty() && server_pid.back() == '\n') server_pid.pop_back();

    // Every team call runs as if from inside a pane of the user's server.
    auto socket = tmpdir / ("tmux-" + std::to_string(::getuid())) / "default";
    REQUIRE(fs::exists(socket));
    Env inside{{"TMUX_TMPDIR", tmpdir.string()},
               {"TMUX", socket.string() + "," + server_pid + ",0"},
               {"TMUX_PANE", "%0"}};

    auto file = h.env.dir() / "typed.txt";
    auto cat = h.spawn("typist", {"sh", "-c", "exec cat > " + sq(file)}, {}, inside);
    auto sleeper = h.spawn("sleeper", {"sleep", "1000"}, {}, inside);
    auto quick = h.spawn("quick", {"sh", "-c", "sleep 0.2; exit 0"}, {}, inside);
    CHECK(h.run({"prompt", "typist", "hello default server"}, inside).exit_code == 0);
    CHECK(wait_for_size(file, 21) == "hello default server\n");
    CHECK(h.agents(true, inside).size() == 3);
    CHECK(h.run({"status"}, inside).exit_code == 0);
    CHECK(h.run({"attach", "typist"}, inside).exit_code == 4);
    CHECK(h.run({"logs", "typist"}, inside).exit_code == 0);
    h.wait_terminated("quick");  // its supervisor killed its pane
    CHECK(h.env.tmux({"kill-pane", "-t", sleeper["paneId"]}).exit_code == 0);
    h.wait_terminated("sleeper");
    CHECK(h.env.tmux({"kill-server"}).exit_code == 0);
    h.wait_terminated("typist");
    CHECK(h.run({"agents", "--all"}, inside).exit_code == 0);

    // The user's server still has exactly its one session with its one live pane.
    CHECK(user_tmux({"list-sessions", "-F", "#{session_name}"}).out == "mine\n");
    CHECK(user_tmux(list_all).out == before.out);
    CHECK_THAT(before.out, Catch::EndsWith(" 0\n"));  // not dead
    CHECK(user_tmux({"kill-server"}).exit_code == 0);
    h.finish();
}

TEST_CASE(
    "hostile arguments, environment values, cwd and command paths reach the agent as they are",
    "[agents][input]") {
    Home h("ag-hostile");
    auto pwned = h.env.dir() / "pwned";
    std::string p = pwned.string();
    std::vector<std::string> hostile{"'; touch " + p + "'",
                                     "; touch " + p,
                                     "$(touch " + p + ")",
                                     "`touch " + p + "`",
                                     "&& touch " + p + " || touch " + p + " | touch " + p,
                                     "> " + p,
                                     "\"double\" 'single' \\back\\slash",
                                     "line one\nline two",
                                     "tab\there",
                                     "日本語 🚀 ünïcödé",
                                     "[a,b]",
                                     "{a,b}",
                                     "*",
                                     "~",
                                     "$HOME",
                                     "-x",
                                     "--",
                                     "",
                                     "trailing;",
                                     ";",
                                     "\\;",
                                     "#{pane_id}",
                                     "%1"};
    auto out = h.env.dir() / "argv.txt";
    auto envout = h.env.dir() / "env.txt";
    std::string script = "printf '%s\\n' \"$@\" > " + sq(out) + ".tmp && mv " + sq(out) + ".tmp " +
                         sq(out) + "; printf '%s' \"$HOSTILE_VALUE\" > " + sq(envout) +
                         ".tmp && mv " + sq(envout) + ".tmp " + sq(envout) + "; exec sleep 1000";
    std::vector<std::string> command{"sh", "-c", script, "sh"};
    command.insert(command.end(), hostile.begin(), hostile.end());
    std::string hostile_value = "$(touch " + p + "); `touch " + p + "` 'q' \"dq\" && touch " + p +
                                "\nsecond line 日本 #{pane_id} end;";
    auto doc = h.spawn("argv", command,
                       {"--role", "$(touch " + p + ")", "--env", "HOSTILE_VALUE=" + hostile_value});

    std::string expected;
    for (const auto& a : hostile) expected += a + "\n";
    REQUIRE(eventually([&] { return fs::exists(out) && fs::exists(envout); }));
    CHECK(slurp(out) == expected);
    CHECK(slurp(envout) == hostile_value);
    auto a = h.agent("argv");
    CHECK(a["command"] == command);
    CHECK(a["role"] == "$(touch " + p + ")");

    // A cwd and a command path full of shell syntax.
    auto dir = h.env.dir() / ("d'ir $(touch " + p + ") ;x");
    fs::create_directories(dir);
    auto cwd_out = h.env.dir() / "cwd.txt";
    h.spawn("cwd", {"sh", "-c", "pwd -P > " + sq(cwd_out) + "; exec sleep 1000"},
            {"--cwd", dir.string()});
    CHECK(wait_for_size(cwd_out, 2) == fs::canonical(dir).string() + "\n");
    CHECK(h.agent("cwd")["cwd"] == fs::canonical(dir).string());

    auto prog = dir / "my prog;";
    auto ran = h.env.dir() / "ran.txt";
    {
        std::ofstream f(prog);
        f << "#!/bin/sh\necho \"$0\" > " << sq(ran) << "\nexec sleep 1000\n";
    }
    fs::permissions(prog, fs::perms::owner_all);
    h.spawn("prog", {prog.string()});
    CHECK(wait_for_size(ran, 2) == prog.string() + "\n");
    // The program has become its `sleep`: whatever a broken quoting would have run with it has
    // run by now.
    REQUIRE(eventually([&] {
        return team::test::runs_program(static_cast<pid_t>(h.agent("prog")["pid"].get<long>()),
                                        "sleep");
    }));
    CHECK_FALSE(fs::exists(pwned));
    h.finish();
    CHECK_FALSE(fs::exists(pwned));
}

TEST_CASE("hostile agent names and --env entries are usage errors and spawn nothing",
          "[agents][input]") {
    Home h("ag-names");
    auto pwned = h.env.dir() / "pwned";
    std::string long_name(65, 'a');
    for (std::string bad :
         std::vector<std::string>{"a b", "x;y", "$(touch " + pwned.string() + ")", long_name, "",
                                  "../x", "wörker", "a\nb", "x'y", "-x", "a@b", "%1", "=x:"}) {
        INFO("name [" << bad << "]");
        auto r = h.run({"--json", "spawn", bad, "--env", h.mark.entry(), "--", "sleep", "1000"});
        CHECK(r.exit_code == 2);
        CHECK(r.json()["code"] == "usage");
        auto human = h.run({"spawn", bad, "--", "sleep", "1000"});
        CHECK(human.exit_code == 2);
        CHECK_THAT(human.err, Catch::StartsWith("team: error:"));
    }
    for (std::string bad : std::vector<std::string>{"NOEQUALS", "=x", "A B=1", "X;Y=1",
                                                    "$(touch " + pwned.string() + ")=1", "1X=1"}) {
        INFO("--env [" << bad << "]");
        auto r = h.try_spawn("fine", {"sleep", "1000"}, {"--env", bad});
        CHECK(r.exit_code == 2);
    }
    CHECK(h.run({"spawn", "nocommand", "--json"}).exit_code == 2);
    CHECK(h.run({"spawn", "nocommand", "--json", "--"}).exit_code == 2);
    CHECK(h.agents(true).empty());
    CHECK_FALSE(fs::exists(h.env.home() / "tmux.sock"));
    CHECK(h.panes().empty());
    CHECK_FALSE(fs::exists(pwned));
    CHECK(h.mark.none_alive_within(1000));
}

TEST_CASE("a home path with quotes, spaces, $(...) and a trailing semicolon works and runs nothing",
          "[agents][input]") {
    TeamEnv env;
    Marker mark;
    auto pwned = env.dir() / "p";
    auto home = env.dir() / ("h o'$(touch " + pwned.string() + ");");
    Env extra{{"TEAM_HOME", home.string()}, {mark.key(), mark.value()}};
    auto socket = home / "tmux.sock";
    REQUIRE(socket.string().size() <= 100);  // so the socket is <home>/tmux.sock
    auto tmux = [&](std::vector<std::string> args) {
        args.insert(args.begin(), {"/usr/bin/tmux", "-S", socket.string()});
        return Child(args, team::test::clean_env()).wait();
    };
    REQUIRE(env.run({"create", "ag-home", "--cwd", env.dir().string()}, extra).exit_code == 0);
    auto r = env.run({"spawn", "w", "--json", "--env", mark.entry(), "--", "sh", "-c",
                      "echo hello-hostile-home; exec cat"},
                     extra);
    INFO("stdout: " << r.out << " stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    std::string pane = r.json()["paneId"];
    CHECK_THAT(tmux({"list-panes", "-a", "-F", "#{pane_id}"}).out, Catch::Contains(pane));
    std::string logs;
    CHECK(eventually([&] {
        logs = env.run({"logs", "w"}, extra).out;
        return logs.find("hello-hostile-home") != std::string::npos;
    }));
    CHECK(env.run({"prompt", "w", "typed-text"}, extra).exit_code == 0);
    CHECK(eventually([&] {
        return env.run({"logs", "w"}, extra).out.find("typed-text") != std::string::npos;
    }));
    auto status = env.run({"status", "--json"}, extra);
    CHECK(status.exit_code == 0);
    CHECK(status.json()["agents"].size() == 1);
    CHECK(tmux({"kill-server"}).exit_code == 0);
    CHECK(env.run({"agents", "--all"}, extra).exit_code == 0);
    CHECK(mark.none_alive_within(3000));
    CHECK_FALSE(fs::exists(pwned));
}

TEST_CASE("a spawn that cannot start leaves no record and no pane", "[agents]") {
    Home h("ag-fail");
    h.spawn("alive", {"sleep", "1000"});
    auto before = h.agents(true);
    auto panes_before = h.panes();
    REQUIRE(before.size() == 1);
    REQUIRE(panes_before.size() == 1);

    auto not_executable = h.env.dir() / "not-executable";
    {
        std::ofstream f(not_executable);
        f << "#!/bin/sh\nexec sleep 1000\n";
    }
    fs::permissions(not_executable, fs::perms::owner_read | fs::perms::owner_write);
    auto bad_interpreter = h.env.dir() / "bad-interpreter";
    {
        std::ofstream f(bad_interpreter);
        f << "#!/nonexistent/interpreter\n";
    }
    fs::permissions(bad_interpreter, fs::perms::owner_all);
    auto a_file = h.env.dir() / "a-file";
    { std::ofstream f(a_file); }

    struct Case {
        std::string what;
        std::vector<std::string> args;
        Env env;
        int exit;
    };
    auto spawn_args = [&](const std::string& name, std::vector<std::string> options,
                          std::vector<std::string> command) {
        std::vector<std::string> args{"spawn", name, "--env", h.mark.entry()};
        args.insert(args.end(), options.begin(), options.end());
        args.push_back("--");
        args.insert(args.end(), command.begin(), command.end());
        return args;
    };
    std::vector<Case> cases{
        {"command not found", spawn_args("nf", {}, {"no-such-command-team-test"}), {}, 1},
        {"not executable", spawn_args("nx", {}, {not_executable.string()}), {}, 1},
        {"a directory", spawn_args("dir", {}, {h.env.dir().string()}), {}, 1},
        {"missing interpreter", spawn_args("interp", {}, {bad_interpreter.string()}), {}, 1},
        {"bad --cwd",
         spawn_args("cwd", {"--cwd", (h.env.dir() / "missing").string()}, {"sleep", "1000"}),
         {},
         2},
        {"--cwd is a file",
         spawn_args("cwdfile", {"--cwd", a_file.string()}, {"sleep", "1000"}),
         {},
         2},
        {"unknown colour", spawn_args("col", {"--color", "chartreuse"}, {"sleep", "1000"}), {}, 2},
        {"duplicate live name", spawn_args("alive", {}, {"sleep", "1000"}), {}, 4},
        {"not the leader (--as)",
         [&] {
             auto a = spawn_args("na", {}, {"sleep", "1000"});
             a.insert(a.begin(), {"--as", "alive"});
             return a;
         }(),
         {},
         4},
        {"not the leader (--as id)",
         [&] {
             auto a = spawn_args("na", {}, {"sleep", "1000"});
             a.insert(a.begin(), {"--as", "alive@ag-fail"});
             return a;
         }(),
         {},
         4},
        {"not the leader (TEAM_AGENT_ID)",
         spawn_args("na", {}, {"sleep", "1000"}),
         {{"TEAM_AGENT_ID", "alive@ag-fail"}},
         4},
        {"unknown team",
         [&] {
             auto a = spawn_args("nt", {}, {"sleep", "1000"});
             a.insert(a.begin(), {"--team", "ag-nope"});
             return a;
         }(),
         {},
         3},
    };
    for (const auto& c : cases) {
        INFO(c.what);
        auto r = h.run(c.args, c.env);
        INFO("stdout: " << r.out << " stderr: " << r.err);
        CHECK(r.exit_code == c.exit);
        CHECK_THAT(r.err, Catch::StartsWith("team: error:"));
        auto json_args = c.args;
        json_args.insert(json_args.begin(), "--json");  // a global option may come first
        auto j = h.run(json_args, c.env);
        CHECK(j.exit_code == c.exit);
        CHECK(j.json()["success"] == false);
        CHECK(team::test::steady(h.agents(true)) == team::test::steady(before));
        CHECK(h.panes() == panes_before);
    }
    auto nf = h.run(cases[0].args);
    CHECK_THAT(nf.err, Catch::Contains("command not found"));
    auto nx = h.run(cases[1].args);
    CHECK_THAT(nx.err, Catch::Contains("not an executable file"));

    // Without any team, and with two teams and none named.
    TeamEnv empty;
    auto none = empty.run({"spawn", "x", "--env", h.mark.entry(), "--", "sleep", "1000"},
                          {{h.mark.key(), h.mark.value()}});
    CHECK((none.exit_code == 2 || none.exit_code == 3));
    CHECK_FALSE(fs::exists(empty.home() / "tmux.sock"));
    REQUIRE(h.env.run({"create", "ag-fail-2", "--cwd", h.env.dir().string()}).exit_code == 0);
    auto ambiguous = h.env.run({"spawn", "x", "--env", h.mark.entry(), "--", "sleep", "1000"},
                               {{h.mark.key(), h.mark.value()}});
    CHECK(ambiguous.exit_code == 2);
    CHECK(team::test::steady(h.agents(true)) == team::test::steady(before));
    CHECK(h.panes() == panes_before);
    h.finish();
}

TEST_CASE("a relative command is found in the agent's --cwd", "[agents]") {
    // `team spawn w --cwd DIR -- ./run.sh` runs DIR/run.sh, as tmux and a shell would: the
    // command is looked up where it is started, not where `team spawn` was typed.
    Home h("ag-relative");
    auto dir = h.env.dir() / "proj";
    fs::create_directories(dir);
    auto ran = h.env.dir() / "ran.txt";
    {
        std::ofstream f(dir / "run.sh");
        f << "#!/bin/sh\npwd -P > " << sq(ran) << "\nexec sleep 1000\n";
    }
    fs::permissions(dir / "run.sh", fs::perms::owner_all);
    REQUIRE_FALSE(fs::exists("run.sh"));  // not where this test runs
    auto r = h.try_spawn("rel", {"./run.sh"}, {"--cwd", dir.string()});
    INFO("stdout: " << r.out << " stderr: " << r.err);
    CHECK(r.exit_code == 0);
    if (r.exit_code == 0) CHECK(wait_for_size(ran, 2) == fs::canonical(dir).string() + "\n");
    h.finish();
}

TEST_CASE(
    "an agent that ends by itself is terminated with how it ended, and its pane and colour go",
    "[agents][pg]") {
    Home h("ag-exit");
    const auto& pool = team::color_pool();
    // The agents end only once all four are spawned (however slow the machine, e.g. under
    // sanitizers), so the colours are handed out in pool order.
    auto go = h.env.dir() / "go";
    std::string wait_go = "while [ ! -e " + sq(go) + " ]; do sleep 0.02; done; ";
    auto seven = h.spawn("seven", {"sh", "-c", wait_go + "exit 7"});
    auto stay = h.spawn("stay", {"sleep", "1000"});
    auto killed = h.spawn("killed", {"sleep", "1000"});
    auto term = h.spawn("term", {"sh", "-c", wait_go + "kill -TERM $$; sleep 5"});
    CHECK(seven["color"] == pool[0]);
    CHECK(stay["color"] == pool[1]);
    CHECK(killed["color"] == pool[2]);
    CHECK(term["color"] == pool[3]);
    { std::ofstream(go) << "go"; }

    auto a = h.wait_terminated("seven");
    CHECK(a["exitReason"] == "exited");
    CHECK(a["exitCode"] == 7);
    CHECK(a["signal"].is_null());
    CHECK(a["terminatedAt"].is_string());
    CHECK(h.pane_gone(seven["paneId"]));

    auto t = h.wait_terminated("term");
    CHECK(t["exitReason"] == "exited");
    CHECK(t["exitCode"].is_null());
    CHECK(t["signal"] == "SIGTERM");
    CHECK(h.pane_gone(term["paneId"]));

    REQUIRE(::kill(static_cast<pid_t>(killed["pid"].get<long>()), SIGKILL) == 0);
    auto k = h.wait_terminated("killed");
    CHECK(k["exitReason"] == "exited");
    CHECK(k["exitCode"].is_null());
    CHECK(k["signal"] == "SIGKILL");
    CHECK(h.pane_gone(killed["paneId"]));

    // Only `stay` is live; the colours of the others are free again, the first one first.
    auto live = h.agents(false);
    REQUIRE(live.size() == 1);
    CHECK(live[0]["name"] == "stay");
    CHECK(h.panes() == std::set<std::string>{stay["paneId"].get<std::string>()});
    CHECK(h.spawn("next", {"sleep", "1000"})["color"] == pool[0]);
    CHECK(h.spawn("then", {"sleep", "1000"}, {"--color", pool[9]})["color"] == pool[9]);
    CHECK(h.spawn("after", {"sleep", "1000"})["color"] == pool[2]);

    // A command that ends at once still ran: an agent that exited.
    auto quick = h.spawn("quick", {"sh", "-c", "exit 3"});
    auto q = h.wait_terminated("quick");
    CHECK(q["exitReason"] == "exited");
    CHECK(q["exitCode"] == 3);
    CHECK(h.pane_gone(quick["paneId"]));

    // A name can be reused once its agent is terminated; the history stays.
    auto again = h.spawn("seven", {"sleep", "1000"});
    CHECK(again["paneId"] != seven["paneId"]);
    int sevens = 0;
    for (const auto& x : h.agents(true)) sevens += x["name"] == "seven";
    CHECK(sevens == 2);
    CHECK(h.agent("seven")["status"] == "active");
    h.finish();
}

TEST_CASE("a pane killed from outside ends its agent and leaves no process", "[agents][sanitize]") {
    Home h("ag-killpane");
    Marker victim_mark, bystander_mark;
    // The victim ignores SIGHUP and has a child that left its session.
    auto victim =
        h.spawn("victim", {"sh", "-c", "trap '' HUP; sleep 1000 & setsid sleep 1001 & wait"},
                {"--env", victim_mark.entry()});
    auto bystander = h.spawn("bystander", {"sleep", "1000"}, {"--env", bystander_mark.entry()});
    REQUIRE(eventually([&] { return victim_mark.alive().size() == 3; }));
    CHECK(h.env.tmux({"kill-pane", "-t", victim["paneId"]}).exit_code == 0);
    CHECK(victim_mark.none_alive_within(3000));
    // Its processes are gone: the next look shows it terminated.
    auto v = Home::find(h.agents(true), "victim");
    CHECK(v["status"] == "terminated");
    // Not an end of its own (SPEC 4): its pane was closed from outside.
    CHECK(v["exitReason"] == "lost");
    h.wait_terminated("victim");
    auto b = h.agent("bystander");
    CHECK(b["status"] == "active");
    CHECK(h.panes() == std::set<std::string>{bystander["paneId"].get<std::string>()});
    CHECK(bystander_mark.alive().size() == 1);
    h.finish();
}

TEST_CASE("a tmux server killed from outside ends every agent and leaves no process", "[agents]") {
    Home h("ag-killserver");
    Marker agents_mark;
    h.spawn("one", {"sh", "-c", "trap '' HUP; sleep 1000 & setsid sleep 1001 & wait"},
            {"--env", agents_mark.entry()});
    h.spawn("two", {"sleep", "1000"}, {"--env", agents_mark.entry()});
    h.spawn("three", {"sh", "-c", "exec cat"}, {"--env", agents_mark.entry()});
    REQUIRE(eventually([&] { return agents_mark.alive().size() == 5; }));
    CHECK(h.env.tmux({"kill-server"}).exit_code == 0);
    // Everything goes by itself, supervisors included, before any team command looks.
    CHECK(h.mark.none_alive_within(3000));
    auto list = h.agents(true);
    REQUIRE(list.size() == 3);
    for (const auto& a : list) {
        INFO(a.dump());
        CHECK(a["status"] == "terminated");
        CHECK(a["exitReason"] == "lost");
    }
    CHECK(h.agents(false).empty());
    auto status = h.run({"status", "--json"});
    CHECK(status.exit_code == 0);
    CHECK(status.json()["agents"].empty());
    CHECK(status.json()["tmux"]["running"] == false);

    // A new spawn starts a new server.
    auto again = h.spawn("one", {"sleep", "1000"});
    CHECK(h.panes() == std::set<std::string>{again["paneId"].get<std::string>()});
    CHECK(h.agent("one")["status"] == "active");
    h.finish();
}

TEST_CASE("a supervisor killed with SIGKILL: the agent is lost and its processes are killed",
          "[agents][sanitize]") {
    Home h("ag-lost");
    Marker orphan_mark, bystander_mark;
    auto orphan =
        h.spawn("orphan", {"sh", "-c", "trap '' HUP; sleep 1000 & setsid sleep 1001 & wait"},
                {"--env", orphan_mark.entry()});
    auto bystander = h.spawn("bystander", {"sleep", "1000"}, {"--env", bystander_mark.entry()});
    REQUIRE(eventually([&] { return orphan_mark.alive().size() == 3; }));
    auto pane_pids = h.pane_pids();
    std::string pane = orphan["paneId"];
    REQUIRE(pane_pids.count(pane) == 1);
    pid_t supervisor = pane_pids[pane];
    REQUIRE(parent_of(static_cast<pid_t>(orphan["pid"].get<long>())) == supervisor);
    REQUIRE(::kill(supervisor, SIGKILL) == 0);
    REQUIRE(eventually([&] { return !alive(supervisor); }));

    auto list = h.agents(true);
    auto o = Home::find(list, "orphan");
    INFO(o.dump());
    CHECK(o["status"] == "terminated");
    CHECK(o["exitReason"] == "lost");
    CHECK(o["exitCode"].is_null());
    CHECK(o["signal"].is_null());
    CHECK(o["terminatedAt"].is_string());
    CHECK(orphan_mark.none_alive_within(500));  // killed by that command, not later
    CHECK(h.pane_gone(pane));                   // the dead pane does not linger
    CHECK(Home::find(list, "bystander")["status"] == "active");
    CHECK(bystander_mark.alive().size() == 1);
    CHECK(h.panes() == std::set<std::string>{bystander["paneId"].get<std::string>()});
    h.finish();
}

TEST_CASE("reconciling a lost agent never kills another home's agent of the same id", "[agents]") {
    // Two homes (two projects of one user) that both have team `ag-twins` with agent `twin`.
    Home one("ag-twins");
    Home two("ag-twins");
    Marker two_mark;
    auto first = one.spawn("twin", {"sleep", "1000"});
    auto second = two.spawn("twin", {"sleep", "1000"}, {"--env", two_mark.entry()});
    REQUIRE(eventually([&] { return two_mark.alive().size() == 1; }));
    auto pane_pids = one.pane_pids();
    REQUIRE(pane_pids.count(first["paneId"]) == 1);
    REQUIRE(::kill(pane_pids[first["paneId"]], SIGKILL) == 0);
    // The signal is delivered asynchronously: look once the supervisor is really gone.
    REQUIRE(eventually([&] { return !alive(pane_pids[first["paneId"]]); }));
    CHECK(one.agent("twin")["status"] == "terminated");
    // The other home's agent is none of this home's business: no command of this home, all of
    // them returned, left a kill on it.
    CHECK(team::test::not_killed(static_cast<pid_t>(second["pid"].get<long>())));
    CHECK(two_mark.alive().size() == 1);
    CHECK(two.agent("twin")["status"] == "active");
    one.finish();
    two.finish();
}

TEST_CASE("prompt types the text into the pane byte for byte and presses Enter", "[agents]") {
    Home h("ag-prompt");
    auto file = h.env.dir() / "typed.txt";
    h.spawn("typist", {"sh", "-c", "exec cat > " + sq(file)});
    std::string expected;
    auto expect = [&](const std::string& text) {
        INFO("text of " << text.size() << " bytes");
        expected += text + "\n";
        CHECK(wait_for_size(file, expected.size()) == expected);
    };
    auto prompt = [&](const std::string& text, const std::vector<std::string>& options = {}) {
        std::vector<std::string> args{"prompt", "typist"};
        args.insert(args.end(), options.begin(), options.end());
        args.insert(args.end(), {"--", text});  // a text may start with a dash
        auto r = h.run(args);
        INFO("stdout: " << r.out << " stderr: " << r.err);
        CHECK(r.exit_code == 0);
    };

    std::string hostile = "semi;colon \"dq\" 'sq' $(id) `id` \\back 日本語 🚀 tab\there end;";
    prompt(hostile);
    expect(hostile);
    for (std::string text : {";", "\\;", "ends with backslash-semicolon \\;", "Enter", "C-c", "-x",
                             "--", "#{pane_id}", "%1 {a,b} [a,b] * ~"}) {
        prompt(text);
        expect(text);
    }
    // One long line (a terminal in line mode takes at most 4095 bytes per line).
    std::string long_line;
    for (int i = 0; long_line.size() < 4000; ++i) long_line += "word" + std::to_string(i) + " ";
    prompt(long_line);
    expect(long_line);

    // 10 KB in lines of 100 characters: pasted at once.
    std::string many;
    for (int i = 0; i < 103; ++i) {
        std::string line =
            "line " + std::to_string(i) + (i % 7 == 0 ? " ends with;" : " é日;'\"$x");
        while (line.size() < 100) line += static_cast<char>('a' + i % 26);
        many += (i ? "\n" : "") + line;
    }
    REQUIRE(many.size() > 10'000);
    prompt(many);
    expect(many);

    // From stdin: one trailing newline is not part of the text.
    auto from_stdin =
        h.env.start({"prompt", "typist", "-"}, h.extra(), "from stdin; $(id)\n").wait();
    CHECK(from_stdin.exit_code == 0);
    expect("from stdin; $(id)");
    auto lines_from_stdin = h.env.start({"prompt", "typist", "-"}, h.extra(), "a;\nb 'c'\n").wait();
    CHECK(lines_from_stdin.exit_code == 0);
    expect("a;\nb 'c'");

    // --no-enter types without Enter.
    prompt("abc", {"--no-enter"});
    prompt("def");
    expect("abcdef");

    // Control characters act as keys: refused, nothing typed.
    for (std::string bad : {std::string("\x03"), std::string("a\x1b[Ab"), std::string("\x7f"),
                            std::string("x\ry"), std::string("\x04"), std::string("a\x15")}) {
        auto r = h.run({"prompt", "typist", bad});
        CHECK(r.exit_code == 2);
        auto j = h.run({"prompt", "typist", bad, "--json"});
        CHECK(j.exit_code == 2);
        CHECK(j.json()["code"] == "usage");
    }
    auto bad_stdin = h.env.start({"prompt", "typist", "-"}, h.extra(), "x\x03y\n").wait();
    CHECK(bad_stdin.exit_code == 2);
    prompt("after the refusals");
    expect("after the refusals");

    // Unknown agents.
    auto unknown = h.run({"prompt", "typst", "hello"});
    CHECK(unknown.exit_code == 3);
    CHECK_THAT(unknown.err, Catch::Contains("did you mean 'typist'"));
    CHECK(slurp(file) == expected);
    h.finish();
}

TEST_CASE("prompt cuts a line longer than one chunk on UTF-8 boundaries", "[agents][sanitize]") {
    // A terminal in raw mode takes lines of any length, so the chunks of send-keys show.
    Home h("ag-chunks");
    auto file = h.env.dir() / "raw.txt";
    auto ready = h.env.dir() / "ready";
    std::string text = "a";
    for (int i = 0; i < 3000; ++i) text += i % 500 == 0 ? "🚀;" : "日";
    text += " end;";
    REQUIRE(text.size() > 9000);
    // It reads the text and the Enter, then says so: a program in raw mode has taken the text
    // once output follows (SPEC 17), and prompt returns then.
    h.spawn("raw", {"sh", "-c",
                    "stty raw -echo && touch " + sq(ready) + " && head -c " +
                        std::to_string(text.size() + 1) + " > " + sq(file) +
                        " && echo read-it && exec sleep 1000"});
    REQUIRE(eventually([&] { return fs::exists(ready); }));
    auto r = h.run({"prompt", "raw", text});
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == 0);
    std::string expected = text + "\r";  // Enter is a carriage return in raw mode
    CHECK(wait_for_size(file, expected.size()) == expected);
    h.finish();
}

TEST_CASE("logs shows what the agent printed, also after its pane is gone", "[agents]") {
    Home h("ag-logs");
    h.spawn("printer", {"sh", "-c", "echo hello-from-agent; echo second-line; exec sleep 1000"});
    std::string out;
    CHECK(eventually([&] {
        out = h.run({"logs", "printer"}).out;
        return out.find("second-line") != std::string::npos;
    }));
    CHECK_THAT(out, Catch::Contains("hello-from-agent") && Catch::Contains("second-line"));
    auto last = h.run({"logs", "printer", "-n", "1"});
    CHECK(last.exit_code == 0);
    CHECK_THAT(last.out, Catch::Contains("second-line"));
    CHECK_THAT(last.out, !Catch::Contains("hello-from-agent"));
    auto json = h.run({"logs", "printer", "--json"});
    CHECK(json.exit_code == 0);
    auto doc = json.json();
    CHECK(doc["agentId"] == "printer@ag-logs");
    CHECK_THAT(doc["output"].get<std::string>(), Catch::Contains("hello-from-agent"));
    std::string log_file = doc["logFile"];
    CHECK_THAT(log_file, Catch::StartsWith(h.env.home().string()));
    struct stat st {};
    REQUIRE(::stat(log_file.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);  // SPEC 2: logs are 0600

    // An agent that ended: its pane is gone, its log stays.
    auto brief = h.spawn("brief", {"sh", "-c", "echo short-lived-output; sleep 0.3"});
    h.wait_terminated("brief");
    CHECK(h.pane_gone(brief["paneId"]));
    CHECK_THAT(h.run({"logs", "brief"}).out, Catch::Contains("short-lived-output"));

    auto unknown = h.run({"logs", "printr"});
    CHECK(unknown.exit_code == 3);
    CHECK_THAT(unknown.err, Catch::Contains("did you mean 'printer'"));
    auto unknown_json = h.run({"logs", "nobody-at-all", "--json"});
    CHECK(unknown_json.exit_code == 3);
    CHECK(unknown_json.json()["code"] == "not_found");
    CHECK(h.run({"logs", "a b"}).exit_code == 2);
    CHECK(h.run({"logs", "printer", "-n", "0"}).exit_code == 2);
    h.finish();
}

TEST_CASE("logs --follow prints what comes and ends when the agent ends", "[agents][sanitize]") {
    Home h("ag-follow");
    h.spawn("streamer", {"sh", "-c", "echo first-part; sleep 0.5; echo second-part; sleep 0.3"});
    auto env = team::test::clean_env(h.extra({{"TEAM_HOME", h.env.home().string()}}));
    auto start = Steady::now();
    auto r =
        Child({"/usr/bin/timeout", "5", team::test::team_binary(), "logs", "streamer", "--follow"},
              env)
            .wait();
    CHECK(r.exit_code == 0);
    CHECK(Steady::now() - start < Ms(4000));
    CHECK_THAT(r.out, Catch::Contains("first-part") && Catch::Contains("second-part"));
    h.finish();
}

TEST_CASE("attach without a terminal is refused", "[agents][sanitize]") {
    Home h("ag-attach");
    CHECK(h.run({"attach"}).exit_code == 4);
    h.spawn("w", {"sleep", "1000"});
    auto r = h.run({"attach", "w"});
    CHECK(r.exit_code == 4);
    CHECK_THAT(r.err, Catch::Contains("terminal"));
    auto j = h.run({"attach", "--json"});
    CHECK(j.exit_code == 4);
    CHECK(j.json()["code"] == "refused");
    CHECK(h.env.tmux({"list-clients"}).out.empty());
    h.finish();
}

TEST_CASE("attach on a terminal attaches to the private server with that agent's pane selected",
          "[agents]") {
    Home h("ag-attach-tty");
    h.spawn("w1", {"sleep", "1000"});
    auto w2 = h.spawn("w2", {"sleep", "1000"});
    auto env =
        team::test::clean_env(h.extra({{"TEAM_HOME", h.env.home().string()},
                                       {"TERM", "xterm"},
                                       {"TMUX_TMPDIR", (h.env.dir() / "nothing").string()}}));
    Child attached({"/usr/bin/timeout", "5", "/usr/bin/script", "-qfec",
                    team::test::team_binary() + " attach w2", "/dev/null"},
                   env);
    std::string clients;
    CHECK(eventually([&] {
        clients = h.env.tmux({"list-clients", "-F", "#{client_session} #{pane_id}"}).out;
        return !clients.empty();
    }));
    CHECK(clients == "ag-attach-tty " + w2["paneId"].get<std::string>() + "\n");
    h.env.tmux({"detach-client", "-s", "=ag-attach-tty:"});
    auto r = attached.wait();
    CHECK(r.exit_code == 0);
    CHECK(h.agents(false).size() == 2);
    h.finish();
}

TEST_CASE("status --json lists the live agents and the tmux server", "[agents]") {
    Home h("ag-status");
    auto status = h.run({"status", "--json"});
    REQUIRE(status.exit_code == 0);
    CHECK(status.json()["agents"].empty());
    CHECK(status.json()["tmux"]["running"] == false);
    h.spawn("a", {"sleep", "1000"});
    auto b = h.spawn("b", {"sleep", "1000"});
    status = h.run({"status", "--json"});
    REQUIRE(status.exit_code == 0);
    auto doc = status.json();
    std::set<std::string> names;
    for (const auto& a : doc["agents"]) {
        names.insert(a["name"].get<std::string>());
        CHECK(a["status"] == "active");
    }
    CHECK(names == std::set<std::string>{"a", "b"});
    CHECK(doc["liveAgents"] == 2);
    CHECK(doc["tmux"]["running"] == true);
    CHECK(doc["tmux"]["socket"] == (h.env.home() / "tmux.sock").string());

    REQUIRE(::kill(static_cast<pid_t>(b["pid"].get<long>()), SIGKILL) == 0);
    h.wait_terminated("b");
    doc = h.run({"status", "--json"}).json();
    REQUIRE(doc["agents"].size() == 1);
    CHECK(doc["agents"][0]["name"] == "a");
    CHECK(doc["liveAgents"] == 1);
    CHECK(doc["totalAgents"] == 2);
    auto human = h.run({"status"});
    CHECK(human.exit_code == 0);
    CHECK_THAT(human.out, Catch::Contains("running"));
    h.finish();
    doc = h.run({"status", "--json"}).json();
    CHECK(doc["agents"].empty());
    CHECK(doc["tmux"]["running"] == false);
}

TEST_CASE("32 agents fit in one window, and all go with the server", "[agents]") {
    Home h("ag-many");
    std::set<std::string> panes;
    std::map<std::string, int> colors;
    for (int i = 0; i < 32; ++i) {
        auto doc = h.spawn("m" + std::to_string(i), {"sleep", "1000"});
        panes.insert(doc["paneId"].get<std::string>());
        ++colors[doc["color"].get<std::string>()];
    }
    CHECK(panes.size() == 32);
    CHECK(h.panes() == panes);
    CHECK(colors.size() == team::color_pool().size());  // every colour used, then shared
    auto windows = h.env.tmux({"list-windows", "-a", "-F", "#{session_name} #{window_panes}"});
    CHECK(windows.out == "ag-many 32\n");
    auto list = h.agents(false);
    CHECK(list.size() == 32);
    CHECK(Home::panes_of(list) == panes);
    CHECK(h.mark.alive().size() >= 64);  // 32 agents, 32 supervisors, the server

    h.env.tmux({"kill-server"});
    // 32 supervisors each record their agent's end (a write with its fsync) before they go:
    // on a loaded machine that takes seconds, so the bound is generous (a wait, not a sleep).
    CHECK(h.mark.none_alive_within(15000));
    auto all = h.agents(true);
    CHECK(all.size() == 32);
    for (const auto& a : all) CHECK(a["status"] == "terminated");
    h.finish();
}

TEST_CASE(
    "teams with prefix names keep their own sessions, and the last pane takes the session along",
    "[agents]") {
    Home h("ag-web");
    REQUIRE(h.env.run({"create", "ag-web-api", "--cwd", h.env.dir().string()}).exit_code == 0);
    // Four spawns into each team at once, the first of them starting the server.
    std::vector<Child> children;
    for (int i = 0; i < 4; ++i) {
        for (std::string team : {"ag-web", "ag-web-api"}) {
            children.push_back(h.env.start({"--team", team, "spawn", "w" + std::to_string(i),
                                            "--env", h.mark.entry(), "--", "sleep", "1000"},
                                           h.extra({{"TEAM_NAME", team}})));
        }
    }
    for (auto& c : children) {
        auto r = c.wait();
        INFO("stderr: " << r.err);
        CHECK(r.exit_code == 0);
    }
    auto sessions = [&] {
        std::map<std::string, int> out;
        auto r = h.env.tmux({"list-panes", "-a", "-F", "#{session_name}"});
        for (const auto& s : lines_of(r.out)) ++out[s];
        return out;
    };
    CHECK(sessions() == std::map<std::string, int>{{"ag-web", 4}, {"ag-web-api", 4}});
    auto web = h.agents(false);
    auto api = h.agents(false, {{"TEAM_NAME", "ag-web-api"}});
    CHECK(web.size() == 4);
    CHECK(api.size() == 4);
    auto listed = Home::panes_of(web);
    for (const auto& p : Home::panes_of(api)) listed.insert(p);
    CHECK(listed == h.panes());

    // A pane the user made in a team's session is not team's: it is never touched.
    auto user_pane = h.env.tmux(
        {"split-window", "-d", "-t", "=ag-web-api:", "-P", "-F", "#{pane_id}", "sleep 1000"});
    REQUIRE(user_pane.exit_code == 0);
    std::string mine = lines_of(user_pane.out).at(0);

    // The agents of ag-web end: its session goes, the server stays for the other team.
    for (const auto& a : web)
        REQUIRE(::kill(static_cast<pid_t>(a["pid"].get<long>()), SIGKILL) == 0);
    CHECK(eventually([&] { return sessions().count("ag-web") == 0; }));
    CHECK(sessions() == std::map<std::string, int>{{"ag-web-api", 5}});
    for (const auto& a : h.agents(true)) CHECK(a["status"] == "terminated");
    CHECK(h.run({"status", "--json"}).json()["tmux"]["running"] == true);

    // Those of ag-web-api end too: the user's pane stays, and with it the session.
    for (const auto& a : api)
        REQUIRE(::kill(static_cast<pid_t>(a["pid"].get<long>()), SIGKILL) == 0);
    CHECK(eventually([&] { return sessions() == std::map<std::string, int>{{"ag-web-api", 1}}; }));
    CHECK(h.panes() == std::set<std::string>{mine});
    CHECK(h.agents(false, {{"TEAM_NAME", "ag-web-api"}}).empty());
    CHECK(h.panes() == std::set<std::string>{mine});
    // Once that pane goes too, no session is left and the server is gone.
    CHECK(h.env.tmux({"kill-pane", "-t", mine}).exit_code == 0);
    CHECK(eventually([&] { return h.env.tmux({"list-sessions"}).exit_code != 0; }));
    CHECK(h.run({"status", "--json"}).json()["tmux"]["running"] == false);
    h.finish();
}

TEST_CASE("the last agent to end reaps the home's tmux server", "[agents][sanitize]") {
    Home h("ag-reap");
    auto a = h.spawn("a", {"sleep", "1000"});
    auto b = h.spawn("b", {"sh", "-c", "sleep 0.2; exit 1"});
    h.wait_terminated("b");
    // Its supervisor kills the pane before it records the end: no wait here.
    CHECK(h.panes() == std::set<std::string>{a["paneId"].get<std::string>()});
    REQUIRE(::kill(static_cast<pid_t>(a["pid"].get<long>()), SIGTERM) == 0);
    h.wait_terminated("a");
    CHECK(eventually([&] { return h.env.tmux({"list-sessions"}).exit_code != 0; }));
    CHECK(h.run({"status", "--json"}).json()["tmux"]["running"] == false);
    CHECK(h.mark.none_alive_within(3000));  // the server and every supervisor are gone
    h.finish();
}

TEST_CASE("reconciling a lost agent never kills a pane that now belongs to another agent",
          "[agents]") {
    // Pane ids start again at %0 on a new server: a record of a pane of the old server names a
    // pane of the new one.
    Home h("ag-reuse");
    auto old = h.spawn("old", {"sleep", "1000"});
    auto pane_pids = h.pane_pids();
    REQUIRE(pane_pids.count(old["paneId"]) == 1);
    REQUIRE(::kill(pane_pids[old["paneId"]], SIGKILL) == 0);  // its supervisor
    // The server goes before any team command looked at `old`.
    h.env.tmux({"kill-server"});
    REQUIRE(eventually([&] { return h.env.tmux({"list-sessions"}).exit_code != 0; }));
    auto fresh = h.spawn("fresh", {"sleep", "1000"});
    INFO("old pane " << old["paneId"] << ", fresh pane " << fresh["paneId"]);
    auto list = h.agents(true);
    CHECK(Home::find(list, "old")["status"] == "terminated");
    CHECK(Home::find(list, "old")["exitReason"] == "lost");
    CHECK(team::test::not_killed(static_cast<pid_t>(fresh["pid"].get<long>())));
    CHECK(h.agent("fresh")["status"] == "active");
    CHECK(h.panes() == std::set<std::string>{fresh["paneId"].get<std::string>()});
    CHECK(alive(static_cast<pid_t>(fresh["pid"].get<long>())));
    h.finish();
}

TEST_CASE("spawn looks first: the name and colour of an agent whose process ended are free",
          "[agents]") {
    Home h("ag-respawn");
    auto first = h.spawn("w", {"sleep", "1000"});
    auto pane_pids = h.pane_pids();
    // The supervisor and the agent both die; no team command has looked since.
    REQUIRE(::kill(pane_pids[first["paneId"]], SIGKILL) == 0);
    REQUIRE(::kill(static_cast<pid_t>(first["pid"].get<long>()), SIGKILL) == 0);
    REQUIRE(eventually([&] { return !alive(pane_pids[first["paneId"]]); }));
    auto again = h.try_spawn("w", {"sleep", "1000"});
    INFO("stdout: " << again.out << " stderr: " << again.err);
    CHECK(again.exit_code == 0);
    if (again.exit_code == 0) CHECK(again.json()["color"] == first["color"]);
    h.finish();
}

TEST_CASE("spawn refuses an --env that would replace the agent's identity", "[agents][input]") {
    Home h("ag-identity");
    auto out = h.env.dir() / "env.txt";
    auto r = h.try_spawn(
        "w",
        {"sh", "-c",
         "env > " + sq(out) + ".tmp && mv " + sq(out) + ".tmp " + sq(out) + "; exec sleep 1000"},
        {"--env", "TEAM_AGENT_ID=leader@ag-identity", "--env", "TEAM_HOME=/elsewhere", "--env",
         "TEAM_AGENT_NAME=leader"});
    INFO("stdout: " << r.out << " stderr: " << r.err);
    // Refused as bad input: nothing spawned.
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.out + r.err, Catch::Contains("--env cannot set TEAM_AGENT_ID"));
    CHECK(h.agents(true).empty());
    CHECK(h.panes().empty());
    CHECK_FALSE(fs::exists(out));
    // Repeated keys: the last one counts, and appears once.
    auto dup = h.env.dir() / "dup.txt";
    h.spawn(
        "dup",
        {"sh", "-c",
         "env > " + sq(dup) + ".tmp && mv " + sq(dup) + ".tmp " + sq(dup) + "; exec sleep 1000"},
        {"--env", "SAME_KEY=1", "--env", "SAME_KEY=2"});
    REQUIRE(eventually([&] { return fs::exists(dup); }));
    auto text = slurp(dup);
    CHECK(parse_env_file(text)["SAME_KEY"] == "2");
    CHECK(text.find("SAME_KEY=1") == std::string::npos);
    h.finish();
}

TEST_CASE("an agent that runs team in its pane acts as itself, not as the leader",
          "[agents][sanitize]") {
    Home h("ag-inside");
    auto rc = h.env.dir() / "rc.txt";
    auto list = h.env.dir() / "agents.json";
    std::string script = "\"$TEAM_BIN\" spawn sub -- sleep 1000 2>/dev/null; echo $? > " + sq(rc) +
                         ".tmp; \"$TEAM_BIN\" agents --json > " + sq(list) + ".tmp; mv " + sq(rc) +
                         ".tmp " + sq(rc) + "; mv " + sq(list) + ".tmp " + sq(list) +
                         "; exec sleep 1000";
    h.spawn("inner", {"sh", "-c", script}, {"--env", "TEAM_BIN=" + team::test::team_binary()});
    REQUIRE(eventually([&] { return fs::exists(rc) && fs::exists(list); }, bound(4000)));
    CHECK(slurp(rc) == "4\n");  // only the leader may spawn
    auto doc = Json::parse(slurp(list), nullptr, false);
    REQUIRE(doc.is_array());
    REQUIRE(doc.size() == 1);
    CHECK(doc[0]["agentId"] == "inner@ag-inside");
    CHECK(h.agents(true).size() == 1);
    h.finish();
}

TEST_CASE("prompt of an empty text is just Enter, and a terminated agent is refused", "[agents]") {
    Home h("ag-prompt-state");
    auto file = h.env.dir() / "typed.txt";
    h.spawn("typist", {"sh", "-c", "exec cat > " + sq(file)});
    CHECK(h.run({"prompt", "typist", ""}).exit_code == 0);
    CHECK(h.run({"prompt", "typist", "x"}).exit_code == 0);
    CHECK(wait_for_size(file, 3) == "\nx\n");

    h.spawn("gone", {"sh", "-c", "echo bye"});
    h.wait_terminated("gone");
    auto r = h.run({"prompt", "gone", "hello"});
    CHECK(r.exit_code == 4);  // SPEC 1.4: refused, not in this state (already terminated)
    CHECK_THAT(r.err, Catch::Contains("terminated"));
    CHECK_THAT(h.run({"logs", "gone"}).out, Catch::Contains("bye"));
    h.finish();
}

namespace {

// An executable stand-in at `path`: a shell script.
void stand_in(const std::filesystem::path& path, const std::string& body) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    ::chmod(path.c_str(), 0755);
}

}  // namespace

TEST_CASE(
    "doctor says what each agent's preset gives it, and a Gemini spawn its settings would be "
    "skipped in is refused, leaving nothing",
    "[agents][presets]") {
    TeamEnv env;
    namespace fs = std::filesystem;
    // Stand-ins on the PATH: an older Claude Code (its --version), Codex installed from npm (the
    // version in its package's package.json, found through the link on the PATH), Gemini CLI.
    fs::path bin = env.dir() / "bin";
    stand_in(bin / "claude", "echo '2.1.100 (Claude Code)'");
    fs::path codex_package = env.dir() / "lib" / "node_modules" / "@openai" / "codex";
    stand_in(codex_package / "bin" / "codex.js", "exit 1");
    std::ofstream(codex_package / "package.json")
        << R"({"name":"@openai/codex","version":"0.169.0"})";
    fs::create_symlink(codex_package / "bin" / "codex.js", bin / "codex");
    stand_in(bin / "gemini", "exec sleep 600");
    // The home below a directory others may write (as /tmp is), whatever TMPDIR says.
    fs::path shared = env.dir() / "shared";
    fs::create_directory(shared);
    fs::permissions(shared, fs::perms(01777));
    fs::path home = shared / "home";
    Env path{{"PATH", bin.string() + ":/usr/bin:/bin"}, {"TEAM_HOME", home.string()}};
    // Why Gemini would skip a file there: that directory, or, for another user than root, the
    // file's owner.
    std::string why = ::geteuid() == 0 ? shared.string() + "' is writable by others" : "not root";

    auto doctor = env.run({"doctor", "--json"}, path);
    INFO(doctor.out << doctor.err);
    Json doc = doctor.json();
    std::map<std::string, Json> checks;
    for (const auto& c : doc["checks"]) checks[c["check"].get<std::string>()] = c;
    REQUIRE(checks.count("claude"));
    CHECK(checks["claude"]["status"] == "warn");
    CHECK_THAT(checks["claude"]["message"].get<std::string>(), Catch::Contains("2.1.100") &&
                                                                   Catch::Contains("older than") &&
                                                                   Catch::Contains("2.1.197"));
    REQUIRE(checks.count("codex"));
    CHECK(checks["codex"]["status"] == "ok");
    CHECK_THAT(checks["codex"]["message"].get<std::string>(),
               Catch::Contains("codex 0.169.0") && Catch::Contains("default_tools_approval_mode"));
    REQUIRE(checks.count("gemini"));
    CHECK(checks["gemini"]["status"] == "warn");
    CHECK_THAT(checks["gemini"]["message"].get<std::string>(),
               Catch::Contains("refused in this home") && Catch::Contains(why));
    CHECK_THAT(checks["gemini"]["hint"].get<std::string>(), Catch::Contains("use a home"));
    CHECK(doctor.exit_code == 0);  // warnings, no failure

    // The spawn itself: refused (exit 2) with the reason and the fix; no agent, file or pane.
    REQUIRE(env.run({"create", "gem"}, path).exit_code == 0);
    auto r = env.run({"spawn", "g1", "--team", "gem", "--preset", "gemini"}, path);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("Gemini CLI would skip the preset's settings file") &&
                          Catch::Contains(why) && Catch::Contains("Fix: "));
    CHECK(env.run({"agents", "--all", "--team", "gem", "--json"}, path).json().empty());
    CHECK_FALSE(fs::exists(home / "presets"));
    CHECK_FALSE(fs::exists(home / "tmux.sock"));
}
