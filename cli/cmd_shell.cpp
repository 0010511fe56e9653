// team shell start | list | status | output | wait | kill | terminate | release | gc
// (SPEC 8; terminate: SPEC 13's Execution Termination)
#include <CLI/CLI.hpp>
#include <cstdio>

#include "base/error.hpp"
#include "cli/commands.hpp"
#include "cli/op_command.hpp"
#include "ops/execution_ops.hpp"
#include "ops/table.hpp"

namespace team::cli {

namespace {

std::string command_line(const nlohmann::json& argv) {
    std::string out;
    for (const auto& word : argv) {
        const auto& a = word.get_ref<const std::string&>();
        bool plain =
            !a.empty() && a.find_first_of(" \t\n'\"\\$`;&|<>(){}*?!#~") == std::string::npos;
        out += (out.empty() ? "" : " ") + (plain ? a : quote(a));
    }
    return out;
}

// A shell's status as its JSON shows it (SPEC 8), coloured.
std::string status_text(const Output& out, const nlohmann::json& s) {
    std::string text = s["status"];
    if (text == "starting" || text == "running") return out.green(text);
    if (text == "completed") {
        return s["exitCode"] == 0 ? text : out.yellow(text + " (" + s["exitCode"].dump() + ")");
    }
    std::string detail = s["signal"].is_string() ? " (" + s["signal"].get<std::string>() + ")" : "";
    return out.red(text + detail);
}

std::string text_or(const nlohmann::json& v, const std::string& otherwise = "") {
    return v.is_string() ? v.get<std::string>() : otherwise;
}

void write_raw(std::string_view bytes) {
    std::fwrite(bytes.data(), 1, bytes.size(), stdout);
    std::fflush(stdout);
}

void add_start(CLI::App& shell) {
    auto* cmd = add_operation(shell, ops::start_shell_op, [](Context& ctx, const ops::Result& r) {
        ctx.out().line("started " + r.doc["shell_id"].get<std::string>() + " (pid " +
                       (r.doc["pid"].is_null() ? "0" : r.doc["pid"].dump()) +
                       "): " + command_line(r.view["command"]));
        ctx.out().line("output: " + r.doc["output_file"].get<std::string>());
    });
    cmd->footer(
        "Put -- before CMD when its arguments start with '-'.\n"
        "Example: team shell start --timeout 10m -- make -j2 test");
}

void add_list(CLI::App& shell) {
    auto* cmd = add_operation(shell, ops::list_shells_op, [](Context& ctx, const ops::Result& r) {
        if (r.doc.empty()) {
            ctx.out().line(r.view["all"] == true || r.view["home"] != true
                               ? "no shells"
                               : "no running shells (--all shows finished ones)");
            return;
        }
        Table table({"ID", "COMMAND", "STARTED", "STATUS", "AGENT"});
        auto now = ctx.clock().now();
        for (const auto& s : r.doc) {
            table.add({s["id"].get<std::string>(), cell(command_line(s["command"]), 50),
                       relative_time(parse_iso8601(s["startedAt"]), now), status_text(ctx.out(), s),
                       text_or(s["agent"])});
        }
        table.print(ctx.out());
    });
    cmd->footer("Example: team shell list --all --json");
}

void add_status(CLI::App& shell) {
    auto* cmd = add_operation(shell, ops::shell_status_op, [](Context& ctx, const ops::Result& r) {
        const auto& s = r.doc;
        auto now = ctx.clock().now();
        const auto& out = ctx.out();
        out.line(out.bold("shell") + "     " + s["id"].get<std::string>() + "  " +
                 status_text(out, s));
        out.line(out.bold("command") + "   " + cell(command_line(s["command"]), 200));
        out.line(out.bold("cwd") + "       " + s["cwd"].get<std::string>());
        out.line(out.bold("pid") + "       " + (s["pid"].is_null() ? "-" : s["pid"].dump()));
        out.line(out.bold("started") + "   " + relative_time(parse_iso8601(s["startedAt"]), now));
        if (s["endedAt"].is_string())
            out.line(out.bold("ended") + "     " + relative_time(parse_iso8601(s["endedAt"]), now));
        if (s["agent"].is_string()) out.line(out.bold("agent") + "     " + text_or(s["agent"]));
        if (s["timeout"].is_string()) out.line(out.bold("timeout") + "   " + text_or(s["timeout"]));
        if (s["error"].is_string())
            out.line(out.bold("error") + "     " + cell(text_or(s["error"]), 200));
        out.line(out.bold("output") + "    " + s["outputFile"].get<std::string>());
    });
    cmd->footer("Example: team shell status bg-1a2b3c --json");
}

// Without --follow, the output as it is; with it, each piece as it comes (progress), and with
// --json one {"output"} record per piece, then {"exitStatus"} (the result).
void add_output(CLI::App& shell) {
    auto* cmd = add_operation(
        shell, ops::shell_output_op,
        [](Context&, const ops::Result& r) {
            if (r.doc.contains("output")) write_raw(r.doc["output"].get_ref<const std::string&>());
        },
        [](Context& ctx, const nlohmann::json& event) {
            if (ctx.out().json()) {
                ctx.out().print_json(event);
            } else {
                write_raw(event["output"].get_ref<const std::string&>());
            }
        });
    cmd->footer("Example: team shell output bg-1a2b3c --limit 4096 --json");
}

void add_wait(CLI::App& shell) {
    auto* cmd = add_operation(shell, ops::wait_shell_op, [](Context& ctx, const ops::Result& r) {
        const auto& d = r.doc;
        ctx.out().line(r.view["id"].get<std::string>() + " " + r.view["status"].get<std::string>() +
                       ": " +
                       (d["signal"].is_string()    ? "killed by " + text_or(d["signal"])
                        : !d["exitCode"].is_null() ? "exit code " + d["exitCode"].dump()
                                                   : text_or(r.view["error"], "no exit status")));
    });
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

// SPEC 13's terminate: SIGINT, 5s, SIGKILL; "terminated" or "already_finished", never an error
// for a race with the shell's own end.
void add_terminate(CLI::App& shell) {
    auto* cmd =
        add_operation(shell, ops::terminate_execution_op, [](Context& ctx, const ops::Result& r) {
            const auto& doc = r.doc;
            const auto& st = doc["exitStatus"];
            std::string how = !st.is_object()             ? ""
                              : st["signal"].is_string()  ? ": killed by " + text_or(st["signal"])
                              : !st["exitCode"].is_null() ? ": exit code " + st["exitCode"].dump()
                                                          : "";
            std::string id = doc["execution_id"];
            ctx.out().line((doc["status"] == "terminated" ? "terminated " + id
                                                          : id + " had already finished") +
                           how);
        });
    cmd->footer(
        "SIGINT to the whole tree (the group and every descendant, setsid ones too), 5s, then\n"
        "SIGKILL. A shell still starting is waited for and ended. A command that exits 0 on\n"
        "SIGINT is still recorded as killed. --json: {status: terminated|already_finished,\n"
        "execution_id, returncode (the exit code, or -N for signal N), exitStatus}.\n"
        "Example: team shell terminate bg-1a2b3c --agent worker --team web");
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
    add_terminate(*shell);
    add_release(*shell);
    add_gc(*shell);
    shell->footer(
        "Shells work inside a team (--team, or TEAM_NAME in an agent's pane) or on their own.");
}

}  // namespace team::cli
