#include "sessions/session_state.hpp"

#include <algorithm>
#include <array>

#include "base/text.hpp"

namespace team::sessions {

namespace {

// `set -o` options kept between commands: those that change what a command does. Left out:
// the interactive ones (emacs, vi, history, monitor, ...), and noexec and onecmd, which would
// stop the shell from running what comes after the command.
constexpr std::array<std::string_view, 17> kSetOptions = {"allexport",
                                                          "braceexpand",
                                                          "errexit",
                                                          "errtrace",
                                                          "functrace",
                                                          "hashall",
                                                          "interactive-comments",
                                                          "keyword",
                                                          "noclobber",
                                                          "noglob",
                                                          "nolog",
                                                          "nounset",
                                                          "physical",
                                                          "pipefail",
                                                          "posix",
                                                          "verbose",
                                                          "xtrace"};

// `shopt` options kept: the same rule. Names this bash does not know are never stored: they
// are never on in its $BASHOPTS, so they never differ.
constexpr std::array<std::string_view, 25> kShoptOptions = {"assoc_expand_once",
                                                            "cdable_vars",
                                                            "dotglob",
                                                            "execfail",
                                                            "expand_aliases",
                                                            "extglob",
                                                            "extquote",
                                                            "failglob",
                                                            "globasciiranges",
                                                            "globskipdots",
                                                            "globstar",
                                                            "gnu_errfmt",
                                                            "inherit_errexit",
                                                            "lastpipe",
                                                            "localvar_inherit",
                                                            "localvar_unset",
                                                            "nocaseglob",
                                                            "nocasematch",
                                                            "noexpand_translation",
                                                            "nullglob",
                                                            "patsub_replacement",
                                                            "shift_verbose",
                                                            "sourcepath",
                                                            "varredir_close",
                                                            "xpg_echo"};

constexpr std::array<std::string_view, 45> kUntracked = {
    "BASH", "BASHOPTS", "BASHPID", "BASH_ALIASES", "BASH_ARGC", "BASH_ARGV", "BASH_ARGV0",
    "BASH_CMDS", "BASH_COMMAND", "BASH_EXECUTION_STRING", "BASH_LINENO", "BASH_REMATCH",
    "BASH_SOURCE", "BASH_SUBSHELL", "BASH_VERSINFO", "BASH_VERSION", "BASH_XTRACEFD", "COLUMNS",
    "COPROC", "DIRSTACK", "EPOCHREALTIME", "EPOCHSECONDS", "EUID", "FUNCNAME", "GROUPS", "HISTCMD",
    "HOSTNAME", "HOSTTYPE", "LINENO", "LINES", "MACHTYPE", "OSTYPE", "PIPESTATUS", "PPID", "PWD",
    "RANDOM", "SECONDS", "SHELLOPTS", "SHLVL", "SRANDOM", "UID", "_",
    // team's identity and markers: they belong to whoever runs each command.
    "TEAM_AGENT_ID", "TEAM_NAME", "TEAM_HOME"};

std::set<std::string> split_colons(std::string_view text) {
    std::set<std::string> out;
    while (!text.empty()) {
        auto end = text.find(':');
        if (end != 0) out.emplace(text.substr(0, end));
        if (end == std::string_view::npos) break;
        text.remove_prefix(end + 1);
    }
    return out;
}

// Where the word that starts at `i` ends: a "..." or $'...' string, or up to a space, a
// newline or (in an array) `]`/`)`. `i` is past the end when the text is cut short.
std::size_t skip_quoted(std::string_view s, std::size_t i) {
    if (s[i] == '"') {
        for (++i; i < s.size() && s[i] != '"'; ++i) {
            if (s[i] == '\\') ++i;
        }
        return i + 1;
    }
    if (s[i] == '$' && i + 1 < s.size() && s[i + 1] == '\'') {
        for (i += 2; i < s.size() && s[i] != '\''; ++i) {
            if (s[i] == '\\') ++i;
        }
        return i + 1;
    }
    if (s[i] == '\'') {
        auto end = s.find('\'', i + 1);
        return end == std::string_view::npos ? s.size() + 1 : end + 1;
    }
    return i + 1;
}

std::string decode_double_quoted(std::string_view body) {
    std::string out;
    for (std::size_t i = 0; i < body.size(); ++i) {
        if (body[i] == '\\' && i + 1 < body.size() &&
            std::string_view("\"\\$`\n").find(body[i + 1]) != std::string_view::npos) {
            ++i;
        }
        out += body[i];
    }
    return out;
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

void append_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

// The body of a $'...' string, as bash's ANSI-C quoting writes it.
std::string decode_ansi_c(std::string_view body) {
    std::string out;
    for (std::size_t i = 0; i < body.size(); ++i) {
        if (body[i] != '\\' || i + 1 >= body.size()) {
            out += body[i];
            continue;
        }
        char c = body[++i];
        switch (c) {
            case 'a':
                out += '\a';
                break;
            case 'b':
                out += '\b';
                break;
            case 'e':
            case 'E':
                out += '\x1b';
                break;
            case 'f':
                out += '\f';
                break;
            case 'n':
                out += '\n';
                break;
            case 'r':
                out += '\r';
                break;
            case 't':
                out += '\t';
                break;
            case 'v':
                out += '\v';
                break;
            case 'c':
                if (i + 1 < body.size()) out += static_cast<char>(body[++i] & 0x1F);
                break;
            case 'x': {
                int value = 0, digits = 0;
                while (digits < 2 && i + 1 < body.size() && hex_digit(body[i + 1]) >= 0) {
                    value = value * 16 + hex_digit(body[++i]);
                    ++digits;
                }
                out += static_cast<char>(value);
                break;
            }
            case 'u':
            case 'U': {
                unsigned value = 0;
                int digits = 0, most = c == 'u' ? 4 : 8;
                while (digits < most && i + 1 < body.size() && hex_digit(body[i + 1]) >= 0) {
                    value = value * 16 + static_cast<unsigned>(hex_digit(body[++i]));
                    ++digits;
                }
                append_utf8(out, value);
                break;
            }
            default:
                if (c >= '0' && c <= '7') {
                    int value = c - '0', digits = 1;
                    while (digits < 3 && i + 1 < body.size() && body[i + 1] >= '0' &&
                           body[i + 1] <= '7') {
                        value = value * 8 + (body[++i] - '0');
                        ++digits;
                    }
                    out += static_cast<char>(value);
                } else {
                    out += c;  // \\ \' \" \?
                }
        }
    }
    return out;
}

template <std::size_t N>
bool listed(const std::array<std::string_view, N>& list, std::string_view name) {
    return std::find(list.begin(), list.end(), name) != list.end();
}

template <typename Map>
void diff_maps(const Map& before, const Map& after,
               std::map<std::string, typename Map::mapped_type>& set, std::set<std::string>& unset,
               bool (*skip)(const std::string&)) {
    for (const auto& [name, value] : after) {
        if (skip(name)) continue;
        auto it = before.find(name);
        if (it == before.end() || !(it->second == value)) set[name] = value;
    }
    for (const auto& [name, value] : before) {
        if (!skip(name) && !after.count(name)) unset.insert(name);
    }
}

bool is_ours(const std::string& name) {
    return name.rfind("__team_", 0) == 0;
}

}  // namespace

bool is_untracked_variable(const std::string& name) {
    return is_ours(name) || listed(kUntracked, name) || name.rfind("TEAM_SHELL_", 0) == 0 ||
           name.rfind("TEAM_SESSION", 0) == 0;
}

std::string bash_quote(std::string_view text) {
    return shell_quote(text);
}

std::map<std::string, ShellVariable> parse_declarations(std::string_view dump) {
    std::map<std::string, ShellVariable> vars;
    std::size_t i = 0;
    while (i < dump.size()) {
        std::size_t start = i;
        // declare -FLAGS NAME[=VALUE]\n
        if (dump.compare(i, 9, "declare -") != 0) {
            auto nl = dump.find('\n', i);
            i = nl == std::string_view::npos ? dump.size() : nl + 1;
            continue;
        }
        i += 9;
        auto space = dump.find(' ', i);
        if (space == std::string_view::npos) break;
        std::string attrs(dump.substr(i, space - i));
        if (attrs == "-") attrs.clear();
        i = space + 1;
        std::size_t name_start = i;
        while (i < dump.size() && dump[i] != '=' && dump[i] != '\n') ++i;
        std::string name(dump.substr(name_start, i - name_start));
        if (i < dump.size() && dump[i] == '=') {
            ++i;
            // The value: quoted strings, or an array's ( [k]="v" ... ), up to the newline.
            while (i < dump.size() && dump[i] != '\n') i = skip_quoted(dump, i);
        }
        if (i > dump.size()) break;  // cut short
        vars[name] = ShellVariable{attrs, std::string(dump.substr(start, i - start))};
        i = i < dump.size() ? i + 1 : i;
    }
    return vars;
}

std::optional<std::string> declared_value(const ShellVariable& var) {
    if (var.attrs.find_first_of("aA") != std::string::npos) return std::nullopt;
    std::string_view decl = var.decl;
    auto eq = decl.find('=');
    // The name never holds '=' or a space; the first '=' after "declare -x " ends it.
    if (eq == std::string_view::npos) return std::nullopt;
    std::string_view value = decl.substr(eq + 1);
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
        return decode_double_quoted(value.substr(1, value.size() - 2));
    }
    if (value.size() >= 3 && value.substr(0, 2) == "$'" && value.back() == '\'') {
        return decode_ansi_c(value.substr(2, value.size() - 3));
    }
    return std::string(value);
}

ShellCapture parse_capture(std::string_view bytes) {
    std::vector<std::string_view> tokens;
    while (!bytes.empty()) {
        auto nul = bytes.find('\0');
        if (nul == std::string_view::npos) break;  // a token cut short is dropped
        tokens.push_back(bytes.substr(0, nul));
        bytes.remove_prefix(nul + 1);
    }
    ShellCapture capture;
    std::size_t i = 0;
    auto next = [&]() -> std::optional<std::string_view> {
        if (i >= tokens.size()) return std::nullopt;
        return tokens[i++];
    };
    while (i < tokens.size()) {
        if (tokens[i++] != "snap") continue;
        auto which = next();
        if (!which) break;
        ShellSnapshot snap;
        bool complete = false;
        while (auto key = next()) {
            if (*key == "end") {
                complete = true;
                break;
            }
            if (*key == "fn" || *key == "alias") {
                auto name = next(), a = next();
                if (!name || !a) break;
                if (*key == "alias") {
                    snap.aliases[std::string(*name)] = std::string(*a);
                    continue;
                }
                auto text = next();
                if (!text) break;
                snap.functions[std::string(*name)] =
                    ShellFunction{std::string(*text), a->find('x') != std::string_view::npos};
                continue;
            }
            auto value = next();
            if (!value) break;
            if (*key == "status") {
                snap.status = std::atoi(std::string(*value).c_str());
            } else if (*key == "cwd") {
                snap.cwd = *value;
            } else if (*key == "opts") {
                snap.options_on = split_colons(*value);
            } else if (*key == "shopt") {
                snap.shopt_on = split_colons(*value);
            } else if (*key == "umask") {
                snap.umask = std::string(value->substr(0, value->find('\n')));
            } else if (*key == "vars") {
                snap.vars = parse_declarations(*value);
            }
        }
        if (!complete) break;
        if (*which == "before") {
            capture.before = std::move(snap);
        } else if (*which == "after") {
            capture.after = std::move(snap);
        }
    }
    return capture;
}

bool StateChanges::empty() const {
    return !cwd && set_vars.empty() && unset_vars.empty() && set_functions.empty() &&
           unset_functions.empty() && set_aliases.empty() && unset_aliases.empty() &&
           options.empty() && shopt.empty() && !umask;
}

StateChanges diff(const ShellSnapshot& before, const ShellSnapshot& after,
                  const SessionState& restored) {
    StateChanges changes;
    if (after.cwd != before.cwd) changes.cwd = after.cwd;
    if (after.umask != before.umask) changes.umask = after.umask;
    diff_maps(before.vars, after.vars, changes.set_vars, changes.unset_vars,
              &is_untracked_variable);
    diff_maps(before.functions, after.functions, changes.set_functions, changes.unset_functions,
              &is_ours);
    auto never = [](const std::string&) { return false; };
    diff_maps(before.aliases, after.aliases, changes.set_aliases, changes.unset_aliases, +never);
    for (auto name : kSetOptions) {
        std::string key(name);
        // The script switches the stored options on inside the eval, after the snapshot.
        auto stored = restored.options.find(key);
        bool was =
            stored != restored.options.end() ? stored->second : before.options_on.count(key) > 0;
        bool now = after.options_on.count(key) > 0;
        if (was != now) changes.options[key] = now;
    }
    for (auto name : kShoptOptions) {
        std::string key(name);
        bool was = before.shopt_on.count(key) > 0;
        bool now = after.shopt_on.count(key) > 0;
        if (was != now) changes.shopt[key] = now;
    }
    return changes;
}

void apply(SessionState& state, const StateChanges& changes) {
    if (changes.cwd) state.cwd = *changes.cwd;
    for (const auto& [name, var] : changes.set_vars) {
        state.vars[name] = var;
        state.unset.erase(name);
    }
    for (const auto& name : changes.unset_vars) {
        state.vars.erase(name);
        state.unset.insert(name);
    }
    for (const auto& [name, fn] : changes.set_functions) state.functions[name] = fn;
    for (const auto& name : changes.unset_functions) state.functions.erase(name);
    for (const auto& [name, value] : changes.set_aliases) state.aliases[name] = value;
    for (const auto& name : changes.unset_aliases) state.aliases.erase(name);
    for (const auto& [name, on] : changes.options) state.options[name] = on;
    for (const auto& [name, on] : changes.shopt) state.shopt[name] = on;
    if (changes.umask) state.umask = *changes.umask;
}

nlohmann::json to_json(const SessionState& s) {
    nlohmann::json vars = nlohmann::json::object();
    for (const auto& [name, v] : s.vars) vars[name] = {{"attrs", v.attrs}, {"decl", v.decl}};
    nlohmann::json functions = nlohmann::json::object();
    for (const auto& [name, f] : s.functions)
        functions[name] = {{"text", f.text}, {"exported", f.exported}};
    return {{"cwd", s.cwd},           {"vars", vars},         {"unset", s.unset},
            {"functions", functions}, {"aliases", s.aliases}, {"options", s.options},
            {"shopt", s.shopt},       {"umask", s.umask}};
}

SessionState session_state_from_json(const nlohmann::json& j) {
    SessionState s;
    s.cwd = j.value("cwd", "");
    // Named, not temporaries: items() refers to the object it iterates.
    const nlohmann::json vars = j.value("vars", nlohmann::json::object());
    const nlohmann::json functions = j.value("functions", nlohmann::json::object());
    for (const auto& [name, v] : vars.items())
        s.vars[name] = ShellVariable{v.value("attrs", ""), v.value("decl", "")};
    s.unset = j.value("unset", std::set<std::string>{});
    for (const auto& [name, f] : functions.items())
        s.functions[name] = ShellFunction{f.value("text", ""), f.value("exported", false)};
    s.aliases = j.value("aliases", std::map<std::string, std::string>{});
    s.options = j.value("options", std::map<std::string, bool>{});
    s.shopt = j.value("shopt", std::map<std::string, bool>{});
    s.umask = j.value("umask", "");
    return s;
}

nlohmann::json describe(const SessionState& s) {
    nlohmann::json env = nlohmann::json::object(), variables = nlohmann::json::object();
    for (const auto& [name, v] : s.vars) {
        auto value = declared_value(v);
        nlohmann::json shown = value ? nlohmann::json(*value) : nlohmann::json(v.decl);
        if (v.attrs.find('x') != std::string::npos) {
            env[name] = shown;
        } else {
            variables[name] = shown;
        }
    }
    nlohmann::json functions = nlohmann::json::object();
    for (const auto& [name, f] : s.functions) functions[name] = f.text;
    nlohmann::json options = nlohmann::json::array(), shopt = nlohmann::json::array();
    for (const auto& [name, on] : s.options)
        if (on) options.push_back(name);
    for (const auto& [name, on] : s.shopt)
        if (on) shopt.push_back(name);
    return {{"cwd", s.cwd},
            {"env", env},
            {"variables", variables},
            {"unset", s.unset},
            {"functions", functions},
            {"aliases", s.aliases},
            {"options", options},
            {"shopt", shopt},
            {"umask", s.umask.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.umask)}};
}

}  // namespace team::sessions
