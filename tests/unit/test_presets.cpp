// Spawn presets (team/presets): the flags each coding agent gets (the team's server allowed, and
// only it), quoting of hostile paths and names, the refusal of an unknown preset, and where
// Gemini CLI reads a settings file. The e2e proof that the wired server acts as the
// agent is tests/mcp ("spawn --preset wires team mcp ..."). The agent's instructions are one text
// (issue 24): the presets', the MCP server's and the one docs/mcp.md quotes.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "mcp/server.hpp"
#include "team/agent_instructions.hpp"
#include "team/presets.hpp"
#include "tests/support/process.hpp"

using namespace team;
using Json = nlohmann::json;

namespace {

PresetTarget target(const std::string& preset) {
    return {preset, "/opt/my \"team\"/team", "/home/u/.team", "web", "w1"};
}

const std::vector<std::string> kServerArgs{"--home", "/home/u/.team", "mcp", "--team",
                                           "web",    "--as",          "w1"};

}  // namespace

TEST_CASE("the claude preset adds --mcp-config, --allowedTools and --append-system-prompt after "
          "the program",
          "[presets]") {
    auto w = wire_preset(target("claude"), {"claude", "--model", "opus"});
    REQUIRE(w.argv.size() == 11);
    CHECK(w.argv[0] == "claude");
    CHECK(w.argv[1] == "--mcp-config");
    auto config = Json::parse(w.argv[2]);
    CHECK(config["mcpServers"]["team"]["command"] == "/opt/my \"team\"/team");
    CHECK(config["mcpServers"]["team"]["args"] == kServerArgs);
    // Every tool of the server `team`, and nothing else; a flag follows (both take values up
    // to the next flag).
    CHECK(w.argv[3] == "--allowedTools");
    CHECK(w.argv[4] == "mcp__team");
    CHECK(w.argv[5] == "--append-system-prompt");
    CHECK(w.argv[6] == agent_instructions("w1", "web"));
    // The hooks that report what it does (SPEC 17), each a `team __report` quoted for sh.
    CHECK(w.argv[7] == "--settings");
    auto settings = Json::parse(w.argv[8]);
    for (const char* event : {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse",
                              "PermissionRequest", "Notification", "Stop"}) {
        INFO(event);
        REQUIRE(settings["hooks"].contains(event));
        CHECK(settings["hooks"][event][0]["hooks"][0]["command"] ==
              R"('/opt/my "team"/team' --home '/home/u/.team' __report 'w1@web' claude )" +
                  std::string(event));
    }
    CHECK(settings["hooks"]["PreToolUse"][0]["matcher"] == "*");
    CHECK(w.argv[9] == "--model");
    CHECK(w.env.empty());
    CHECK(w.file.empty());
}

TEST_CASE("the codex preset overrides its config with TOML values", "[presets]") {
    auto w = wire_preset(target("codex"), {});
    REQUIRE(w.argv.size() >= 11);
    CHECK(w.argv[0] == "codex");
    CHECK(w.argv[1] == "-c");
    // A TOML basic string: the quotes in the path escaped.
    CHECK(w.argv[2] == R"(mcp_servers.team.command="/opt/my \"team\"/team")");
    CHECK(w.argv[4] ==
          R"(mcp_servers.team.args=["--home","/home/u/.team","mcp","--team","web","--as","w1"])");
    // The server's tools approved, and only its tools.
    CHECK(w.argv[6] == R"(mcp_servers.team.default_tools_approval_mode="approve")");
    CHECK(w.argv[8].rfind("developer_instructions=\"", 0) == 0);
    // Its notify program reports each turn's end (SPEC 17).
    CHECK(w.argv[10] ==
          R"(notify=["/opt/my \"team\"/team","--home","/home/u/.team","__report","w1@web","codex","notify"])");
}

TEST_CASE("the gemini preset names a settings file in the home", "[presets]") {
    auto w = wire_preset(target("gemini"), {"gemini", "--skip-trust"});
    CHECK(w.argv == std::vector<std::string>{"gemini", "--skip-trust"});
    CHECK(w.file == "/home/u/.team/presets/web.w1.gemini.json");
    CHECK(w.env == std::vector<std::string>{
                       "GEMINI_CLI_SYSTEM_SETTINGS_PATH=/home/u/.team/presets/web.w1.gemini.json"});
    auto settings = Json::parse(w.file_content);
    CHECK(settings["mcpServers"]["team"]["args"] == kServerArgs);
    // Trusted: its tools are offered and run without asking; no other server, nothing else.
    CHECK(settings["mcpServers"]["team"]["trust"] == true);
    CHECK(settings["mcpServers"].size() == 1);
    // And the hooks that report what it does (SPEC 17); nothing else.
    CHECK(settings.size() == 2);
    CHECK(settings["hooks"]["BeforeAgent"][0]["hooks"][0]["command"] ==
          R"('/opt/my "team"/team' --home '/home/u/.team' __report 'w1@web' gemini BeforeAgent)");
    CHECK(settings["hooks"]["BeforeAgent"][0]["hooks"][0]["timeout"] == 10000);
}

TEST_CASE("Gemini CLI's test of where its settings file is: root's, and no directory above "
          "writable by group or others",
          "[presets]") {
    namespace fs = std::filesystem;
    // Under the system's temporary directory (mode 1777): skipped, naming it.
    test::TempDir tmp;
    auto why = gemini_settings_skipped(tmp.path() / "presets" / "web.w1.gemini.json");
    REQUIRE(why);
    if (::geteuid() != 0) {
        CHECK(why->find("not root") != std::string::npos);
        return;  // nothing else can be read as another user
    }
    CHECK(*why == "'" + fs::path(tmp.path()).parent_path().string() +
                      "' is writable by others (mode 1777)");
    // A directory of root's, mode 0755, out of the system's temporary directory (the build's):
    // read; made writable by its group, then a symbolic link to it from a directory that is fine,
    // skipped.
    fs::path base = team::test::test_build_file("presets-unit");
    fs::create_directories(base);
    fs::permissions(base, fs::perms(0755));
    if (auto above = gemini_settings_skipped(base / "x")) {
        WARN("the build directory itself is not one Gemini CLI trusts: " << *above);
        return;
    }
    fs::path dir = base / ("d" + std::to_string(::getpid()));
    fs::create_directories(dir);
    fs::permissions(dir, fs::perms(0755));
    CHECK_FALSE(gemini_settings_skipped(dir / "presets" / "a.gemini.json"));
    fs::permissions(dir, fs::perms(0775));
    auto group = gemini_settings_skipped(dir / "presets" / "a.gemini.json");
    REQUIRE(group);
    CHECK(*group == "'" + dir.string() + "' is writable by its group (mode 775)");
    // Through a link from a good directory to one under the temporary directory: the real
    // place counts too.
    fs::path real = tmp.path() / "real";
    fs::create_directory(real);
    fs::path link = base / ("l" + std::to_string(::getpid()));
    fs::create_directory_symlink(real, link);
    auto linked = gemini_settings_skipped(link / "a.gemini.json");
    REQUIRE(linked);
    CHECK(*linked == "'" + fs::path(tmp.path()).parent_path().string() +
                         "' is writable by others (mode 1777)");
    // The refusal says why and what to do.
    auto refusal = gemini_settings_refusal(tmp.path() / "presets" / "x.json");
    REQUIRE(refusal);
    CHECK(refusal->find("Gemini CLI would skip the preset's settings file") == 0);
    CHECK(refusal->find("Fix: use a home") != std::string::npos);
    fs::remove(link);
    fs::remove_all(dir);
}

TEST_CASE("an unknown preset is a usage error naming the ones there are", "[presets]") {
    try {
        wire_preset(target("claud"), {});
        FAIL("no error");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::usage);
        CHECK(std::string(e.what()).find("claude, codex, gemini") != std::string::npos);
    }
}

namespace {

// The `instructions` a server acting as `identity` gives at initialize.
std::string server_instructions(const ops::Identity& identity) {
    std::mutex mutex;
    std::vector<std::string> out;
    {
        mcp::Server server(mcp::ServerOptions{.identity = identity, .push_inbox = false},
                           [&](const std::string& line) {
                               std::lock_guard lock(mutex);
                               out.push_back(line);
                           });
        server.handle_line(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":)"
                           R"({"protocolVersion":"2025-06-18","capabilities":{}}})");
    }
    REQUIRE(out.size() == 1);
    return Json::parse(out[0])["result"]["instructions"].get<std::string>();
}

}  // namespace

TEST_CASE("the presets, the MCP server and docs/mcp.md give an agent one text of instructions",
          "[presets][mcp]") {
    std::string text = agent_instructions("w1", "web");
    // What it must tell: answer a shutdown request, read the inbox on a notice, work and report.
    for (const char* must : {"shutdown_request", "shutdown_respond", "\"approve\"", "\"confirm\"",
                             "\"reject\"", "with a reason", "inbox_read", "[team]",
                             "a message for you in the team inbox", "task_claim", "task_done",
                             "message_send", "w1", "web"}) {
        INFO("the text tells " << must);
        CHECK(text.find(must) != std::string::npos);
    }
    auto claude = wire_preset(target("claude"), {});
    CHECK(claude.argv[6] == text);
    auto codex = wire_preset(target("codex"), {});
    const std::string key = "developer_instructions=";
    REQUIRE(codex.argv[8].rfind(key, 0) == 0);
    CHECK(Json::parse(codex.argv[8].substr(key.size())) == text);  // a TOML basic string
    // The server as a preset starts it (--team web --as w1), and as name@team.
    CHECK(server_instructions({"/nonexistent-home", "web", "w1"}) == text);
    CHECK(server_instructions({"/nonexistent-home", std::nullopt, "w1@web"}) == text);
    // A server acting as the leader: the same rules, a general first sentence.
    std::string general = server_instructions({"/nonexistent-home", std::nullopt, std::nullopt});
    CHECK(general == agent_instructions("", ""));
    CHECK(general.find("shutdown_respond") != std::string::npos);

    // docs/mcp.md quotes it (for NAME of TEAM), as a block of "> " lines.
    std::ifstream in(team::test::source_dir() / "docs" / "mcp.md");
    REQUIRE(in);
    std::string line, quoted;
    bool inside = false;
    while (std::getline(in, line)) {
        if (line.find("<!-- agent instructions -->") != std::string::npos) {
            inside = !inside;
            continue;
        }
        if (!inside) continue;
        REQUIRE(line.rfind("> ", 0) == 0);
        quoted += (quoted.empty() ? "" : " ") + line.substr(2);
    }
    CHECK(quoted == agent_instructions("NAME", "TEAM"));
}
