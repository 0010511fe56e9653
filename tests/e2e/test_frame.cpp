// The command frame: global options, home/team/caller resolution, errors and help (SPEC 1).
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>

#include "base/error.hpp"
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
    CHECK(pasted == help.out);
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
