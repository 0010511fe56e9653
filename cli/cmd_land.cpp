// team land [NAME...] [--check CMD] [--into BRANCH] [--strategy S] [--check-timeout DUR]
//           [--stop-on-failure] [--dry-run]; team lands [--limit N]      (SPEC 20)
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "base/cancel.hpp"
#include "base/error.hpp"
#include "cli/commands.hpp"
#include "cli/op_command.hpp"
#include "ops/table.hpp"

namespace team::cli {

namespace {

using json = nlohmann::json;

std::string text_or(const json& v, const std::string& none) {
    return v.is_string() ? v.get<std::string>() : none;
}

// What a row's last column says: the new commit, the files, the check's code and shell, or why.
std::string detail(const json& row) {
    std::string outcome = row.value("outcome", "");
    if (outcome == "landed") return text_or(row["commit"], "").substr(0, 12);
    if (outcome == "conflict") {
        std::string files;
        for (const auto& f : row["files"])
            files += (files.empty() ? "" : ", ") + f.get<std::string>();
        return "in " + files;
    }
    if (outcome == "check_failed") {
        std::string code = row["exitCode"].is_number()
                               ? "exit " + std::to_string(row["exitCode"].get<int>())
                               : text_or(row["signal"], "ended");
        return code + " (team shell output " + text_or(row["shellId"], "?") + ")";
    }
    return text_or(row["why"], "");
}

void print_rows(Context& ctx, const json& branches, bool dry) {
    auto& out = ctx.out();
    Table table({"AGENT", "BRANCH", dry ? "WOULD BE" : "OUTCOME", "DETAIL"});
    for (const auto& row : branches) {
        std::string outcome = row.value("outcome", "");
        std::string shown = outcome == "landed" || outcome == "would_land" ? out.green(outcome)
                            : outcome == "skipped"                         ? out.yellow(outcome)
                                                                           : out.red(outcome);
        table.add({row.value("agent", ""), row.value("branch", ""), shown, detail(row)});
    }
    table.print(out);
}

void print_land(Context& ctx, const ops::Result& r) {
    const auto& doc = r.doc;
    auto& out = ctx.out();
    bool dry = doc.value("dryRun", false);
    for (const auto& row : doc["recovered"]) {
        out.line("land " + std::to_string(row.value("landId", 0)) +
                 " (killed before): " + row.value("agent", std::string("scratch")) + " " +
                 row.value("outcome", std::string("kept")) + " - " +
                 out.dim(text_or(row["why"], "")));
    }
    if (doc["branches"].empty()) {
        out.line("no branch to land on " + doc.value("into", std::string("?")) +
                 " (name agents, or wait until they have ended or are idle with commits ahead)");
    } else {
        print_rows(ctx, doc["branches"], dry);
        for (const auto& row : doc["branches"]) {
            if (row.value("outcome", "") != "check_failed" || !row["outputTail"].is_string() ||
                row["outputTail"].get<std::string>().empty())
                continue;
            out.line(row.value("agent", "") + ": the check's last lines:");
            out.line(out.dim(row["outputTail"].get<std::string>()));
        }
    }
    if (doc["warning"].is_string())
        out.line(out.yellow("warning: ") + doc["warning"].get<std::string>());
    if (!dry && doc.value("success", true)) {
        out.line(std::to_string(doc.value("landed", 0)) + " landed on " +
                 doc.value("into", std::string("?")));
    }
    if (doc.value("success", true) == false) throw failed(doc["error"].get<std::string>());
}

// Progress, on a terminal only: a line as each branch's check starts and as it is decided.
void print_progress(Context& ctx, const json& event) {
    if (ctx.out().json() || !::isatty(STDERR_FILENO)) return;
    std::string line;
    std::string what = event.value("event", "");
    if (what == "queued") {
        line = "landing " + std::to_string(event["branches"].size()) + " branch(es), land " +
               std::to_string(event.value("landId", 0)) + "...\n";
    } else if (what == "checking") {
        line =
            "  " + event.value("agent", "") + ": checking (" + event.value("shellId", "") + ")\n";
    } else if (what == "retry") {
        line = "  " + event.value("agent", "") + ": the target moved during the check; again\n";
    } else if (what == "branch") {
        const auto& row = event["row"];
        line = "  " + row.value("agent", "") + ": " + row.value("outcome", "") + " " + detail(row) +
               "\n";
    }
    std::fwrite(line.data(), 1, line.size(), stderr);
}

// A Ctrl-C (or SIGTERM, SIGHUP) during a land cancels it as a withdrawn MCP request does: the
// check under way is ended with its tree, its land finished (its branch interrupted, the scratch
// worktree removed), and the command fails saying so. The handler only writes to a pipe.
int g_interrupt_write = -1;

void on_interrupt(int) {
    if (g_interrupt_write >= 0) {
        char c = 1;
        [[maybe_unused]] auto n = ::write(g_interrupt_write, &c, 1);
    }
}

void cancel_on_interrupt(const Context&, json&) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return;
    g_interrupt_write = fds[1];
    set_thread_cancel_fd(fds[0]);
    struct sigaction sa = {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
}

void print_lands(Context& ctx, const ops::Result& r) {
    auto& out = ctx.out();
    if (r.doc.empty()) {
        out.line("no land yet");
        return;
    }
    for (const auto& land : r.doc) {
        out.line(out.bold("land " + std::to_string(land.value("landId", 0))) + " onto " +
                 land.value("into", "") + " (" + land.value("strategy", "") + "), " +
                 land.value("status", "") + ", started " + land.value("startedAt", "") + " by " +
                 land.value("startedBy", ""));
        print_rows(ctx, land["branches"], false);
    }
}

}  // namespace

void add_land_command(CLI::App& app) {
    auto* cmd = add_operation(app, ops::land_op, print_land, print_progress, cancel_on_interrupt);
    cmd->footer(
        "Each branch is brought onto the target as it is at that moment, in a scratch worktree\n"
        "of team's own; the check runs there as a team shell; only exit 0 moves the target,\n"
        "and only if nobody moved it meanwhile (else the branch is taken again). A conflict or\n"
        "a red check changes nothing: the agent (or the leader) gets a message. The checkout of\n"
        "the target moves with it when it is clean; uncommitted work there holds the land.\n"
        "Exit 0 when no branch failed, 1 when one did (every row is shown either way).\n"
        "Examples:\n"
        "  team create app --repo . --check 'make test'\n"
        "  team land --dry-run\n"
        "  team land w1 w2 --strategy squash\n"
        "  team land --check 'npm test' --into release --stop-on-failure");
}

void add_lands_command(CLI::App& app) {
    auto* cmd = add_operation(app, ops::lands_op, print_lands);
    cmd->footer("Examples:\n  team lands\n  team lands --limit 1 --json");
}

}  // namespace team::cli
