// team session exec | start | list | show | close   (SPEC 9)
#include <CLI/CLI.hpp>
#include <cstdio>

#include "base/duration.hpp"
#include "base/error.hpp"
#include "base/names.hpp"
#include "base/text.hpp"
#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "cli/input.hpp"
#include "proc/sessions.hpp"
#include "proc/signals.hpp"

namespace team::cli {

namespace {

using proc::SessionRecord;
using proc::Sessions;

// The COMMAND-STRING: the words after `--` joined with spaces (as ssh does), or, for a lone
// "-", the command read from standard input.
std::string command_string(const std::vector<std::string>& words) {
    if (words.empty()) throw usage_error("no command given: team session exec NAME -- 'COMMAND'");
    if (words.size() == 1 && words[0] == "-") {
        std::string text = text_argument("-");
        if (text.size() > (1 << 20)) throw usage_error("the command is over 1 MiB");
        return text;
    }
    std::string joined;
    for (const auto& w : words) joined += (joined.empty() ? "" : " ") + w;
    return joined;
}

void session_name_argument(CLI::App* cmd, std::string& name) {
    cmd->add_option("NAME", name, "the session (made by its first command)")->required();
}

void command_string_argument(CLI::App* cmd, std::vector<std::string>& words) {
    command_argument(
        cmd, words, "COMMAND-STRING",
        "bash code, after --: the words are joined with spaces; - reads it from stdin");
}

void write_to(std::FILE* stream, std::string_view bytes) {
    std::fwrite(bytes.data(), 1, bytes.size(), stream);
    std::fflush(stream);
}

void warn(const Context& ctx, const std::vector<std::string>& warnings) {
    if (ctx.out().json()) return;
    for (const auto& w : warnings) write_to(stderr, "team: warning: " + w + "\n");
}

// The team a session command is attributed to, only when one is named (sessions belong to the
// home, and work outside any team).
std::optional<TeamRecord> session_team(Context& ctx) {
    return ctx.named_team();
}

nlohmann::json or_null(const std::optional<std::string>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

void add_exec(CLI::App& session) {
    struct Options {
        std::string name;
        std::optional<std::string> timeout;
        std::int64_t output_limit = 16 << 20;
        std::vector<std::string> words;
    };
    auto o = std::make_shared<Options>();
    auto* cmd = add_command(
        session, "exec",
        "run a command string in session NAME and wait; its cd, export, "
        "functions and aliases last",
        [o](Context& ctx) {
            auto team = session_team(ctx);
            proc::SessionExecRequest request;
            request.name = o->name;
            check_name(o->name, "session name");
            if (o->timeout) request.timeout = parse_duration(*o->timeout, "--timeout");
            request.command = command_string(o->words);
            request.output_limit = static_cast<std::size_t>(o->output_limit);
            if (team) request.team_id = team->id;
            request.actor = ctx.actor(team);
            bool json = ctx.out().json();
            if (!json) {
                request.on_stdout = [](std::string_view chunk) { write_to(stdout, chunk); };
                request.on_stderr = [](std::string_view chunk) { write_to(stderr, chunk); };
                request.on_warning = [](const std::string& w) {
                    write_to(stderr, "team: warning: " + w + "\n");
                };
            }
            Sessions sessions(ctx.store(), ctx.clock());
            auto result = sessions.exec(request);
            if (json) {
                const auto& st = result.status;
                ctx.out().print_json(
                    {{"exitCode", st.exit_code ? nlohmann::json(*st.exit_code) : nullptr},
                     {"signal",
                      st.signal ? nlohmann::json(proc::signal_name(*st.signal)) : nullptr},
                     {"stdout", result.stdout_text},
                     {"stderr", result.stderr_text},
                     {"cwd", result.cwd},
                     {"session", o->name},
                     {"timedOut", result.timed_out},
                     {"truncated", result.truncated},
                     {"stateKept", result.state_kept},
                     {"warnings", result.warnings}});
            } else {
                if (result.timed_out)
                    write_to(stderr, "team: timed out after " + *o->timeout + "\n");
            }
            return result.exit_code();
        });
    session_name_argument(cmd, o->name);
    optional_value(cmd, "--timeout", o->timeout,
                   "kill the command's whole tree after this long (exit 124; state not kept)")
        ->type_name("DUR");
    cmd->add_option("--output-limit", o->output_limit,
                    "bytes of stdout and of stderr kept for --json (the end; default 16 MiB)")
        ->type_name("BYTES")
        ->check(whole_number(1));
    command_string_argument(cmd, o->words);
    cmd->footer(
        "COMMAND-STRING is bash; the words after -- are joined with spaces, and a lone - reads\n"
        "it from standard input. It runs in a fresh bash, in its own process group, started\n"
        "from the session's state: cwd, variables (exported or not), functions, aliases and\n"
        "the shell options that matter. What it changes is kept when it ends by itself, with\n"
        "any exit code; not when it is killed or times out.\n"
        "Output is passed through as it comes; with --json it is returned in the result.\n"
        "Exit code: the command's own, 128+N when killed by signal N, 124 when timed out.\n"
        "Examples:\n"
        "  team session exec app -- 'cd /srv/app && export API_KEY=x'\n"
        "  team session exec app --json -- 'make test'");
}

void add_start(CLI::App& session) {
    struct Options {
        std::string name;
        std::optional<std::string> timeout;
        std::int64_t output_limit = 0;
        std::vector<std::string> words;
    };
    auto o = std::make_shared<Options>();
    auto* cmd = add_command(
        session, "start",
        "run a command string from session NAME's state in the background (a shell)",
        [o](Context& ctx) {
            auto team = session_team(ctx);
            proc::SessionStartRequest request;
            check_name(o->name, "session name");
            request.name = o->name;
            if (o->timeout) request.timeout = parse_duration(*o->timeout, "--timeout");
            if (o->output_limit > 0) request.output_limit = o->output_limit;
            request.command = command_string(o->words);
            if (team) {
                request.team_id = team->id;
                Caller caller = ctx.caller(*team);
                if (!caller.is_leader) request.agent = caller.id();
            }
            request.actor = ctx.actor(team);
            Sessions sessions(ctx.store(), ctx.clock());
            auto [shell, warnings] = sessions.start(request);
            if (ctx.out().json()) {
                ctx.out().print_json({{"success", true},
                                      {"shell_id", shell.id},
                                      {"pid", shell.pid ? nlohmann::json(*shell.pid) : nullptr},
                                      {"output_file", shell.output_file},
                                      {"session", o->name},
                                      {"warnings", warnings}});
            } else {
                warn(ctx, warnings);
                ctx.out().line("started " + shell.id + " (pid " +
                               std::to_string(shell.pid.value_or(0)) + ") in session " + o->name +
                               ": " + cell(request.command, 60));
                ctx.out().line("output: " + shell.output_file);
            }
            return 0;
        });
    session_name_argument(cmd, o->name);
    optional_value(cmd, "--timeout", o->timeout, "kill it (SIGTERM, 5s, SIGKILL) after this long")
        ->type_name("DUR");
    cmd->add_option("--output-limit", o->output_limit,
                    "keep only the last BYTES of output (default 16 MiB)")
        ->type_name("BYTES")
        ->check(whole_number(1));
    command_string_argument(cmd, o->words);
    cmd->footer(
        "A background shell (see team shell): list, watch, wait on and kill it with team shell.\n"
        "Killing it leaves the session and its other commands alone. Like `cmd &` in a shell,\n"
        "what it changes is not written back to the session.\n"
        "Example: team session start app -- 'npm start'");
}

void add_list(CLI::App& session) {
    auto* cmd =
        add_command(session, "list", "the sessions: name, cwd, running commands", [](Context& ctx) {
            if (!ctx.has_store()) {
                if (ctx.out().json())
                    ctx.out().print_json(nlohmann::json::array());
                else
                    ctx.out().line("no sessions");
                return 0;
            }
            Sessions sessions(ctx.store(), ctx.clock());
            auto list = sessions.list();
            nlohmann::json doc = nlohmann::json::array();
            Table table({"NAME", "CWD", "RUNNING", "COMMANDS", "LAST USED", "CREATED BY"});
            auto now = ctx.clock().now();
            for (const auto& s : list) {
                auto running = sessions.running_execs(s).size() + sessions.running_shells(s).size();
                doc.push_back({{"name", s.name},
                               {"cwd", s.state.cwd},
                               {"running", running},
                               {"commands", s.commands},
                               {"createdBy", s.created_by},
                               {"createdAt", iso8601(s.created_at)},
                               {"lastUsedAt", iso8601(s.updated_at)}});
                table.add({s.name, cell(s.state.cwd, 50), std::to_string(running),
                           std::to_string(s.commands), relative_time(s.updated_at, now),
                           s.created_by});
            }
            if (ctx.out().json()) {
                ctx.out().print_json(doc);
            } else if (list.empty()) {
                ctx.out().line("no sessions (team session exec NAME -- 'COMMAND' makes one)");
            } else {
                table.print(ctx.out());
            }
            return 0;
        });
    cmd->footer("Example: team session list --json");
}

void add_show(CLI::App& session) {
    auto name = std::make_shared<std::string>();
    auto* cmd = add_command(
        session, "show", "one session's state and what runs in it", [name](Context& ctx) {
            Sessions sessions(ctx.store(), ctx.clock());
            SessionRecord s = sessions.get(*name);
            auto execs = sessions.running_execs(s);
            auto shells = sessions.running_shells(s);
            nlohmann::json state = proc::describe(s.state);
            nlohmann::json running = nlohmann::json::array();
            for (const auto& e : execs) {
                running.push_back({{"kind", "exec"},
                                   {"command", e.command},
                                   {"pid", e.supervisor_pid},
                                   {"by", e.actor},
                                   {"startedAt", iso8601(e.started_at)}});
            }
            for (const auto& sh : shells) {
                running.push_back({{"kind", "shell"},
                                   {"shellId", sh.id},
                                   {"command", sh.command.size() == 3 ? sh.command[2] : ""},
                                   {"pid", sh.pid ? nlohmann::json(*sh.pid) : nullptr},
                                   {"by", or_null(sh.agent)},
                                   {"startedAt", iso8601(sh.started_at)}});
            }
            if (ctx.out().json()) {
                nlohmann::json doc = {{"name", s.name},
                                      {"createdBy", s.created_by},
                                      {"createdAt", iso8601(s.created_at)},
                                      {"lastUsedAt", iso8601(s.updated_at)},
                                      {"commands", s.commands},
                                      {"running", running}};
                doc.update(state);
                ctx.out().print_json(doc);
                return 0;
            }
            const auto& out = ctx.out();
            auto now = ctx.clock().now();
            out.line(out.bold("session") + "    " + s.name + "  (" + std::to_string(s.commands) +
                     " command" + (s.commands == 1 ? "" : "s") + ", last " +
                     relative_time(s.updated_at, now) + "; made by " + s.created_by + ", " +
                     relative_time(s.created_at, now) + ")");
            out.line(out.bold("cwd") + "        " + s.state.cwd);
            auto section = [&](const std::string& title, const nlohmann::json& map,
                               const std::string& sep) {
                if (map.empty()) return;
                out.line(out.bold(title));
                for (const auto& [k, v] : map.items()) {
                    std::string value = v.is_string() ? v.get<std::string>() : v.dump();
                    out.line("  " + k + sep + cell(value, 100));
                }
            };
            section("env", state["env"], "=");
            section("variables", state["variables"], "=");
            auto list_line = [&](const std::string& title, const nlohmann::json& items) {
                if (items.empty()) return;
                std::string text;
                for (const auto& i : items)
                    text += (text.empty() ? "" : " ") + i.get<std::string>();
                out.line(out.bold(title) +
                         std::string(11 - std::min<std::size_t>(10, title.size()), ' ') + text);
            };
            list_line("unset", state["unset"]);
            nlohmann::json names = nlohmann::json::array();
            for (const auto& [k, v] : state["functions"].items()) names.push_back(k);
            list_line("functions", names);
            section("aliases", state["aliases"], "=");
            list_line("options", state["options"]);
            list_line("shopt", state["shopt"]);
            if (!s.state.umask.empty()) out.line(out.bold("umask") + "      " + s.state.umask);
            if (!running.empty()) {
                out.line(out.bold("running"));
                Table table({"  KIND", "ID/PID", "COMMAND", "STARTED", "BY"});
                for (const auto& e : execs) {
                    table.add({"  exec", std::to_string(e.supervisor_pid), cell(e.command, 50),
                               relative_time(e.started_at, now), e.actor});
                }
                for (const auto& sh : shells) {
                    table.add({"  shell", sh.id,
                               cell(sh.command.size() == 3 ? sh.command[2] : "", 50),
                               relative_time(sh.started_at, now), sh.agent.value_or("")});
                }
                table.print(out);
            }
            return 0;
        });
    cmd->add_option("NAME", *name, "the session")->required();
    cmd->footer("Example: team session show app --json");
}

void add_close(CLI::App& session) {
    struct Options {
        std::string name;
        std::string timeout = "5s";
    };
    auto o = std::make_shared<Options>();
    auto* cmd = add_command(
        session, "close", "kill the session's running commands and forget it", [o](Context& ctx) {
            auto timeout = parse_duration(o->timeout, "--timeout");
            check_name(o->name, "session name");
            auto team = session_team(ctx);
            Sessions sessions(ctx.store(), ctx.clock());
            auto result = sessions.close(o->name, timeout, ctx.actor(team));
            bool ok = result.survivors == 0;
            std::string error = ok ? ""
                                   : std::to_string(result.survivors) +
                                         " process(es) of the session could not be ended";
            if (ctx.out().json()) {
                ctx.out().print_json(
                    {{"success", ok},
                     {"session", o->name},
                     {"execsKilled", result.execs_killed},
                     {"shellsKilled", result.shells_killed},
                     {"error", ok ? nlohmann::json(nullptr) : nlohmann::json(error)}});
                return ok ? 0 : 1;
            }
            if (!ok) throw failed(error);
            std::string killed;
            if (result.execs_killed > 0)
                killed += std::to_string(result.execs_killed) + " running exec" +
                          (result.execs_killed == 1 ? "" : "s");
            for (const auto& id : result.shells_killed) killed += (killed.empty() ? "" : ", ") + id;
            ctx.out().line("closed session " + o->name +
                           (killed.empty() ? " (nothing was running)" : "; killed " + killed));
            return 0;
        });
    cmd->add_option("NAME", o->name, "the session")->required();
    cmd->add_option("--timeout", o->timeout,
                    "how long its commands get after SIGTERM before SIGKILL (default 5s)")
        ->type_name("DUR");
    cmd->footer("Example: team session close app");
}

}  // namespace

void add_session_command(CLI::App& app) {
    auto* session = app.add_subcommand(
        "session", "sessions: cwd, variables, functions and aliases that last between commands");
    session->require_subcommand(1);
    add_exec(*session);
    add_start(*session);
    add_list(*session);
    add_show(*session);
    add_close(*session);
    session->footer(
        "Each command runs in a fresh bash started from the session's state, so each has its\n"
        "own process group and can be killed alone. Sessions belong to the home; the first\n"
        "exec or start of a NAME makes it.\n"
        "Example:\n"
        "  team session exec app -- 'cd /srv/app'\n"
        "  team session exec app -- 'export API_KEY=x; greet() { echo \"hi $1\"; }'\n"
        "  team session start app -- 'npm start'");
}

}  // namespace team::cli
