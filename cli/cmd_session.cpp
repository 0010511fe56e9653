// team session exec | start | list | show | close   (SPEC 9)
#include <CLI/CLI.hpp>
#include <cstdio>

#include "base/error.hpp"
#include "cli/commands.hpp"
#include "cli/input.hpp"
#include "cli/op_command.hpp"
#include "ops/table.hpp"

namespace team::cli {

namespace {

void write_to(std::FILE* stream, std::string_view bytes) {
    std::fwrite(bytes.data(), 1, bytes.size(), stream);
    std::fflush(stream);
}

void warn(const Context& ctx, const nlohmann::json& warnings) {
    if (ctx.out().json()) return;
    for (const auto& w : warnings)
        write_to(stderr, "team: warning: " + w.get<std::string>() + "\n");
}

// The COMMAND-STRING given as a lone "-" is read from standard input (the command line's own
// syntax); the core joins the words with spaces.
void command_from_stdin(const Context&, nlohmann::json& values) {
    auto words = values.find("command");
    if (words == values.end() || words->size() != 1 || (*words)[0] != "-") return;
    std::string text = text_argument("-");
    if (text.size() > (1 << 20)) throw usage_error("the command is over 1 MiB");
    *words = nlohmann::json::array({text});
}

// What the command prints, as it comes, and each warning when it arises (not with --json: they
// are in the result).
void print_exec_progress(Context& ctx, const nlohmann::json& event) {
    if (ctx.out().json()) return;
    if (event.contains("stdout")) {
        write_to(stdout, event["stdout"].get_ref<const std::string&>());
    } else if (event.contains("stderr")) {
        write_to(stderr, event["stderr"].get_ref<const std::string&>());
    } else if (event.contains("warning")) {
        write_to(stderr, "team: warning: " + event["warning"].get<std::string>() + "\n");
    }
}

void add_exec(CLI::App& session) {
    auto* cmd = add_operation(
        session, ops::exec_in_session_op,
        [](Context&, const ops::Result& r) {
            if (r.doc["timedOut"] == true) {
                write_to(stderr,
                         "team: timed out after " + r.view["timeout"].get<std::string>() + "\n");
            }
        },
        print_exec_progress, command_from_stdin);
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
    auto* cmd = add_operation(
        session, ops::start_in_session_op,
        [](Context& ctx, const ops::Result& r) {
            warn(ctx, r.doc["warnings"]);
            ctx.out().line("started " + r.doc["shell_id"].get<std::string>() + " (pid " +
                           (r.doc["pid"].is_null() ? "0" : r.doc["pid"].dump()) + ") in session " +
                           r.doc["session"].get<std::string>() + ": " +
                           cell(r.view["command"].get<std::string>(), 60));
            ctx.out().line("output: " + r.doc["output_file"].get<std::string>());
        },
        {}, command_from_stdin);
    cmd->footer(
        "A background shell (see team shell): list, watch, wait on and kill it with team shell.\n"
        "Killing it leaves the session and its other commands alone. Like `cmd &` in a shell,\n"
        "what it changes is not written back to the session.\n"
        "Example: team session start app -- 'npm start'");
}

void add_list(CLI::App& session) {
    auto* cmd =
        add_operation(session, ops::list_sessions_op, [](Context& ctx, const ops::Result& r) {
            if (r.doc.empty()) {
                ctx.out().line(ctx.has_store()
                                   ? "no sessions (team session exec NAME -- 'COMMAND' makes one)"
                                   : "no sessions");
                return;
            }
            Table table({"NAME", "CWD", "RUNNING", "COMMANDS", "LAST USED", "CREATED BY"});
            auto now = ctx.clock().now();
            for (const auto& s : r.doc) {
                table.add({s["name"].get<std::string>(), cell(s["cwd"].get<std::string>(), 50),
                           s["running"].dump(), s["commands"].dump(),
                           relative_time(parse_iso8601(s["lastUsedAt"]), now),
                           s["createdBy"].get<std::string>()});
            }
            table.print(ctx.out());
        });
    cmd->footer("Example: team session list --json");
}

void add_show(CLI::App& session) {
    auto* cmd =
        add_operation(session, ops::show_session_op, [](Context& ctx, const ops::Result& r) {
            const auto& s = r.doc;
            const auto& out = ctx.out();
            auto now = ctx.clock().now();
            std::int64_t commands = s["commands"];
            out.line(out.bold("session") + "    " + s["name"].get<std::string>() + "  (" +
                     std::to_string(commands) + " command" + (commands == 1 ? "" : "s") +
                     ", last " + relative_time(parse_iso8601(s["lastUsedAt"]), now) + "; made by " +
                     s["createdBy"].get<std::string>() + ", " +
                     relative_time(parse_iso8601(s["createdAt"]), now) + ")");
            out.line(out.bold("cwd") + "        " + s["cwd"].get<std::string>());
            auto section = [&](const std::string& title, const nlohmann::json& map,
                               const std::string& sep) {
                if (map.empty()) return;
                out.line(out.bold(title));
                for (const auto& [k, v] : map.items()) {
                    std::string value = v.is_string() ? v.get<std::string>() : v.dump();
                    out.line("  " + k + sep + cell(value, 100));
                }
            };
            section("env", s["env"], "=");
            section("variables", s["variables"], "=");
            auto list_line = [&](const std::string& title, const nlohmann::json& items) {
                if (items.empty()) return;
                std::string text;
                for (const auto& i : items)
                    text += (text.empty() ? "" : " ") + i.get<std::string>();
                out.line(out.bold(title) +
                         std::string(11 - std::min<std::size_t>(10, title.size()), ' ') + text);
            };
            list_line("unset", s["unset"]);
            nlohmann::json names = nlohmann::json::array();
            for (const auto& [k, v] : s["functions"].items()) names.push_back(k);
            list_line("functions", names);
            section("aliases", s["aliases"], "=");
            list_line("options", s["options"]);
            list_line("shopt", s["shopt"]);
            if (s["umask"].is_string())
                out.line(out.bold("umask") + "      " + s["umask"].get<std::string>());
            const auto& running = s["running"];
            if (!running.empty()) {
                out.line(out.bold("running"));
                Table table({"  KIND", "ID/PID", "COMMAND", "STARTED", "BY"});
                for (const auto& e : running) {
                    if (e["kind"] != "exec") continue;
                    table.add({"  exec", e["pid"].dump(), cell(e["command"].get<std::string>(), 50),
                               relative_time(parse_iso8601(e["startedAt"]), now),
                               e["by"].get<std::string>()});
                }
                for (const auto& sh : running) {
                    if (sh["kind"] != "shell") continue;
                    table.add({"  shell", sh["shellId"].get<std::string>(),
                               cell(sh["command"].get<std::string>(), 50),
                               relative_time(parse_iso8601(sh["startedAt"]), now),
                               sh["by"].is_string() ? sh["by"].get<std::string>() : ""});
                }
                table.print(out);
            }
        });
    cmd->footer("Example: team session show app --json");
}

void add_close(CLI::App& session) {
    auto* cmd =
        add_operation(session, ops::close_session_op, [](Context& ctx, const ops::Result& r) {
            const auto& d = r.doc;
            if (d["success"] != true) throw failed(d["error"].get<std::string>());
            std::string killed;
            int execs = d["execsKilled"];
            if (execs > 0)
                killed += std::to_string(execs) + " running exec" + (execs == 1 ? "" : "s");
            for (const auto& id : d["shellsKilled"])
                killed += (killed.empty() ? "" : ", ") + id.get<std::string>();
            ctx.out().line("closed session " + d["session"].get<std::string>() +
                           (killed.empty() ? " (nothing was running)" : "; killed " + killed));
        });
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
