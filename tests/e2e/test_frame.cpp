// The command frame: global options, home/team/caller resolution, errors and help (SPEC 1).
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "base/duration.hpp"
#include "base/error.hpp"
#include "ops/operation.hpp"
#include "ops/serve_record.hpp"
#include "tests/support/process.hpp"

using team::test::TeamEnv;

TEST_CASE("global options stand before or after the command", "[frame][sanitize]") {
    TeamEnv env;
    auto before = env.run({"--json", "create", "web"});
    CHECK(before.exit_code == 0);
    CHECK(before.json()["name"] == "web");
    auto after = env.run({"create", "api", "--json"});
    CHECK(after.exit_code == 0);
    CHECK(after.json()["name"] == "api");
    CHECK(env.run({"status", "--team", "api", "--json"}).json()["name"] == "api");
    CHECK(env.run({"-t", "web", "status", "--json"}).json()["name"] == "web");
}

TEST_CASE("the home comes from --home, TEAM_HOME, XDG_STATE_HOME, then HOME", "[frame][sanitize]") {
    TeamEnv env;
    auto dir = env.dir();
    auto flag = dir / "flag";
    CHECK(env.run({"--home", flag.string(), "create", "a"}).exit_code == 0);
    CHECK(std::filesystem::exists(flag / "team.db"));
    CHECK(env.run({"create", "b"}, {{"TEAM_HOME", (dir / "env").string()}}).exit_code == 0);
    CHECK(std::filesystem::exists(dir / "env" / "team.db"));
    CHECK(env.run({"create", "c"}, {{"TEAM_HOME", ""}, {"XDG_STATE_HOME", (dir / "xdg").string()}})
              .exit_code == 0);
    CHECK(std::filesystem::exists(dir / "xdg" / "team" / "team.db"));
    CHECK(env.run({"create", "d"},
                  {{"TEAM_HOME", ""}, {"XDG_STATE_HOME", ""}, {"HOME", (dir / "h").string()}})
              .exit_code == 0);
    CHECK(std::filesystem::exists(dir / "h" / ".local" / "state" / "team" / "team.db"));
    // --home wins over TEAM_HOME.
    auto r = env.run({"--home", flag.string(), "list", "--json"},
                     {{"TEAM_HOME", (dir / "env").string()}});
    CHECK(r.json()[0]["name"] == "a");
}

TEST_CASE("with several teams and none named, the error lists them", "[frame]") {
    TeamEnv env;
    auto none = env.run({"status"});
    CHECK(none.exit_code == 2);
    CHECK_THAT(none.err, Catch::Contains("team create"));
    REQUIRE(env.run({"create", "web"}).exit_code == 0);
    REQUIRE(env.run({"create", "api"}).exit_code == 0);
    auto r = env.run({"status"});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err,
               Catch::Contains("web") && Catch::Contains("api") && Catch::Contains("--team"));
    CHECK(env.run({"status", "--json"}, {{"TEAM_NAME", "api"}}).json()["name"] == "api");
    CHECK(env.run({"status", "--json", "--as", "leader@web"}).json()["name"] == "web");
}

TEST_CASE("the caller comes from --as or TEAM_AGENT_ID and must be a member", "[frame][sanitize]") {
    TeamEnv env;
    REQUIRE(env.run({"create", "web"}).exit_code == 0);
    REQUIRE(env.run({"create", "api"}).exit_code == 0);
    auto ghost = env.run({"delete", "web"}, {{"TEAM_AGENT_ID", "ghost@web"}});
    CHECK(ghost.exit_code == 3);
    CHECK_THAT(ghost.err, Catch::Contains("'ghost' is not a live member of team 'web'"));
    auto cross = env.run({"delete", "web", "--as", "leader@api"});
    CHECK(cross.exit_code == 2);
    CHECK_THAT(cross.err, Catch::Contains("belongs to team 'api'"));
    auto bad = env.run({"delete", "web", "--as", "$(id)"});
    CHECK(bad.exit_code == 2);
    CHECK(env.run({"list", "--json"}).json().size() == 2);
    CHECK(env.run({"delete", "web", "--as", "leader@web"}).exit_code == 0);
}

TEST_CASE("an unknown command is a usage error with a did-you-mean", "[frame]") {
    TeamEnv env;
    auto r = env.run({"crate", "web"});
    CHECK(r.exit_code == 2);
    CHECK(r.err ==
          "team: error: unknown command 'crate'; did you mean 'create'? (see 'team --help')\n");
    auto j = env.run({"--json", "lsit"});
    CHECK(j.exit_code == 2);
    CHECK(j.json()["code"] == "usage");
    CHECK(j.json()["success"] == false);
    auto opt = env.run({"list", "--no-such-option"});
    CHECK(opt.exit_code == 2);
    CHECK_THAT(opt.err, Catch::StartsWith("team: error:"));
    auto none = env.run({});
    CHECK(none.exit_code == 2);
    CHECK_THAT(none.err, Catch::Contains("Usage"));
}

TEST_CASE("every command has complete help", "[frame]") {
    TeamEnv env;
    auto top = env.run({"--help"});
    CHECK(top.exit_code == 0);
    for (const char* cmd : {"create", "list", "status", "delete", "activity"}) {
        CHECK_THAT(top.out, Catch::Contains(cmd));
        auto help = env.run({cmd, "--help"});
        INFO(cmd);
        CHECK(help.exit_code == 0);
        CHECK_THAT(help.out, Catch::Contains("Usage") && Catch::Contains("Example"));
        CHECK_THAT(help.out, Catch::Contains("--json"));  // global options are listed too
    }
    for (std::vector<std::string> cmd : std::vector<std::vector<std::string>>{{"shell", "start"},
                                                                              {"shell", "kill"},
                                                                              {"shell", "output"},
                                                                              {"spawn"},
                                                                              {"run"},
                                                                              {"prompt"}}) {
        cmd.push_back("--help");
        auto help = env.run(cmd);
        INFO(cmd[0] << " " << cmd[1]);
        CHECK(help.exit_code == 0);
        CHECK_THAT(help.out, Catch::Contains("Example") && Catch::Contains("--json"));
    }
    CHECK_THAT(env.run({"--version"}).out, Catch::Contains("0.1"));
}

TEST_CASE("commands that only read do not create a home", "[frame][sanitize]") {
    TeamEnv env;
    auto list = env.run({"list", "--json"});
    CHECK(list.exit_code == 0);
    CHECK(list.json().empty());
    CHECK(env.run({"status"}).exit_code == 2);
    CHECK(env.run({"status", "web"}).exit_code == 3);
    CHECK(env.run({"activity", "--team", "web"}).exit_code == 3);
    CHECK(env.run({"delete", "web"}).exit_code == 3);
    CHECK_FALSE(std::filesystem::exists(env.home()));
}

TEST_CASE("a relative XDG_STATE_HOME is ignored, as the XDG spec says", "[frame]") {
    TeamEnv env;
    auto r = env.run({"create", "web"}, {{"TEAM_HOME", ""},
                                         {"XDG_STATE_HOME", "relative/state"},
                                         {"HOME", (env.dir() / "h").string()}});
    CHECK(r.exit_code == 0);
    CHECK(std::filesystem::exists(env.dir() / "h" / ".local" / "state" / "team" / "team.db"));
}

TEST_CASE("the caller becomes the leader of the team it creates", "[frame][pg]") {
    TeamEnv env;
    CHECK(env.run({"create", "web", "--as", "boss", "--json"}).json()["leader"] == "boss@web");
    CHECK(env.run({"create", "api", "--json"}, {{"TEAM_AGENT_ID", "ann@web"}}).json()["leader"] ==
          "ann@api");
    CHECK(
        env.run({"create", "ops", "--as", "boss", "--leader", "carl", "--json"}).json()["leader"] ==
        "carl@ops");
}

TEST_CASE("option values are checked with clear messages", "[frame][input]") {
    TeamEnv env;
    REQUIRE(env.run({"create", "web"}).exit_code == 0);
    for (const char* bad : {"0", "1.5", "-3", "x", "99999999999999999999"}) {
        auto r = env.run({"activity", "--limit", bad});
        INFO(bad);
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::StartsWith("team: error: --limit: must be a whole number") &&
                              Catch::EndsWith("(see 'team activity --help')\n"));
    }
    auto missing = env.run({"create"});
    CHECK(missing.exit_code == 2);
    CHECK(missing.err == "team: error: NAME is required (see 'team create --help')\n");
}

TEST_CASE("a description from stdin loses one trailing newline only", "[frame][input]") {
    TeamEnv env;
    auto r =
        env.start({"create", "web", "--description", "-", "--json"}, {}, "two\nlines\n\n").wait();
    REQUIRE(r.exit_code == 0);
    CHECK(r.json()["description"] == "two\nlines\n");
}

// Docs that say what the code does (issue 38): guide.md's pasted `team --help` is the help, and
// the help and the man page name every exit code of base/error.hpp's table.
TEST_CASE("the guide's pasted help, the help's and the man page's exit codes match the code",
          "[frame]") {
    TeamEnv env;
    auto help = env.run({"--help"});
    REQUIRE(help.exit_code == 0);
    std::ifstream in(team::test::source_dir() / "docs" / "guide.md");
    REQUIRE(in);
    std::string line, pasted;
    bool inside = false;
    while (std::getline(in, line)) {
        if (line == "$ team --help") {
            inside = true;
            continue;
        }
        if (inside && line.rfind("$ ", 0) == 0) break;
        if (inside) pasted += line + "\n";
    }
    // The first line that differs, named with its number, rather than both texts whole.
    std::istringstream guide_lines(pasted), help_lines(help.out);
    for (int n = 1;; ++n) {
        std::string a, b;
        bool more_a = static_cast<bool>(std::getline(guide_lines, a));
        bool more_b = static_cast<bool>(std::getline(help_lines, b));
        if (!more_a && !more_b) break;
        if (more_a && more_b && a == b) continue;
        FAIL_CHECK("docs/guide.md's pasted `team --help` differs at its line "
                   << n << "\n  guide.md:    " << (more_a ? a : "(ended)")
                   << "\n  team --help: " << (more_b ? b : "(ended)"));
        break;
    }
    auto man = env.run({"__man"});
    REQUIRE(man.exit_code == 0);
    auto status = man.out.substr(man.out.find(".SH EXIT STATUS"));
    status = status.substr(0, status.find(".SH ", 4));
    for (const auto& kind : team::kErrorKinds) {
        std::string name(kind.name);
        std::replace(name.begin(), name.end(), '_', ' ');
        INFO(kind.name);
        CHECK_THAT(help.out, Catch::Contains(std::to_string(kind.exit) + " " + name));
        CHECK_THAT(status, Catch::Contains(std::to_string(kind.exit)) &&
                               Catch::Contains(std::string(kind.name)));
    }
}

namespace {

std::string read_doc(const std::string& name) {
    std::ifstream in(team::test::source_dir() / "docs" / name);
    REQUIRE(in);
    std::stringstream text;
    text << in.rdbuf();
    // A statement may break across lines: every run of white space as one space.
    return std::regex_replace(text.str(), std::regex("\\s+"), " ");
}

// A default as the docs state it, as the table writes it: "30 s" is 30s, "16 MiB" is 16777216.
std::string as_declared(std::string value) {
    value.erase(std::remove(value.begin(), value.end(), '`'), value.end());
    std::smatch m;
    if (std::regex_match(value, m, std::regex("(\\d+) ?MiB"))) {
        return std::to_string(std::stoll(m[1]) << 20);
    }
    if (std::regex_match(value, m, std::regex("(\\d+) (ms|s|m|h)"))) return m.str(1) + m.str(2);
    return value;
}

// The defaults the table declares for a parameter of this name, over every operation.
std::set<std::string> declared_defaults(std::string name) {
    std::replace(name.begin(), name.end(), '-', '_');
    std::set<std::string> out;
    for (const auto* op : team::ops::operations()) {
        for (const auto& p : op->params) {
            if (p.name == name && !p.default_text.empty()) out.emplace(p.default_text);
        }
    }
    if (name == "listen") out.insert(team::ops::default_listen());  // serve, outside the table
    return out;
}

}  // namespace

TEST_CASE("every default the docs state is the one the operations table declares", "[frame]") {
    // "`--grace` (default 5s)", "`--type` is a word ... (default `message`)",
    // "| `--listen ADDR:PORT` | where to listen (default `127.0.0.1:7733`; ...)"
    std::regex option(
        "`--([a-z-]+)[^`]*`[^(`.*]{0,80}(?:`(?!--)[^`]*`[^(`.*]{0,20}){0,4}"
        "\\(default ([^;)]+)[;)]");
    int checked = 0;
    for (const char* doc : {"guide.md", "shutdown.md"}) {
        auto text = read_doc(doc);
        for (std::sregex_iterator it(text.begin(), text.end(), option), end; it != end; ++it) {
            std::string name = (*it)[1], stated = as_declared((*it)[2]);
            INFO(doc << ": " << it->str());
            auto declared = declared_defaults(name);
            CHECK(declared.count(stated) == 1);
            ++checked;
        }
    }
    // docs/mcp.md gives a duration's default in the milliseconds a tool takes.
    auto mcp = read_doc("mcp.md");
    std::regex millis("`([a-zA-Z_]+)` in milliseconds \\(default (\\d+)\\)");
    for (std::sregex_iterator it(mcp.begin(), mcp.end(), millis), end; it != end; ++it) {
        INFO("mcp.md: " << it->str());
        std::set<std::string> ms;
        for (const auto& d : declared_defaults((*it)[1])) {
            ms.insert(std::to_string(team::parse_duration(d, "default").count()));
        }
        CHECK(ms.count((*it)[2]) == 1);
        ++checked;
    }
    // The statements this test knows of (13 when written) are found: a changed wording is not a
    // silent pass.
    CHECK(checked >= 13);
}

namespace {

// The text of every source file of the house (not the tests, the benches or what was built).
std::string house_sources() {
    std::string all;
    auto root = team::test::source_dir();
    for (const char* room : {"base", "state", "proc", "tmux", "git", "tasks", "team", "shells",
                             "sessions", "hosts", "acp", "ops", "cli", "mcp", "http"}) {
        for (const auto& e : std::filesystem::recursive_directory_iterator(root / room)) {
            auto ext = e.path().extension();
            if (ext != ".cpp" && ext != ".hpp") continue;
            std::ifstream in(e.path());
            std::stringstream text;
            text << in.rdbuf();
            all += text.str();
        }
    }
    return all;
}

// The names a section of the man page gives, one per .TP (\fBNAME\fR or \fINAME\fR).
std::set<std::string> man_section(const std::string& man, const std::string& section) {
    auto at = man.find(".SH " + section + "\n");
    REQUIRE(at != std::string::npos);
    auto text = man.substr(at, man.find("\n.SH ", at + 4) - at);
    std::set<std::string> names;
    std::regex entry("\\.TP\\n\\\\f[BI]([^\\\\]+)\\\\fR");
    for (std::sregex_iterator it(text.begin(), text.end(), entry), end; it != end; ++it) {
        names.insert((*it)[1]);
    }
    return names;
}

}  // namespace

TEST_CASE("the man page's ENVIRONMENT and FILES are what the code reads and writes", "[frame]") {
    TeamEnv env;
    auto man = env.run({"__man"});
    REQUIRE(man.exit_code == 0);
    auto code = house_sources();

    // Every variable the code reads or sets for its children, as a string literal of the house
    // ("TEAM_HOME", "TEAM_WORKTREE=").
    // Knobs for the tests only are left out of the page on purpose.
    const std::set<std::string> test_knobs{"TEAM_LINK_IDLE_S", "TEAM_SERVE_HEADER_TIMEOUT_MS"};
    std::set<std::string> variables;
    std::regex variable("\"((?:TEAM|XDG)_[A-Z_]*[A-Z]|NO_COLOR)[\"=]");
    for (std::sregex_iterator it(code.begin(), code.end(), variable), end; it != end; ++it) {
        if (!test_knobs.count((*it)[1])) variables.insert((*it)[1]);
    }
    auto documented = man_section(man.out, "ENVIRONMENT");
    for (const auto& v : variables) {
        INFO("read or set by the code, not in the man page's ENVIRONMENT: " << v);
        CHECK(documented.count(v) == 1);
    }
    for (const auto& v : documented) {
        INFO("in the man page's ENVIRONMENT, nowhere in the code: " << v);
        CHECK(variables.count(v) == 1);
    }

    // Every file and folder the code makes under the home (`home / "NAME"`), and back: every
    // HOME/NAME of the page is a name the code spells.
    std::set<std::string> files;
    std::regex under_home("home(?:\\(\\)|_)? / \"([a-z][a-z_.]*)\"");
    for (std::sregex_iterator it(code.begin(), code.end(), under_home), end; it != end; ++it) {
        files.insert((*it)[1]);
    }
    std::set<std::string> listed;
    for (const auto& f : man_section(man.out, "FILES")) {
        if (f.rfind("HOME/", 0) != 0) continue;  // the default home itself
        auto name = f.substr(5);
        if (!name.empty() && name.back() == '/') name.pop_back();
        listed.insert(name);
        INFO("in the man page's FILES, nowhere in the code: " << f);
        CHECK(code.find("\"" + name + "\"") != std::string::npos);
    }
    for (const auto& f : files) {
        INFO("made under the home by the code, not in the man page's FILES: HOME/" << f);
        CHECK(listed.count(f) == 1);
    }
    CHECK(variables.size() >= 10);
    CHECK(files.size() >= 10);
}
