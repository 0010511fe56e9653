// team agents [--all]
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/op_command.hpp"
#include "cli/usage_cells.hpp"
#include "ops/table.hpp"

namespace team::cli {

namespace {

std::string count_text(const nlohmann::json& w, const char* key, const char* letter) {
    int n = w.value(key, 0);
    return n ? std::to_string(n) + letter : "";
}

// The git state of the agents that have a worktree, below the table (SPEC 14).
void print_worktrees(const Output& out, const nlohmann::json& agents) {
    Table table({"NAME", "BRANCH", "AHEAD", "BEHIND", "CHANGES", "MERGE", "CONFLICTS WITH"});
    bool any = false;
    for (const auto& a : agents) {
        if (!a.contains("worktree")) continue;
        any = true;
        const auto& w = a["worktree"];
        std::string changes, merge, conflicts;
        if (w.value("missing", false)) {
            changes = out.red("missing");
        } else if (w.contains("error")) {
            changes = out.red(w["error"].get<std::string>());
        } else if (w.contains("clean")) {
            for (auto part :
                 {count_text(w, "staged", " staged"), count_text(w, "modified", " modified"),
                  count_text(w, "untracked", " untracked"),
                  count_text(w, "unmerged", " unmerged")}) {
                if (!part.empty()) changes += (changes.empty() ? "" : ", ") + part;
            }
            if (changes.empty()) changes = "clean";
            merge = w.value("mergesCleanly", false) ? out.green("clean") : out.red("conflicts");
            for (const auto& c : w["conflictsWith"]) {
                std::string files;
                for (const auto& f : c["files"])
                    files += (files.empty() ? "" : ", ") + f.get<std::string>();
                conflicts += (conflicts.empty() ? "" : "; ") + c["agent"].get<std::string>() +
                             " (" + files + ")";
            }
        } else {
            changes = out.dim("kept");
        }
        table.add({a["name"].get<std::string>(), w["branch"].get<std::string>(),
                   w.contains("ahead") ? w["ahead"].dump() : "-",
                   w.contains("behind") ? w["behind"].dump() : "-", changes,
                   merge.empty() ? "-" : merge, conflicts.empty() ? "-" : out.red(conflicts)});
    }
    if (!any) return;
    out.line("");
    table.print(out);
}

// The session of the ACP agents, below the table (SPEC 15).
void print_acp(const Output& out, const nlohmann::json& agents) {
    for (const auto& a : agents) {
        if (!a.contains("acp")) continue;
        const auto& s = a["acp"];
        std::string line = a["name"].get<std::string>() + ": ACP " + s["state"].get<std::string>() +
                           ", permissions " + s["policy"].get<std::string>();
        if (s["turn"].is_object()) line += ", turn " + s["turn"]["turn"].dump() + " running";
        if (s.value("queued", 0) > 0) line += ", " + s["queued"].dump() + " queued";
        if (s.value("openPermissions", 0) > 0)
            line += ", " + s["openPermissions"].dump() + " permission request(s) waiting";
        if (s["endReason"].is_string()) line += " (" + s["endReason"].get<std::string>() + ")";
        out.line(line);
    }
}

// "3s", "12m", "2h": how long, as short as a table cell wants it.
std::string short_age(EpochMs ms) {
    long long s = std::max<long long>(0, ms / 1000);
    if (s < 60) return std::to_string(s) + "s";
    if (s < 3600) return std::to_string(s / 60) + "m";
    if (s < 86400) return std::to_string(s / 3600) + "h";
    return std::to_string(s / 86400) + "d";
}

// What an agent is doing and for how long (SPEC 17): "working 12s", "waiting 3s"; "-" when
// nothing says.
std::string activity_cell(const Output& out, const nlohmann::json& a, EpochMs now) {
    if (!a.contains("activity") || !a["activity"].is_object()) return "-";
    const auto& act = a["activity"];
    std::string state = act.value("state", "");
    std::string age = act["since"].is_string()
                          ? " " + short_age(now - parse_iso8601(act["since"].get<std::string>()))
                          : "";
    if (state == "waiting") return out.yellow(state + age);
    if (state == "working") return out.green(state + age);
    if (state == "ended") return out.dim(state);
    return state + age;
}

// The agents that wait for a person, below the table: on what, and what answers.
void print_waiting(const Output& out, const nlohmann::json& agents) {
    for (const auto& a : agents) {
        if (!a.contains("activity") || !a["activity"].is_object()) continue;
        const auto& act = a["activity"];
        if (act.value("state", "") != "waiting") continue;
        const auto& on = act["waitingOn"];
        std::string what = "a person";
        if (on.is_object()) {
            what = on.value("kind", "") == "question" ? "an answer" : "a permission";
            if (on.contains("tool") && on["tool"].is_string())
                what += ": " + on["tool"].get<std::string>();
            for (const char* key : {"command", "file", "text"}) {
                if (on.contains(key) && on[key].is_string()) {
                    what += " " + cell(on[key].get<std::string>(), 80);
                    break;
                }
            }
        }
        std::string answer = on.is_object() && on.contains("answer") && on["answer"].is_string()
                                 ? on["answer"].get<std::string>()
                                 : "team attach " + a["name"].get<std::string>();
        out.line(out.yellow(a["name"].get<std::string>() + " waits for " + what) + "  (" + answer +
                 ")");
    }
}

}  // namespace

void add_agents_command(CLI::App& app) {
    auto* cmd = add_operation(app, ops::list_agents_op, [](Context& ctx, const ops::Result& r) {
        const auto& out = ctx.out();
        if (r.doc.empty()) {
            bool all = r.view.value("all", false);
            out.line(all ? "no agents" : "no live agents (--all shows terminated ones)");
            return;
        }
        auto now = ctx.clock().now();
        const auto& open = r.view["openTasks"];
        Table table({"NAME", "STATUS", "ACTIVITY", "TOKENS", "COST", "MEMORY", "PANE", "PID",
                     "COLOR", "TASKS", "AGE", "EXIT"});
        for (const auto& a : r.doc) {
            std::string name = a["name"], status = a["status"];
            bool live = parse_state<AgentStatus>(status) != AgentStatus::terminated;
            std::string exit;
            if (a["exitReason"].is_string()) {
                exit = a["exitReason"];
                if (a["exitCode"].is_number()) exit += " (" + a["exitCode"].dump() + ")";
                if (a["signal"].is_string()) exit += " (" + a["signal"].get<std::string>() + ")";
            }
            // An agent on another host (SPEC 16): the host, and its state when it is not up.
            std::string pane = a["paneId"].is_string() ? a["paneId"].get<std::string>() : "-";
            if (a.contains("host") && a["host"].is_string()) {
                std::string state = a.value("hostState", "");
                pane = "on " + a["host"].get<std::string>() +
                       (state == "up" || state.empty() ? "" : " (" + state + ")");
            }
            // What it spends (SPEC 18); the leader has no row.
            const nlohmann::json usage = a.contains("usage") ? a["usage"] : nlohmann::json();
            std::string tokens = usage.is_object() ? tokens_cell(usage["tokens"]["total"]) : "-";
            std::string cost = usage.is_object() ? cost_cell(usage) : "-";
            if (usage.is_object() && usage["stoppedBy"].is_string()) cost = out.red(cost);
            table.add({name, live ? out.green(status) : out.dim(status), activity_cell(out, a, now),
                       tokens, cost, memory_cell(usage), pane,
                       a["pid"].is_number() ? a["pid"].dump() : "-",
                       a["color"].is_string() ? a["color"].get<std::string>() : "-",
                       live && open.contains(name) ? open[name].dump() : "-",
                       relative_time(parse_iso8601(a["createdAt"]), now), exit});
        }
        table.print(out);
        print_waiting(out, r.doc);
        print_worktrees(out, r.doc);
        print_acp(out, r.doc);
    });
    cmd->footer(
        "Every agent is first checked against its process and tmux: one whose process has ended\n"
        "is shown terminated, with how it ended.\nExample: team agents --json");
}

}  // namespace team::cli
