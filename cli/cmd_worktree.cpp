// team diff NAME, team merge NAME, team worktree list | restore | rm | gc | repair   (SPEC 14)
#include <CLI/CLI.hpp>

#include "base/error.hpp"
#include "cli/commands.hpp"
#include "cli/op_command.hpp"
#include "ops/table.hpp"

namespace team::cli {

std::string kept_worktree_line(const nlohmann::json& w) {
    std::string line = "kept worktree " + w.value("path", std::string()) + " (branch " +
                       w.value("branch", std::string()) + ")";
    const auto& s = w["snapshot"];
    if (w.value("snapshotOwed", false)) return line + "; its snapshot is still to be taken";
    if (!s.is_object()) return line;
    if (s.value("missing", false)) return line + ": its directory is gone, its branch is kept";
    if (!s.value("taken", false)) return line + ": nothing uncommitted";
    line += ": uncommitted work in " + s["ref"].get<std::string>() + " (" +
            std::to_string(s.value("staged", 0)) + " staged, " +
            std::to_string(s.value("modified", 0)) + " modified, " +
            std::to_string(s.value("untracked", 0)) + " untracked)";
    if (s.value("partial", false)) line += "; " + s.value("note", std::string());
    return line;
}

namespace {

std::string counts(const nlohmann::json& w) {
    if (w.value("missing", false)) return "missing";
    if (!w.contains("clean")) return "-";
    if (w["clean"] == true) return "clean";
    std::string s;
    for (auto [key, word] :
         {std::pair{"staged", " staged"}, {"modified", " modified"}, {"untracked", " untracked"}}) {
        int n = w.value(key, 0);
        if (n) s += (s.empty() ? "" : ", ") + std::to_string(n) + word;
    }
    return s;
}

void add_diff(CLI::App& app) {
    auto* cmd = add_operation(app, ops::diff_agent_op, [](Context& ctx, const ops::Result& r) {
        std::string text = r.doc["diff"];
        if (text.empty()) {
            ctx.out().line(r.doc["wip"] == true ? "no uncommitted work"
                                                : "no change since the base");
            return;
        }
        std::fputs(text.c_str(), stdout);
    });
    cmd->footer(
        "Examples:\n  team diff w1 --stat\n  team diff w1 --wip     (what it has not committed)");
}

void add_merge(CLI::App& app) {
    auto* cmd = add_operation(app, ops::merge_agent_op, [](Context& ctx, const ops::Result& r) {
        const auto& d = r.doc;
        if (d["success"] != true) throw refused(d.value("error", std::string("conflicts")));
        std::string what = d["branch"].get<std::string>() + " into " + d["into"].get<std::string>();
        if (d["merged"] != true) {
            ctx.out().line(what + ": merges cleanly (" + d["strategy"].get<std::string>() +
                           "); nothing was changed");
            return;
        }
        ctx.out().line("merged " + what + " (" + d["strategy"].get<std::string>() +
                       "): " + d["previous"].get<std::string>().substr(0, 12) + " -> " +
                       d["commit"].get<std::string>().substr(0, 12));
    });
    cmd->footer(
        "The check comes first: a conflict is refused with the files named, and nothing\n"
        "changes; so is a dirty agent worktree or a dirty target checkout. A target branch\n"
        "that is not checked out is moved with a compare-and-swap.\n"
        "Examples:\n  team merge w1 --check\n  team merge w1 --strategy squash --into main");
}

void add_worktree_list(CLI::App& parent) {
    add_operation(parent, ops::list_worktrees_op, [](Context& ctx, const ops::Result& r) {
        const auto& out = ctx.out();
        if (r.doc.empty()) {
            out.line("no kept worktree");
            return;
        }
        Table table({"AGENT", "STATE", "BRANCH", "AHEAD", "CHANGES", "SNAPSHOTS", "PATH"});
        for (const auto& w : r.doc) {
            std::string state = w["state"];
            if (w.value("live", false)) state = "in use";
            if (w.value("missing", false)) state = "missing";
            table.add({w["agent"].get<std::string>(), state, w["branch"].get<std::string>(),
                       w.contains("ahead") ? w["ahead"].dump() : "-", counts(w),
                       w.contains("snapshots") ? std::to_string(w["snapshots"].size()) : "-",
                       w["path"].get<std::string>()});
        }
        table.print(out);
    });
}

void add_worktree_restore(CLI::App& parent) {
    add_operation(parent, ops::restore_worktree_op, [](Context& ctx, const ops::Result& r) {
        ctx.out().line("restored " + r.doc["ref"].get<std::string>() + " into " +
                       r.doc["path"].get<std::string>() + " (" + r.doc["staged"].dump() +
                       " staged, " + r.doc["modified"].dump() + " modified, " +
                       r.doc["untracked"].dump() + " untracked)");
    });
}

void add_worktree_rm(CLI::App& parent) {
    auto* cmd =
        add_operation(parent, ops::remove_worktree_op, [](Context& ctx, const ops::Result& r) {
            if (r.doc["state"] == "discarded") {
                std::string snap =
                    r.doc["snapshot"].is_string()
                        ? "its work is in " + r.doc["snapshot"].get<std::string>() + "; "
                        : "";
                ctx.out().line("discarded " + r.doc["path"].get<std::string>() + ": " + snap +
                               "the directory is in " + r.doc["trash"].get<std::string>());
                return;
            }
            ctx.out().line("removed " + r.doc["path"].get<std::string>() +
                           (r.doc.value("branchDeleted", false)
                                ? " and its merged branch " + r.doc["branch"].get<std::string>()
                                : ""));
        });
    cmd->footer(
        "Removed only when nothing can be lost: clean (untracked files too), no ignored files,\n"
        "its branch merged or patch-equivalent into the base, no detached commits, no process\n"
        "in it. Else refused, saying why. --discard snapshots it and moves it to the trash.");
}

void add_worktree_gc(CLI::App& parent) {
    add_operation(parent, ops::gc_worktrees_op, [](Context& ctx, const ops::Result& r) {
        bool dry = r.doc["dryRun"] == true;
        int n = 0;
        for (const auto& w : r.doc["worktrees"]) {
            if (w["removed"] == true) {
                ++n;
                ctx.out().line((dry ? "would remove " : "removed ") + w["path"].get<std::string>());
            } else {
                std::string why;
                for (const auto& k : w["keptBecause"])
                    why += (why.empty() ? "" : "; ") + k.get<std::string>();
                ctx.out().line("kept " + w["path"].get<std::string>() + ": " + why);
            }
        }
        if (n == 0 && r.doc["worktrees"].empty()) ctx.out().line("no kept worktree");
    });
}

void add_worktree_repair(CLI::App& parent) {
    add_operation(parent, ops::repair_worktrees_op, [](Context& ctx, const ops::Result& r) {
        for (const auto& w : r.doc["worktrees"]) {
            ctx.out().line(w["agent"].get<std::string>() + ": " +
                           (w.contains("error") ? w["error"].get<std::string>()
                                                : w["after"].get<std::string>()) +
                           " (" + w["path"].get<std::string>() + ")");
        }
        if (r.doc["worktrees"].empty()) ctx.out().line("no kept worktree");
    });
}

}  // namespace

void add_diff_command(CLI::App& app) {
    add_diff(app);
}

void add_merge_command(CLI::App& app) {
    add_merge(app);
}

void add_worktree_command(CLI::App& app) {
    auto* w =
        app.add_subcommand("worktree", "agents' git worktrees: list, restore, rm, gc, repair");
    w->require_subcommand(1);
    add_worktree_list(*w);
    add_worktree_restore(*w);
    add_worktree_rm(*w);
    add_worktree_gc(*w);
    add_worktree_repair(*w);
    w->footer(
        "A worktree outlives its agent: every stop keeps it, with a snapshot of its uncommitted\n"
        "work under refs/team/snapshots/TEAM/NAME/N. Example: team worktree restore w1");
}

}  // namespace team::cli
