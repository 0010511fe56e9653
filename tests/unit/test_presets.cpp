// Spawn presets (team/presets): the flags each coding agent gets, quoting of hostile paths and
// names, and the refusal of an unknown preset. The e2e proof that the wired server acts as the
// agent is tests/mcp ("spawn --preset wires team mcp ...").
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "team/presets.hpp"

using namespace team;
using Json = nlohmann::json;

namespace {

PresetTarget target(const std::string& preset) {
    return {preset, "/opt/my \"team\"/team", "/home/u/.team", "web", "w1"};
}

const std::vector<std::string> kServerArgs{"--home", "/home/u/.team", "mcp", "--team",
                                           "web",    "--as",          "w1"};

}  // namespace

TEST_CASE("the claude preset adds --mcp-config and --append-system-prompt after the program",
          "[presets]") {
    auto w = wire_preset(target("claude"), {"claude", "--model", "opus"});
    REQUIRE(w.argv.size() == 7);
    CHECK(w.argv[0] == "claude");
    CHECK(w.argv[1] == "--mcp-config");
    auto config = Json::parse(w.argv[2]);
    CHECK(config["mcpServers"]["team"]["command"] == "/opt/my \"team\"/team");
    CHECK(config["mcpServers"]["team"]["args"] == kServerArgs);
    CHECK(w.argv[3] == "--append-system-prompt");
    CHECK(w.argv[4] == kAgentInstructions);
    CHECK(w.argv[5] == "--model");
    CHECK(w.env.empty());
    CHECK(w.file.empty());
}

TEST_CASE("the codex preset overrides its config with TOML values", "[presets]") {
    auto w = wire_preset(target("codex"), {});
    REQUIRE(w.argv.size() == 7);
    CHECK(w.argv[0] == "codex");
    CHECK(w.argv[1] == "-c");
    // A TOML basic string: the quotes in the path escaped.
    CHECK(w.argv[2] == R"(mcp_servers.team.command="/opt/my \"team\"/team")");
    CHECK(w.argv[4] ==
          R"(mcp_servers.team.args=["--home","/home/u/.team","mcp","--team","web","--as","w1"])");
    CHECK(w.argv[6].rfind("developer_instructions=\"", 0) == 0);
}

TEST_CASE("the gemini preset names a settings file in the home", "[presets]") {
    auto w = wire_preset(target("gemini"), {"gemini", "--skip-trust"});
    CHECK(w.argv == std::vector<std::string>{"gemini", "--skip-trust"});
    CHECK(w.file == "/home/u/.team/presets/web.w1.gemini.json");
    CHECK(w.env == std::vector<std::string>{
                       "GEMINI_CLI_SYSTEM_SETTINGS_PATH=/home/u/.team/presets/web.w1.gemini.json"});
    auto settings = Json::parse(w.file_content);
    CHECK(settings["mcpServers"]["team"]["args"] == kServerArgs);
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
