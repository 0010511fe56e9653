#include "team/presets.hpp"

#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string_view>

#include "base/error.hpp"
#include "base/names.hpp"
#include "base/programs.hpp"
#include "base/text.hpp"
#include "team/agent_instructions.hpp"

namespace team {

const std::vector<std::string>& preset_names() {
    static const std::vector<std::string> names{"claude", "codex", "gemini"};
    return names;
}

namespace {

// `team --home HOME mcp --team TEAM --as NAME`: the server acts as the agent whatever
// environment its harness gives it.
std::vector<std::string> mcp_args(const PresetTarget& t) {
    return {"--home", t.home.string(), "mcp", "--team", t.team, "--as", t.agent};
}

// A TOML basic string: JSON's escapes (\" \\ \n \uXXXX) are TOML's too.
std::string toml_string(const std::string& text) {
    return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string toml_array(const std::vector<std::string>& items) {
    std::string out = "[";
    for (const auto& item : items) out += (out.size() > 1 ? "," : "") + toml_string(item);
    return out + "]";
}

// The shell command a hook of the agent runs: `team --home HOME __report NAME@TEAM KIND EVENT`,
// the hook's JSON on its stdin (team/hook_reports.hpp). Quoted for sh, whatever the home holds.
std::string report_command(const std::string& binary, const PresetTarget& t,
                           const std::string& event) {
    return shell_quote(binary) + " --home " + shell_quote(t.home.string()) + " __report " +
           shell_quote(t.agent + "@" + t.team) + " " + t.preset + " " + event;
}

// Hooks in the form Claude Code's settings and Gemini CLI's take: each event, one command,
// ended after `timeout` (Claude Code counts it in seconds, Gemini CLI in milliseconds).
nlohmann::json hooks_of(const std::string& binary, const PresetTarget& t,
                        const std::vector<std::string>& events,
                        const std::vector<std::string>& tool_events, int timeout) {
    nlohmann::json hooks = nlohmann::json::object();
    for (const auto& e : events) {
        nlohmann::json entry = {{"hooks",
                                 {{{"type", "command"},
                                   {"command", report_command(binary, t, e)},
                                   {"timeout", timeout}}}}};
        if (std::find(tool_events.begin(), tool_events.end(), e) != tool_events.end())
            entry["matcher"] = "*";
        hooks[e] = nlohmann::json::array({entry});
    }
    return hooks;
}

// Whether the command as asked names its own conversation (then team does not choose one).
bool names_conversation(const std::vector<std::string>& argv,
                        std::initializer_list<std::string_view> flags) {
    for (std::size_t i = 1; i < argv.size(); ++i) {
        for (auto flag : flags) {
            if (argv[i] == flag || argv[i].rfind(std::string(flag) + "=", 0) == 0) return true;
        }
    }
    return false;
}

// Claude Code's and Gemini CLI's conversation flags: `--resume ID`, or `--session-id ID` (a new
// id unless one is given), unless the command names its own.
std::vector<std::string> conversation_flags(const PresetTarget& t,
                                            const std::vector<std::string>& argv,
                                            std::initializer_list<std::string_view> own,
                                            ConversationPlan& plan) {
    if (names_conversation(argv, own)) return {};
    if (t.resume) {
        plan.id = t.resume;
        return {"--resume", *t.resume};
    }
    plan.id = t.session ? *t.session : new_uuid();
    return {"--session-id", *plan.id};
}

}  // namespace

std::string new_uuid() {
    unsigned char b[16];
    std::size_t got = 0;
    while (got < sizeof b) {
        ssize_t n = ::getrandom(b + got, sizeof b - got, 0);
        if (n > 0)
            got += static_cast<std::size_t>(n);
        else if (errno != EINTR)
            throw failed("no random bytes for a session id");
    }
    b[6] = static_cast<unsigned char>((b[6] & 0x0f) | 0x40);
    b[8] = static_cast<unsigned char>((b[8] & 0x3f) | 0x80);
    char text[37];
    std::snprintf(text, sizeof text,
                  "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                  b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                  b[14], b[15]);
    return text;
}

PresetWiring wire_preset(const PresetTarget& t, const std::vector<std::string>& argv) {
    const auto& names = preset_names();
    if (std::find(names.begin(), names.end(), t.preset) == names.end()) {
        std::string list;
        for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
        throw usage_error("unknown preset " + quote(t.preset) + did_you_mean(t.preset, names) +
                          " (one of " + list + ")");
    }
    PresetWiring w;
    w.argv = argv.empty() ? std::vector<std::string>{t.preset} : argv;
    w.conversation.kind = t.preset;
    std::vector<std::string> flags;
    // The installed `team` when it is this binary, so the config outlives a rebuild.
    std::string binary = installed_or_self("team", t.team_binary);
    nlohmann::json server = {{"command", binary}, {"args", mcp_args(t)}};
    std::string instructions = agent_instructions(t.agent, t.team);
    if (t.preset == "claude") {
        // --mcp-config takes JSON text as well as files; --allowedTools mcp__team allows every
        // tool of the server `team` and nothing else (each of --mcp-config and --allowedTools
        // takes values up to the next flag: a flag follows each); --append-system-prompt keeps
        // Claude Code's own system prompt.
        nlohmann::json config = {{"mcpServers", {{"team", server}}}};
        // --settings takes JSON text too, merged over the user's: the hooks that report what
        // the agent does (SPEC 17), and its status line's command, which alone gets Claude
        // Code's own cost figure (SPEC 18: `cost.total_cost_usd` on its stdin, after each
        // response); it prints nothing, so the status line is blank. (A second --settings
        // would replace this one, hooks and all.)
        nlohmann::json settings = {
            {"hooks", hooks_of(binary, t,
                               {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse",
                                "PermissionRequest", "Notification", "Stop"},
                               {"PreToolUse", "PostToolUse", "PermissionRequest"}, 10)},  // seconds
            {"statusLine",
             {{"type", "command"}, {"command", report_command(binary, t, "StatusLine")}}}};
        flags = {"--mcp-config",           config.dump(), "--allowedTools", "mcp__team",
                 "--append-system-prompt", instructions,  "--settings",     settings.dump()};
        auto own = conversation_flags(
            t, w.argv, {"--session-id", "--resume", "-r", "--continue", "-c"}, w.conversation);
        flags.insert(flags.end(), own.begin(), own.end());
    } else if (t.preset == "codex") {
        // -c overrides ~/.codex/config.toml, a value parsed as TOML. The server's tools are
        // approved (Codex's TUI asks before each call otherwise); its own tools ask as set.
        flags = {"-c", "mcp_servers.team.command=" + toml_string(binary),
                 "-c", "mcp_servers.team.args=" + toml_array(mcp_args(t)),
                 "-c", "mcp_servers.team.default_tools_approval_mode=" + toml_string("approve"),
                 "-c", "developer_instructions=" + toml_string(instructions)};
        // Its hooks, in Claude Code's shape (`hooks.EVENT = [{hooks = [{type, command}]}]`, no
        // matcher: every tool), report what it does (SPEC 17). Codex skips hooks it has not
        // been told to trust, silently, unless --dangerously-bypass-hook-trust: these are
        // team's own. No `notify`: it also fires for Codex's title thread, whose turn ends
        // while the agent's own may wait on a permission; Stop is the turn's end, Interrupt
        // its end by the person (Escape: at a permission dialog, the answer no).
        for (const char* event : {"SessionStart", "UserPromptSubmit", "PreToolUse",
                                  "PermissionRequest", "PostToolUse", "Stop", "Interrupt"}) {
            flags.push_back("-c");
            std::string command = toml_string(report_command(binary, t, event));
            flags.push_back(std::string("hooks.") + event +
                            R"(=[{hooks=[{type="command",command=)" + command +
                            ",timeout=10}]}]");  // seconds
        }
        flags.push_back("--dangerously-bypass-hook-trust");
        // Its conversation is a thread its hooks name (SPEC 19): resumed by `codex resume ID`.
        if (t.resume) {
            w.conversation.id = t.resume;
            flags.insert(flags.begin(), {"resume", *t.resume});
        }
    } else {
        // Gemini CLI has no flag for an MCP server: it reads a system settings file named by
        // GEMINI_CLI_SYSTEM_SETTINGS_PATH (where it reads it: gemini_settings_skipped). A
        // trusted server's tools run without confirmation; without trust Gemini CLI does not
        // offer them at all. Its instructions come from the server's `instructions`.
        w.file = t.home / "presets" / (t.team + "." + t.agent + ".gemini.json");
        server["trust"] = true;
        nlohmann::json settings = {
            {"mcpServers", {{"team", server}}},
            {"hooks", hooks_of(binary, t,
                               {"SessionStart", "BeforeAgent", "BeforeTool", "AfterTool",
                                "Notification", "AfterAgent"},
                               {"BeforeTool", "AfterTool"}, 10000)}};  // milliseconds
        w.file_content = settings.dump(2) + "\n";
        w.env.push_back("GEMINI_CLI_SYSTEM_SETTINGS_PATH=" + w.file.string());
        flags = conversation_flags(t, w.argv, {"--session-id", "--resume", "-r"}, w.conversation);
    }
    w.argv.insert(w.argv.begin() + 1, flags.begin(), flags.end());
    return w;
}

namespace {

namespace fs = std::filesystem;

std::string mode_text(mode_t mode) {
    char text[8];
    std::snprintf(text, sizeof text, "%o", static_cast<unsigned>(mode & 07777));
    return text;
}

// Gemini CLI's test of one directory above the file: why it fails, if it does. A directory that
// is not there yet is made by team, as this user, mode 0700.
std::optional<std::string> directory_skipped(const fs::path& dir) {
    struct stat link {};
    if (::lstat(dir.c_str(), &link) != 0) return std::nullopt;
    if (S_ISLNK(link.st_mode) && link.st_uid != 0) {
        return quote(dir.string()) + " is a symbolic link owned by uid " +
               std::to_string(link.st_uid) + ", not root";
    }
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) return std::nullopt;
    if (st.st_uid != 0) {
        return quote(dir.string()) + " belongs to uid " + std::to_string(st.st_uid) + ", not root";
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        std::string who = (st.st_mode & S_IWOTH) ? "others" : "its group";
        return quote(dir.string()) + " is writable by " + who + " (mode " + mode_text(st.st_mode) +
               ")";
    }
    return std::nullopt;
}

std::optional<std::string> ancestors_skipped(const fs::path& file) {
    for (fs::path dir = file.parent_path();; dir = dir.parent_path()) {
        if (auto why = directory_skipped(dir)) return why;
        if (dir == dir.root_path() || dir.empty()) return std::nullopt;
    }
}

}  // namespace

std::optional<std::string> gemini_settings_skipped(const fs::path& file) {
    fs::path absolute = fs::absolute(file).lexically_normal();
    if (::geteuid() != 0) {
        return "the file would belong to uid " + std::to_string(::geteuid()) + ", not root";
    }
    if (auto why = ancestors_skipped(absolute)) return why;
    std::error_code ec;
    fs::path real = fs::weakly_canonical(absolute, ec);
    if (!ec && real != absolute) return ancestors_skipped(real);
    return std::nullopt;
}

std::string gemini_settings_fix() {
    return ::geteuid() != 0
               ? "Gemini CLI reads a settings file team writes only when team runs as root; as "
                 "another user, give Gemini the team's server in your own settings and spawn it "
                 "without --preset (docs/mcp.md, \"Gemini CLI\")"
               : "use a home no directory above which is writable by group or others, such as "
                 "the default one (~/.local/state/team)";
}

std::optional<std::string> gemini_settings_refusal(const fs::path& file) {
    auto why = gemini_settings_skipped(file);
    if (!why) return std::nullopt;
    return "Gemini CLI would skip the preset's settings file " + quote(file.string()) + ": " +
           *why +
           ". It reads one only when root owns it and every directory above it, none "
           "writable by group or others, and would start without the team's tools. Fix: " +
           gemini_settings_fix();
}

}  // namespace team
