// team store check | migrate | use: the store this home uses (ops/store_ops.cpp).
#include <CLI/CLI.hpp>

#include "cli/op_command.hpp"
#include "cli/tool_commands.hpp"
#include "ops/store_ops.hpp"

namespace team::cli {

namespace {

std::string number(const nlohmann::json& v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", v.get<double>());
    return buf;
}

void print_check(Context& ctx, const ops::Result& r) {
    const auto& d = r.doc;
    const auto& schema = d["schema"];
    std::string line = d["engine"].get<std::string>() + " " + d["store"].get<std::string>();
    if (d.contains("serverVersion"))
        line += " (server " + d["serverVersion"].get<std::string>() + ")";
    ctx.out().line(line);
    ctx.out().line("schema " + std::to_string(schema["store"].get<int>()) + ", this team's " +
                   std::to_string(schema["team"].get<int>()) + ": " +
                   schema["state"].get<std::string>() +
                   (schema["state"] == "current" ? "" : " (run `team store migrate`)"));
    ctx.out().line("connect " + number(d["connectMs"]) + " ms, round trip " +
                   number(d["roundTripMs"]) + " ms");
}

}  // namespace

void add_store_command(CLI::App& app) {
    auto* s = app.add_subcommand("store", "the store this home uses: check, migrate, use");
    s->require_subcommand(1);
    add_operation(*s, ops::store_check_op, print_check);
    add_operation(*s, ops::store_migrate_op, [](Context& ctx, const ops::Result& r) {
        ctx.out().line(r.doc["store"].get<std::string>() + ": schema " +
                       std::to_string(r.doc["from"].get<int>()) + " -> " +
                       std::to_string(r.doc["to"].get<int>()));
    });
    add_operation(*s, ops::store_use_op, [](Context& ctx, const ops::Result& r) {
        ctx.out().line("this home now uses " + r.doc["store"].get<std::string>());
    });
    s->footer(
        "The store: SQLite in the home (the default), or a PostgreSQL database that several\n"
        "homes share (SPEC 16): --store URL or TEAM_STORE=postgresql://…, the password in\n"
        "~/.pgpass. Example: TEAM_STORE=postgresql://team@db/team team store migrate");
}

}  // namespace team::cli
