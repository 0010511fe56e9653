// Spawn presets (team/presets): the flags each coding agent gets (the team's server allowed, and
// only it), quoting of hostile paths and names, the refusal of an unknown preset, and where
// Gemini CLI reads a settings file. The e2e proof that the wired server acts as the
// agent is tests/mcp ("spawn --preset wires team mcp ..."). The agent's instructions are one text
// (issue 24): the presets', the MCP server's and the one docs/mcp.md quotes.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>

#include "base/error.hpp"
#include "mcp/server.hpp"
#include "team/agent_instructions.hpp"
#include "team/hook_reports.hpp"
#include "team/presets.hpp"
#include "tests/support/process.hpp"

using namespace team;
using Json = nlohmann::json;

namespace {

PresetTarget target(const std::string& preset) {
    return {preset, "/opt/my \"team\"/team", "/home/u/.team", "web", "w1", {}, {}};
}

const std::vector<std::string> kServerArgs{"--home", "/home/u/.team", "mcp", "--team",
                                           "web",    "--as",          "w1"};

}  // namespace

TEST_CASE(
    "the claude preset adds --mcp-config, --allowedTools and --append-system-prompt after "
    "the program",
    "[presets]") {
    auto w = wire_preset(target("claude"), {"claude", "--model", "opus"});
    REQUIRE(w.argv.size() == 13);
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
    // Its hooks report to team (SPEC 17): each event one command, the tool events for every tool.
    CHECK(w.argv[7] == "--settings");
    auto hooks = Json::parse(w.argv[8])["hooks"];
    CHECK(hooks.size() == 7);
    for (const char* event : {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse",
                              "PermissionRequest", "Notification", "Stop"}) {
        INFO(event);
        REQUIRE(hooks.contains(event));
        auto hook = hooks[event][0]["hooks"][0];
        CHECK(hook["type"] == "command");
        CHECK(hook["timeout"] == 10);  // seconds
        CHECK(hook["command"] ==
              R"('/opt/my "team"/team' --home '/home/u/.team' __report 'w1@web' )"
              R"(claude )" +
                  std::string(event));
    }
    CHECK(hooks["PermissionRequest"][0]["matcher"] == "*");
    CHECK_FALSE(hooks["Stop"][0].contains("matcher"));
    // Its conversation's id, chosen up front (SPEC 19), then the command's own arguments.
    CHECK(w.argv[9] == "--session-id");
    CHECK(w.conversation.kind == "claude");
    CHECK(w.conversation.id == w.argv[10]);
    CHECK(w.argv[11] == "--model");
    CHECK(w.env.empty());
    CHECK(w.file.empty());
}

TEST_CASE("the codex preset overrides its config with TOML values", "[presets]") {
    auto w = wire_preset(target("codex"), {});
    REQUIRE(w.argv.size() == 24);
    CHECK(w.argv[0] == "codex");
    CHECK(w.argv[1] == "-c");
    // A TOML basic string: the quotes in the path escaped.
    CHECK(w.argv[2] == R"(mcp_servers.team.command="/opt/my \"team\"/team")");
    CHECK(w.argv[4] ==
          R"(mcp_servers.team.args=["--home","/home/u/.team","mcp","--team","web","--as","w1"])");
    // The server's tools approved, and only its tools.
    CHECK(w.argv[6] == R"(mcp_servers.team.default_tools_approval_mode="approve")");
    CHECK(w.argv[8].rfind("developer_instructions=\"", 0) == 0);
    // Its hooks (SPEC 17), in Claude Code's shape, every tool (no matcher), run though no person
    // trusted them: Codex skips them silently otherwise. No notify: it fires for Codex's title
    // thread too.
    int at = 9;
    for (const char* event : {"SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest",
                              "PostToolUse", "Stop", "Interrupt"}) {
        INFO(event);
        CHECK(w.argv[at] == "-c");
        CHECK(w.argv[at + 1] ==
              std::string("hooks.") + event + R"(=[{hooks=[{type="command",command=)" +
                  R"("'/opt/my \"team\"/team' --home '/home/u/.team' __report 'w1@web' codex )" +
                  event + R"(",timeout=10}]}])");
        at += 2;
    }
    CHECK(w.argv[23] == "--dangerously-bypass-hook-trust");
    for (const auto& arg : w.argv) CHECK(arg.rfind("notify=", 0) == std::string::npos);
}

TEST_CASE("the gemini preset names a settings file in the home", "[presets]") {
    auto w = wire_preset(target("gemini"), {"gemini", "--skip-trust"});
    REQUIRE(w.conversation.id);
    CHECK(w.argv ==
          std::vector<std::string>{"gemini", "--session-id", *w.conversation.id, "--skip-trust"});
    CHECK(w.file == "/home/u/.team/presets/web.w1.gemini.json");
    CHECK(w.env == std::vector<std::string>{
                       "GEMINI_CLI_SYSTEM_SETTINGS_PATH=/home/u/.team/presets/web.w1.gemini.json"});
    auto settings = Json::parse(w.file_content);
    CHECK(settings["mcpServers"]["team"]["args"] == kServerArgs);
    // Trusted: its tools are offered and run without asking; no other server, nothing else.
    CHECK(settings["mcpServers"]["team"]["trust"] == true);
    CHECK(settings["mcpServers"].size() == 1);
    // Its hooks (SPEC 17), their timeout in milliseconds; nothing else.
    CHECK(settings.size() == 2);
    auto hooks = settings["hooks"];
    CHECK(hooks.size() == 6);
    for (const char* event :
         {"SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "Notification", "AfterAgent"}) {
        INFO(event);
        REQUIRE(hooks.contains(event));
        auto hook = hooks[event][0]["hooks"][0];
        CHECK(hook["timeout"] == 10000);
        CHECK(hook["command"].get<std::string>().ends_with(" __report 'w1@web' gemini " +
                                                           std::string(event)));
    }
    CHECK(hooks["BeforeTool"][0]["matcher"] == "*");
}

TEST_CASE(
    "Gemini CLI's test of where its settings file is: root's, and no directory above "
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
    for (const char* must :
         {"shutdown_request", "shutdown_respond", "\"approve\"", "\"confirm\"", "\"reject\"",
          "with a reason", "inbox_read", "[team]", "a message for you in the team inbox",
          "task_claim", "task_done", "message_send", "w1", "web"}) {
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

// What the hooks report, from the payloads the agents sent in tests/agents (Claude Code 2.1.197,
// Codex 0.169.0, Gemini CLI 0.61.0; the fields team reads, and a few it does not).
TEST_CASE("the hooks' payloads as the agents send them make these reports", "[presets]") {
    auto report = [](const char* kind, const char* event, const char* payload) {
        auto r = hook_report(kind, event, Json::parse(payload));
        REQUIRE(r);
        CHECK(r->source == "hooks");
        CHECK(r->event == event);
        return *r;
    };
    const Json bash = {{"kind", "permission"}, {"tool", "Bash"}, {"command", "echo ran > ran.txt"}};
    for (const char* kind : {"claude", "codex"}) {
        INFO(kind);
        auto prompt = report(kind, "UserPromptSubmit",
                             R"({"session_id":"s","hook_event_name":"UserPromptSubmit",)"
                             R"("permission_mode":"default","prompt":"write the file"})");
        CHECK(prompt.state == "working");
        CHECK(prompt.prompt_taken);
        auto asks = report(kind, "PermissionRequest",
                           R"({"session_id":"s","hook_event_name":"PermissionRequest",)"
                           R"("tool_name":"Bash","tool_input":{"command":"echo ran > ran.txt",)"
                           R"("description":"write ran.txt"},"permission_suggestions":[]})");
        CHECK(asks.state == "waiting");
        CHECK(asks.waiting_on == bash);
        CHECK_FALSE(asks.only_while_waiting);
        auto after = report(kind, "PostToolUse",
                            R"({"hook_event_name":"PostToolUse","tool_name":"Bash",)"
                            R"("tool_input":{"command":"echo ran > ran.txt"},"tool_response":""})");
        CHECK(after.state == "working");
        CHECK_FALSE(after.prompt_taken);
        auto stop = report(kind, "Stop",
                           R"({"hook_event_name":"Stop","stop_hook_active":false,)"
                           R"("last_assistant_message":"done"})");
        CHECK(stop.state == "idle");
        CHECK(report(kind, "SessionStart", R"({"source":"startup"})").state == "idle");
    }
    // Codex's Interrupt (Escape, also at its permission dialog: the answer no): idle.
    CHECK(report("codex", "Interrupt",
                 R"({"session_id":"s","turn_id":"t","hook_event_name":"Interrupt",)"
                 R"("model":"gpt-5","permission_mode":"default"})")
              .state == "idle");
    // Claude Code's Notification of the dialog, 6 s on: a wait already reported, no new one.
    auto late = report("claude", "Notification",
                       R"({"hook_event_name":"Notification","message":"Claude needs your )"
                       R"(permission","notification_type":"permission_prompt"})");
    CHECK(late.state == "waiting");
    CHECK(late.waiting_on.is_null());
    CHECK(late.only_while_waiting);
    CHECK(report("claude", "Notification", R"({"notification_type":"idle_prompt"})").state ==
          "idle");
    // Gemini CLI: its Notification is the only word of its dialog.
    auto prompt = report("gemini", "BeforeAgent",
                         R"({"hook_event_name":"BeforeAgent","prompt":"write the file"})");
    CHECK(prompt.state == "working");
    CHECK(prompt.prompt_taken);
    auto asks = report("gemini", "Notification",
                       R"({"hook_event_name":"Notification","notification_type":"ToolPermission",)"
                       R"("message":"Tool Confirm Shell Command requires execution","details":)"
                       R"({"type":"exec","title":"Confirm Shell Command","command":)"
                       R"j("echo ran > ran.txt","rootCommand":"echo, redirection (>)"}})j");
    CHECK(asks.state == "waiting");
    CHECK(asks.waiting_on == Json{{"kind", "permission"},
                                  {"tool", "Confirm Shell Command"},
                                  {"command", "echo ran > ran.txt"}});
    CHECK_FALSE(asks.only_while_waiting);
    CHECK(report("gemini", "AfterTool", R"({"tool_name":"run_shell_command"})").state == "working");
    CHECK(report("gemini", "AfterAgent", R"({"prompt_response":"done"})").state == "idle");
    CHECK_FALSE(hook_report("gemini", "SessionEnd", Json::object()));
}

TEST_CASE("a preset's conversation: chosen, resumed, or the command's own (SPEC 19)", "[presets]") {
    auto t = target("claude");
    auto first = wire_preset(t, {});
    auto second = wire_preset(t, {});
    REQUIRE(first.conversation.id);
    REQUIRE(second.conversation.id);
    CHECK(*first.conversation.id != *second.conversation.id);
    CHECK(std::regex_match(*first.conversation.id,
                           std::regex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-"
                                      "[0-9a-f]{12}")));
    // Resumed: --resume ID in its place; started again under the same id: --session-id ID.
    t.resume = "11111111-2222-4333-8444-555555555555";
    auto resumed = wire_preset(t, {});
    CHECK(std::find(resumed.argv.begin(), resumed.argv.end(), "--resume") != resumed.argv.end());
    CHECK(std::find(resumed.argv.begin(), resumed.argv.end(), "--session-id") ==
          resumed.argv.end());
    CHECK(resumed.argv.back() == *t.resume);
    t.resume.reset();
    t.session = "11111111-2222-4333-8444-555555555555";
    auto again = wire_preset(t, {});
    CHECK(again.conversation.id == t.session);
    CHECK(again.argv.back() == *t.session);
    // A command that names its own conversation keeps it; team learns its id from the hooks.
    auto own = wire_preset(target("claude"), {"claude", "--continue"});
    CHECK_FALSE(own.conversation.id);
    CHECK(std::find(own.argv.begin(), own.argv.end(), "--session-id") == own.argv.end());
    // Codex: no id up front; resumed by `codex resume ID` before the preset's flags.
    auto codex = target("codex");
    CHECK_FALSE(wire_preset(codex, {}).conversation.id);
    codex.resume = "0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee";
    auto resumed_codex = wire_preset(codex, {});
    REQUIRE(resumed_codex.argv.size() > 3);
    CHECK(resumed_codex.argv[0] == "codex");
    CHECK(resumed_codex.argv[1] == "resume");
    CHECK(resumed_codex.argv[2] == *codex.resume);
    CHECK(resumed_codex.argv[3] == "-c");
    auto gemini = target("gemini");
    gemini.resume = "11111111-2222-4333-8444-555555555555";
    auto resumed_gemini = wire_preset(gemini, {"gemini", "-m", "gemini-2.5-flash"});
    CHECK(resumed_gemini.argv ==
          std::vector<std::string>{"gemini", "--resume", *gemini.resume, "-m", "gemini-2.5-flash"});
}
