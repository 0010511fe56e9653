// team host add | list | check | remove | lost: the machines whose own team runs agents of the
// store's teams (SPEC 16, ops/host_ops.cpp).
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/op_command.hpp"
#include "ops/table.hpp"

namespace team::cli {

namespace {

std::string ms_text(const nlohmann::json& v) {
    if (!v.is_number()) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f ms", v.get<double>());
    return buf;
}

std::string painted_state(const Output& out, const std::string& state) {
    if (state == "up") return out.green(state);
    if (state == "suspect") return out.yellow(state);
    if (state == "lost") return out.red(state);
    return out.dim(state);
}

void print_host(Context& ctx, const ops::Result& r) {
    const auto& d = r.doc;
    const auto& out = ctx.out();
    std::string line = d.value("name", "") + " (" + d.value("ssh", "") +
                       "): " + painted_state(out, d.value("state", "")) + ", team " +
                       d.value("version", "?") + ", round trip " + ms_text(d["rttMs"]);
    out.line(line);
    if (d.contains("error") && d["error"].is_string()) out.line(out.red(d["error"]));
}

}  // namespace

void add_host_command(CLI::App& app) {
    auto* h = app.add_subcommand("host",
                                 "the machines whose own team runs agents: add, list, "
                                 "check, remove, lost");
    h->require_subcommand(1);
    add_operation(*h, ops::add_host_op, print_host)
        ->footer("Example: team host add h2 --ssh deploy@build-2 --team-path /usr/bin/team");
    add_operation(*h, ops::list_hosts_op, [](Context& ctx, const ops::Result& r) {
        const auto& out = ctx.out();
        if (r.doc.empty()) {
            out.line("no hosts; add one with 'team host add NAME --ssh [USER@]HOST'");
            return;
        }
        Table table({"NAME", "SSH", "STATE", "LEASE AGE", "ROUND TRIP", "AGENTS", "VERSION"});
        for (const auto& h : r.doc) {
            table.add({h["name"], h["ssh"], painted_state(out, h["state"]),
                       ms_text(h["leaseAgeMs"]), ms_text(h["rttMs"]), h["agents"].dump(),
                       h["version"]});
        }
        table.print(out);
    });
    add_operation(*h, ops::check_host_op, print_host);
    add_operation(*h, ops::remove_host_op, [](Context& ctx, const ops::Result& r) {
        ctx.out().line("removed host " + r.doc["name"].get<std::string>());
    });
    add_operation(*h, ops::lost_host_op, [](Context& ctx, const ops::Result& r) {
        std::string ended;
        for (const auto& a : r.doc["endedAgents"])
            ended += (ended.empty() ? "" : ", ") + a.get<std::string>();
        ctx.out().line("host " + r.doc["name"].get<std::string>() + " is lost" +
                       (ended.empty() ? std::string("; it ran no live agent")
                                      : "; ended " + ended + " (their tasks went back)"));
    });
    h->footer(
        "Hosts need a shared store (TEAM_STORE=postgresql://…) and key authentication. Each\n"
        "host's own team runs its agents: team spawn A --host NAME -- CMD.");
}

}  // namespace team::cli
