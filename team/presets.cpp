#include "team/presets.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "base/names.hpp"
#include "base/programs.hpp"
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

}  // namespace

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
    std::vector<std::string> flags;
    // The installed `team` when it is this binary, so the config outlives a rebuild.
    std::string binary = installed_or_self("team", t.team_binary);
    nlohmann::json server = {{"command", binary}, {"args", mcp_args(t)}};
    std::string instructions = agent_instructions(t.agent, t.team);
    if (t.preset == "claude") {
        // --mcp-config takes JSON text as well as files; --append-system-prompt keeps Claude
        // Code's own system prompt.
        nlohmann::json config = {{"mcpServers", {{"team", server}}}};
        flags = {"--mcp-config", config.dump(), "--append-system-prompt", instructions};
    } else if (t.preset == "codex") {
        // -c overrides ~/.codex/config.toml, a value parsed as TOML.
        flags = {"-c", "mcp_servers.team.command=" + toml_string(binary),
                 "-c", "mcp_servers.team.args=" + toml_array(mcp_args(t)),
                 "-c", "developer_instructions=" + toml_string(instructions)};
    } else {
        // Gemini CLI has no flag for an MCP server: it reads a system settings file named by
        // GEMINI_CLI_SYSTEM_SETTINGS_PATH (and skips it when a directory above it is writable
        // by others). Its instructions come from the server's `instructions`, the same text.
        w.file = t.home / "presets" / (t.team + "." + t.agent + ".gemini.json");
        w.file_content = nlohmann::json{{"mcpServers", {{"team", server}}}}.dump(2) + "\n";
        w.env.push_back("GEMINI_CLI_SYSTEM_SETTINGS_PATH=" + w.file.string());
    }
    w.argv.insert(w.argv.begin() + 1, flags.begin(), flags.end());
    return w;
}

}  // namespace team
