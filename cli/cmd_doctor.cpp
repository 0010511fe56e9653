// team doctor: whether team can run here (ops/doctor_ops.cpp), one line a check.
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/op_command.hpp"
#include "cli/tool_commands.hpp"
#include "ops/doctor_ops.hpp"

namespace team::cli {

namespace {

void print_human(Context& ctx, const ops::Result& r) {
    const Output& out = ctx.out();
    for (const auto& c : r.doc["checks"]) {
        std::string status = c["status"];
        std::string mark = status == "ok"     ? out.green("ok  ")
                           : status == "warn" ? out.yellow("warn")
                                              : out.red("fail");
        std::string name = c["check"];
        name.resize(10, ' ');
        out.line(mark + "  " + name + c["message"].get<std::string>());
        if (c["hint"].is_string()) out.line("            " + c["hint"].get<std::string>());
    }
}

}  // namespace

void add_doctor_command(CLI::App& app) {
    auto* cmd = add_operation(app, ops::doctor_op, print_human);
    cmd->footer(
        "Each line is ok, warn or fail; a warn or fail says what to do. Exit 0 when nothing\n"
        "fails. Run it first on a new machine, and when something does not start.");
}

}  // namespace team::cli
