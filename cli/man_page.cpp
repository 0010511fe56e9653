// The hidden `team __man`: the manual page team(1) in roff, from the command line's model
// (cli/command_model.hpp: every command with its arguments, options and notes), with the exit
// codes of SPEC 1.4, the environment of SPEC 1.1 and of an agent's pane, and the files of a
// home. The build runs it after linking (CMakeLists.txt), so the page always matches the binary.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/app.hpp"
#include "cli/command_model.hpp"
#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "cli/tool_commands.hpp"

namespace team::cli {

namespace {

// Text as roff prints it: backslashes and hyphens escaped, no line that starts a request.
std::string roff(const std::string& text) {
    std::string out;
    bool line_start = true;
    for (char ch : text) {
        if (line_start && (ch == '.' || ch == '\'')) out += "\\&";
        if (ch == '\\') {
            out += "\\e";
        } else if (ch == '-') {
            out += "\\-";
        } else {
            out += ch;
        }
        line_start = ch == '\n';
    }
    return out;
}

// Text that flows (summaries, help): one line, as roff fills it.
std::string flowing(const std::string& text) {
    std::string one = text;
    for (auto& ch : one) {
        if (ch == '\n') ch = ' ';
    }
    return roff(one);
}

std::string bold(const std::string& text) {
    return "\\fB" + roff(text) + "\\fR";
}

std::string italic(const std::string& text) {
    return "\\fI" + roff(text) + "\\fR";
}

std::string option_heading(const OptionInfo& o) {
    std::string s;
    for (const auto& f : o.flags) s += (s.empty() ? "" : ", ") + bold(f);
    if (o.flags.empty()) return italic(o.placeholder);
    if (o.takes_value) s += " " + italic(o.placeholder);
    return s;
}

void options_section(std::string& page, const std::vector<OptionInfo>& options) {
    for (const auto& o : options) {
        page += ".TP\n" + option_heading(o) + "\n" + flowing(o.help) + "\n";
    }
}

std::string synopsis(const CommandInfo& c) {
    std::string s = bold("team " + c.words);
    for (const auto& a : c.arguments) s += " " + italic(a.placeholder);
    if (!c.options.empty()) s += " [" + italic("OPTIONS") + "]";
    if (!c.subcommands.empty() && c.arguments.empty()) s += " " + italic("COMMAND");
    return s;
}

struct Entry {
    const char* name;
    const char* text;
};

const Entry kExitCodes[] = {
    {"0", "success"},
    {"1", "failed: the operation was tried and failed (a signal could not be sent, tmux failed)"},
    {"2", "usage: bad arguments or bad input; nothing was changed"},
    {"3", "not_found: the named team, agent, task, message or shell does not exist"},
    {"4",
     "refused: not allowed for this caller, or not in this state (already terminated, not the "
     "leader); nothing was changed"},
    {"6",
     "unconfirmed: what was done cannot be confirmed (an agent's host did not answer); it is "
     "never reported as done"},
    {"124", "timeout: a --wait or --timeout ran out before the awaited thing happened"},
};

const Entry kEnvironment[] = {
    {"TEAM_HOME", "where all state lives, as --home"},
    {"TEAM_STORE",
     "the store, as --store: a PostgreSQL connection string (postgresql://…) shared by several "
     "homes, or sqlite; by default the home's config, else the home's own SQLite file"},
    {"XDG_STATE_HOME",
     "the home is $XDG_STATE_HOME/team when neither --home nor TEAM_HOME is given"},
    {"TEAM_NAME", "the team a command acts on, as --team"},
    {"TEAM_AGENT_ID", "who is calling (name or name@team), as --as"},
    {"NO_COLOR", "plain human output, as --no-color"},
    {"TEAM_AGENT_NAME", "set in every agent's pane: the agent's name"},
    {"TEAM_AGENT_COLOR", "set in every agent's pane: the agent's colour"},
    {"TEAM_WORKTREE", "set in the pane of an agent spawned with --worktree: its worktree"},
    {"TEAM_BRANCH", "set in the pane of an agent spawned with --worktree: its branch"},
    {"TEAM_BASE",
     "set in the pane of an agent spawned with --worktree: the commit it started from"},
    {"TEAM_ACP_AGENT", "set for an ACP agent's process: the mark its whole tree is found by"},
    {"TEAM_SHELL_ID", "set for a background shell's command: its id"},
    {"TEAM_SHELL_HOME", "set for a background shell's command: the home it belongs to"},
    {"TEAM_SESSION", "set for a session's commands: the session's name"},
    {"TEAM_SESSION_EXEC",
     "set for a session exec's command: the mark what is left of it is found by"},
    {"TEAM_SESSION_HOME", "set for a session exec's command: the home it belongs to"},
    {"TEAM_LAND_AGENT", "set for a land's check: the agent whose branch it checks"},
    {"TEAM_LAND_BRANCH", "set for a land's check: that branch"},
    {"TEAM_LAND_INTO", "set for a land's check: the branch it lands on"},
    {"TEAM_LAND_ONTO", "set for a land's check: that branch's commit the branch was brought onto"},
    {"TEAM_LAND_COMMIT", "set for a land's check: the commit it checks, which lands if it passes"},
};

const Entry kFiles[] = {
    {"~/.local/state/team/", "the default home (mode 0700)"},
    {"HOME/team.db", "the SQLite store of every team, agent, task, message and shell (0600, WAL)"},
    {"HOME/team.db.init.lock", "held while the store is made or migrated"},
    {"HOME/team.db.write.lock", "the writers' turn of the SQLite store, one writer at a time"},
    {"HOME/id", "the home's id, which tells the homes that share a PostgreSQL store apart"},
    {"HOME/tmux.sock", "the home's private tmux server"},
    {"HOME/tmux.conf", "that server's configuration"},
    {"HOME/logs/", "what each agent's pane showed, kept after the pane is gone"},
    {"HOME/shells/", "the output of background shells (ID.out)"},
    {"HOME/locks/", "the per-team locks of spawn, kill-agent, teardown and land"},
    {"HOME/presets/", "settings files written for spawn presets"},
    {"HOME/spawn/",
     "an agent's --env values on their way to its supervisor (ID.env, removed as it starts)"},
    {"HOME/config", "the home's settings: the store it uses (team store use)"},
    {"HOME/wake/", "the FIFOs through which a commit wakes the waits of this home"},
    {"HOME/hosts/", "the links to other hosts: one socket per host (NAME.sock)"},
    {"HOME/worktrees/", "agents' git worktrees, TEAM/NAME (spawn --worktree)"},
    {"HOME/land/",
     "the scratch worktrees of team land, TEAM-N, removed once its results are recorded"},
    {"HOME/trash/", "discarded worktrees, TEAM/..., kept as a way back (team worktree discard)"},
    {"HOME/keeper.lock", "held by the home's keeper while agents of it run on this host"},
    {"HOME/serve.token", "the token of team serve's HTTP API (0600)"},
    {"HOME/serve.json", "the address and pid of the team serve that runs"},
};

void entries(std::string& page, const char* section, const Entry* begin, const Entry* end,
             bool code) {
    page += ".SH " + std::string(section) + "\n";
    for (const Entry* e = begin; e != end; ++e) {
        page += ".TP\n" + (code ? bold(e->name) : italic(e->name)) + "\n" + roff(e->text) + "\n";
    }
}

std::string man_page() {
    const CommandLine& model = command_line();
    std::string page;
    page += ".TH TEAM 1 \"\" \"team " + roff(version()) + "\" \"User Commands\"\n";
    page += ".SH NAME\nteam \\- run teams of coding agents side by side in tmux panes\n";
    page += ".SH SYNOPSIS\n" + bold("team") + " [" + italic("GLOBAL OPTIONS") + "] " +
            italic("COMMAND") + " [" + italic("ARGS") + "]\n";
    page +=
        ".SH DESCRIPTION\n" +
        roff(
            "team runs coding agents (Claude Code, Codex, Gemini CLI, any program) side by side in "
            "the panes of a private tmux server. A leader spawns agents, hands out tasks, talks to "
            "them through inboxes, and stops them: gracefully, through a three-phase shutdown "
            "handshake, or by force, with their unfinished tasks handed back to the pool. The same "
            "process control runs background shells that can be listed, watched, waited on, timed "
            "out and killed, whole process tree included. Every command also answers in JSON "
            "(--json); the same operations are MCP tools (team mcp) and an HTTP API with a "
            "dashboard (team serve).") +
        "\n";
    page += ".SH GLOBAL OPTIONS\nThey may stand before or after the command.\n";
    options_section(page, model.global);
    page += ".TP\n" + bold("-h") + ", " + bold("--help") + "\n" +
            roff("the help of team, or of the command it follows") + "\n";
    page += ".SH COMMANDS\n";
    for (const auto& c : model.commands) {
        page += ".SS " + synopsis(c) + "\n" + flowing(c.summary) + "\n";
        if (!c.arguments.empty() || !c.options.empty()) {
            page += ".RS\n";
            options_section(page, c.arguments);
            options_section(page, c.options);
            page += ".RE\n";
        }
        if (!c.footer.empty()) page += ".PP\n.nf\n" + roff(c.footer) + "\n.fi\n";
    }
    entries(page, "EXIT STATUS", std::begin(kExitCodes), std::end(kExitCodes), true);
    page += ".PP\n" +
            roff(
                "With --json an error is {\"success\": false, \"error\": \"...\", \"code\": "
                "\"usage\"} on stdout.") +
            "\n";
    entries(page, "ENVIRONMENT", std::begin(kEnvironment), std::end(kEnvironment), true);
    entries(page, "FILES", std::begin(kFiles), std::end(kFiles), false);
    page += ".SH SEE ALSO\n" + bold("tmux") + "(1), " + bold("git") + "(1); " +
            roff("the guide, docs/guide.md, and the doctor: team doctor.") + "\n";
    return page;
}

}  // namespace

void add_man_command(CLI::App& app) {
    auto* cmd = add_command(app, "__man", "", [](Context&) {
        std::string page = man_page();
        std::fwrite(page.data(), 1, page.size(), stdout);
        return 0;
    });
    cmd->group("");
}

}  // namespace team::cli
