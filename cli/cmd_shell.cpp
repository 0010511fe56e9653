// team shell start | list | status | output | wait | kill | release | gc   (SPEC 8)
#include <signal.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>

#include "base/duration.hpp"
#include "base/error.hpp"
#include "base/names.hpp"
#include "base/text.hpp"
#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "cli/input.hpp"
#include "cli/op_command.hpp"
#include "ops/table.hpp"
#include "proc/shells.hpp"
#include "proc/signals.hpp"
#include "state/change_watch.hpp"

namespace team::cli {

namespace {

using proc::ShellRecord;
using proc::Shells;

std::string command_line(const std::vector<std::string>& argv) {
    std::string out;
    for (const auto& a : argv) {
        bool plain =
            !a.empty() && a.find_first_of(" \t\n'\"\\$`;&|<>(){}*?!#~") == std::string::npos;
        out += (out.empty() ? "" : " ") + (plain ? a : quote(a));
    }
    return out;
}

std::string status_text(const Output& out, const ShellRecord& s) {
    std::string text = str(s.status);
    if (s.running()) return out.green(text);
    if (s.status == ShellStatus::completed) {
        return s.exit_code == 0 ? text
                                : out.yellow(text + " (" + std::to_string(*s.exit_code) + ")");
    }
    std::string detail = s.signal ? " (" + *s.signal + ")" : "";
    return out.red(text + detail);
}

void write_raw(std::string_view bytes) {
    std::fwrite(bytes.data(), 1, bytes.size(), stdout);
    std::fflush(stdout);
}

// --agent NAME: attributes to that member; without it, an agent calling from its pane
// (TEAM_AGENT_ID) owns what it starts.
std::optional<std::string> shell_agent(Context& ctx, const std::optional<TeamRecord>& team,
                                       const std::string& agent) {
    if (!agent.empty()) {
        if (!team) throw usage_error("--agent needs a team: give --team NAME");
        return Caller(ctx.teams().resolve_caller(*team, agent)).id();
    }
    if (team) {
        Caller caller = ctx.caller(*team);
        if (!caller.is_leader) return caller.id();
    }
    return std::nullopt;
}

std::optional<TeamRecord> team_for_shells(Context& ctx, const std::string& agent) {
    if (!agent.empty()) return ctx.team();
    return ctx.named_team();
}

void add_start(CLI::App& shell) {
    struct Options {
        std::string agent, cwd;
        std::optional<std::string> timeout;
        std::vector<std::string> env, argv;
        std::int64_t output_limit = 0;
    };
    auto o = std::make_shared<Options>();
    auto* cmd = add_command(
        shell, "start", "start CMD in the background and return at once", [o](Context& ctx) {
            auto team = team_for_shells(ctx, o->agent);
            proc::ShellStart request;
            request.argv = o->argv;
            request.cwd = o->cwd.empty() ? std::filesystem::current_path().string() : o->cwd;
            request.env = o->env;
            if (o->timeout) request.timeout = parse_duration(*o->timeout, "--timeout");
            if (o->output_limit > 0) request.output_limit = o->output_limit;
            if (team) request.team_id = team->id;
            request.agent = shell_agent(ctx, team, o->agent);
            request.actor = ctx.actor(team);
            Shells shells(ctx.store(), ctx.clock());
            ShellRecord s = shells.start(request);
            if (ctx.out().json()) {
                ctx.out().print_json({{"success", true},
                                      {"shell_id", s.id},
                                      {"pid", s.pid ? nlohmann::json(*s.pid) : nullptr},
                                      {"output_file", s.output_file}});
            } else {
                ctx.out().line("started " + s.id + " (pid " + std::to_string(s.pid.value_or(0)) +
                               "): " + command_line(s.command));
                ctx.out().line("output: " + s.output_file);
            }
            return 0;
        });
    cmd->add_option("--agent", o->agent, "attribute the shell to this agent of the team")
        ->type_name("NAME");
    cmd->add_option("--cwd", o->cwd, "where CMD runs (default: the current directory)")
        ->type_name("DIR");
    verbatim(cmd->add_option("--env", o->env, "an environment variable for CMD (repeatable)"))
        ->type_name("K=V");
    optional_value(cmd, "--timeout", o->timeout, "kill CMD (SIGTERM, 5s, SIGKILL) after this long")
        ->type_name("DUR");
    cmd->add_option("--output-limit", o->output_limit,
                    "keep only the last BYTES of output (default 16 MiB)")
        ->type_name("BYTES")
        ->check(whole_number(1));
    command_argument(cmd, o->argv);
    cmd->footer(
        "Put -- before CMD when its arguments start with '-'.\n"
        "Example: team shell start --timeout 10m -- make -j2 test");
}

void add_list(CLI::App& shell) {
    struct Options {
        bool all = false;
        std::string agent;
    };
    auto o = std::make_shared<Options>();
    auto* cmd = add_command(
        shell, "list", "running background shells: id, command, started, status",
        [o](Context& ctx) {
            if (!ctx.has_store()) {
                if (ctx.out().json())
                    ctx.out().print_json(nlohmann::json::array());
                else
                    ctx.out().line("no shells");
                return 0;
            }
            std::optional<std::string> agent;
            if (!o->agent.empty())
                agent = Caller(ctx.teams().resolve_caller(ctx.team(), o->agent)).id();
            Shells shells(ctx.store(), ctx.clock());
            auto list = shells.list(o->all, agent);
            if (ctx.out().json()) {
                nlohmann::json doc = nlohmann::json::array();
                for (const auto& s : list) doc.push_back(proc::to_json(s));
                ctx.out().print_json(doc);
                return 0;
            }
            if (list.empty()) {
                ctx.out().line(o->all ? "no shells"
                                      : "no running shells (--all shows finished ones)");
                return 0;
            }
            Table table({"ID", "COMMAND", "STARTED", "STATUS", "AGENT"});
            auto now = ctx.clock().now();
            for (const auto& s : list) {
                table.add({s.id, cell(command_line(s.command), 50),
                           relative_time(s.started_at, now), status_text(ctx.out(), s),
                           s.agent.value_or("")});
            }
            table.print(ctx.out());
            return 0;
        });
    cmd->add_flag("--all", o->all, "also list finished shells");
    cmd->add_option("--agent", o->agent, "only the shells of this agent")->type_name("NAME");
    cmd->footer("Example: team shell list --all --json");
}

void add_status(CLI::App& shell) {
    auto id = std::make_shared<std::string>();
    auto* cmd = add_command(shell, "status", "one shell's record", [id](Context& ctx) {
        Shells shells(ctx.store(), ctx.clock());
        ShellRecord s = shells.get(*id);
        if (ctx.out().json()) {
            ctx.out().print_json(proc::to_json(s));
            return 0;
        }
        auto now = ctx.clock().now();
        const auto& out = ctx.out();
        out.line(out.bold("shell") + "     " + s.id + "  " + status_text(out, s));
        out.line(out.bold("command") + "   " + cell(command_line(s.command), 200));
        out.line(out.bold("cwd") + "       " + s.cwd);
        out.line(out.bold("pid") + "       " + (s.pid ? std::to_string(*s.pid) : "-"));
        out.line(out.bold("started") + "   " + relative_time(s.started_at, now));
        if (s.ended_at) out.line(out.bold("ended") + "     " + relative_time(*s.ended_at, now));
        if (s.agent) out.line(out.bold("agent") + "     " + *s.agent);
        if (s.timeout_ms)
            out.line(out.bold("timeout") + "   " + format_duration(Millis(*s.timeout_ms)));
        if (s.error) out.line(out.bold("error") + "     " + cell(*s.error, 200));
        out.line(out.bold("output") + "    " + s.output_file);
        return 0;
    });
    cmd->add_option("ID", *id, "the shell (bg-xxxxxx)")->required();
    cmd->footer("Example: team shell status bg-1a2b3c --json");
}

void add_output(CLI::App& shell) {
    struct Options {
        std::string id;
        std::int64_t limit = 0;
        bool follow = false;
    };
    auto o = std::make_shared<Options>();
    auto* cmd = add_command(
        shell, "output", "what the shell printed (stdout and stderr together)", [o](Context& ctx) {
            Shells shells(ctx.store(), ctx.clock());
            ShellRecord s = shells.get(o->id);
            std::optional<std::size_t> limit;
            if (o->limit > 0) limit = static_cast<std::size_t>(o->limit);
            if (!o->follow) {
                auto slice = shells.output(s, limit);
                if (ctx.out().json()) {
                    ctx.out().print_json({{"output", slice.output},
                                          {"truncated", slice.truncated},
                                          {"exitStatus", proc::exit_status_json(s)}});
                } else {
                    write_raw(slice.output);
                }
                return 0;
            }
            // --follow: what is there, then what comes, until the shell has ended.
            std::filesystem::path file = s.output_file;
            ChangeWatch file_watch(file.parent_path(), file.filename().string());
            ChangeWatch store_watch(ctx.store().home());
            // First what is there (its last --limit bytes, cut on a character boundary), then
            // only what the file gains: each wake-up reads from where the last one stopped.
            auto [fresh, offset] = shells.output_from(s, 0);
            if (limit) fresh = std::string(utf8_tail(fresh, *limit));
            for (;;) {
                s = shells.get(o->id);
                bool ended = !s.running();
                auto [more, end] = shells.output_from(s, offset);
                fresh += more;
                offset = end;
                if (!fresh.empty()) {
                    if (ctx.out().json())
                        ctx.out().print_json({{"output", fresh}});
                    else
                        write_raw(fresh);
                    fresh.clear();
                }
                if (ended) {
                    if (ctx.out().json())
                        ctx.out().print_json({{"exitStatus", proc::exit_status_json(s)}});
                    return 0;
                }
                file_watch.wait_until(std::chrono::steady_clock::now() + std::chrono::seconds(5),
                                      {store_watch.fd()});
            }
        });
    cmd->add_option("ID", o->id, "the shell")->required();
    cmd->add_option("--limit", o->limit, "only the last BYTES (never cutting a UTF-8 character)")
        ->type_name("BYTES")
        ->check(whole_number(1));
    cmd->add_flag("--follow", o->follow, "keep printing output as it comes, until the shell ends");
    cmd->footer("Example: team shell output bg-1a2b3c --limit 4096 --json");
}

void add_wait(CLI::App& shell) {
    struct Options {
        std::string id;
        std::optional<std::string> timeout;
    };
    auto o = std::make_shared<Options>();
    auto* cmd = add_command(
        shell, "wait", "block until the shell ends; exit 124 on --timeout", [o](Context& ctx) {
            std::optional<Millis> timeout;
            if (o->timeout) timeout = parse_duration(*o->timeout, "--timeout");
            Shells shells(ctx.store(), ctx.clock());
            auto s = shells.wait(o->id, timeout);
            if (!s) throw Error(ErrorCode::timeout, o->id + " still running after " + *o->timeout);
            if (ctx.out().json()) {
                ctx.out().print_json(proc::exit_status_json(*s));
            } else {
                ctx.out().line(s->id + " " + str(s->status) + ": " +
                               (s->signal      ? "killed by " + *s->signal
                                : s->exit_code ? "exit code " + std::to_string(*s->exit_code)
                                               : s->error.value_or("no exit status")));
            }
            return 0;
        });
    cmd->add_option("ID", o->id, "the shell")->required();
    optional_value(cmd, "--timeout", o->timeout, "give up after this long (exit 124)")
        ->type_name("DUR");
    cmd->footer("Example: team shell wait bg-1a2b3c --timeout 30s --json");
}

void add_kill(CLI::App& shell) {
    auto* cmd = add_operation(shell, ops::kill_shell_op, [](Context& ctx, const ops::Result& r) {
        const auto& doc = r.doc;
        std::string id = doc["shell_id"];
        if (doc["success"] != true) throw Error(ErrorCode::failed, doc["error"].get<std::string>());
        std::string how = doc["exitStatus"].is_null() ? ""
                          : doc["exitStatus"]["signal"].is_string()
                              ? ": killed by " + doc["exitStatus"]["signal"].get<std::string>()
                              : ": exit code " + doc["exitStatus"]["exitCode"].dump();
        ctx.out().line(doc["signal_sent"] == "none"
                           ? id + ": " + doc["error"].get<std::string>()
                           : "killed " + id + " (" + doc["signal_sent"].get<std::string>() +
                                 (doc["force_killed"] == true ? ", then SIGKILL" : "") + ")" + how);
    });
    cmd->footer(
        "The signal goes to the whole tree: the process group and every descendant, also those\n"
        "that left it (setsid, double fork). Stopped processes get SIGCONT too.\n"
        "Example: team shell kill bg-1a2b3c --timeout 2s --json");
}

void add_release(CLI::App& shell) {
    auto* cmd = add_operation(shell, ops::release_shell_op, [](Context& ctx, const ops::Result& r) {
        ctx.out().line("released " + r.doc["shell_id"].get<std::string>());
    });
    cmd->footer("Example: team shell release bg-1a2b3c");
}

void add_gc(CLI::App& shell) {
    auto* cmd = add_operation(shell, ops::gc_shells_op, [](Context& ctx, const ops::Result& r) {
        size_t n = r.doc["released"].size();
        ctx.out().line("released " + std::to_string(n) + " finished shell" + (n == 1 ? "" : "s"));
    });
    cmd->footer("Example: team shell gc --older-than 10m");
}

}  // namespace

void add_shell_command(CLI::App& app) {
    auto* shell =
        app.add_subcommand("shell", "background shells: start, list, watch, wait on, kill");
    shell->require_subcommand(1);
    add_start(*shell);
    add_list(*shell);
    add_status(*shell);
    add_output(*shell);
    add_wait(*shell);
    add_kill(*shell);
    add_release(*shell);
    add_gc(*shell);
    shell->footer(
        "Shells work inside a team (--team, or TEAM_NAME in an agent's pane) or on their own.");
}

}  // namespace team::cli
