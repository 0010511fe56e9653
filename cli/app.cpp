#include "cli/app.hpp"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "base/error.hpp"
#include "base/names.hpp"
#include "base/umask.hpp"
#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "cli/input.hpp"
#include "cli/tool_commands.hpp"
#include "ops/operation.hpp"

namespace team::cli {

namespace {

constexpr const char* kGlobalHelp =
    "Global options (before or after the command):\n"
    "  --home DIR       where all state lives [env: TEAM_HOME]\n"
    "  --store URL      the store: postgresql://… or sqlite [env: TEAM_STORE]\n"
    "  -t,--team NAME   the team to act on [env: TEAM_NAME]\n"
    "  --as NAME        who is calling: agent name or name@team [env: TEAM_AGENT_ID]\n"
    "  --json           machine output: one JSON document on stdout\n"
    "  --no-color       plain human output [env: NO_COLOR]\n";

// "Exit codes: 0 ok, 1 failed, …": every code of base/error.hpp's table, in order.
std::string exit_codes_line() {
    std::vector<const ErrorKind*> kinds;
    for (const auto& k : kErrorKinds) kinds.push_back(&k);
    std::sort(kinds.begin(), kinds.end(), [](auto* a, auto* b) { return a->exit < b->exit; });
    std::string line = "Exit codes: 0 ok";
    for (const auto* k : kinds) {
        std::string name(k->name);
        std::replace(name.begin(), name.end(), '_', ' ');
        line += ", " + std::to_string(k->exit) + " " + name;
    }
    return line + ".";
}

std::optional<std::string> env(const char* name) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return std::nullopt;
    return std::string(v);
}

int report(const Error& e, bool json) {
    if (json) {
        Output(true, false).print_json(ops::error_document(e));
    } else {
        std::string text = std::string("team: error: ") + e.what() + "\n";
        std::fwrite(text.data(), 1, text.size(), stderr);
    }
    return exit_code(e.code());
}

// Global options that take a value, so the value is not mistaken for the command name.
bool takes_value(const std::string& arg) {
    return arg == "--home" || arg == "--store" || arg == "-t" || arg == "--team" || arg == "--as";
}

// The first word that is not an option: the command the user meant.
std::optional<std::string> command_word(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "--") return std::nullopt;
        if (takes_value(arg)) {
            ++i;
            continue;
        }
        if (!arg.empty() && arg[0] == '-') continue;
        return arg;
    }
    return std::nullopt;
}

// Whether -h/--help stands before the command word (then the whole program's help is asked).
bool help_before_command(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "-h" || arg == "--help") return true;
        if (takes_value(arg)) {
            ++i;
            continue;
        }
        if (arg.empty() || arg[0] != '-') return false;
    }
    return false;
}

// CLI11's messages, in the house style: lowercase, and pointing at the right help.
std::string parse_error_message(const CLI::ParseError& e, const std::optional<std::string>& cmd) {
    std::string what = e.what();
    if (what == "A subcommand is required") what = "a command is required";
    if (!what.empty() && what[0] >= 'A' && what[0] <= 'Z' &&
        !(what.size() > 1 && what[1] >= 'A' && what[1] <= 'Z')) {
        what[0] = static_cast<char>(what[0] - 'A' + 'a');
    }
    return what + " (see 'team " + (cmd ? *cmd + " " : "") + "--help')";
}

void check_command_word(const CLI::App& app, int argc, char** argv) {
    auto word = command_word(argc, argv);
    if (!word) return;
    std::vector<std::string> names;
    for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
        if (sub->get_name() == *word) return;
        if (sub->get_group() != "") names.push_back(sub->get_name());
    }
    throw usage_error("unknown command " + quote(*word) + did_you_mean(*word, names) +
                      " (see 'team --help')");
}

void add_global_options(CLI::App& app, GlobalOptions& g, std::string& home, std::string& team,
                        std::string& as) {
    app.add_option("--home", home,
                   "where all state lives [env: TEAM_HOME; default: $XDG_STATE_HOME/team, "
                   "else ~/.local/state/team]")
        ->type_name("DIR");
    app.add_option("--store", g.store,
                   "the store: a PostgreSQL connection string (postgresql://…, the password in "
                   "~/.pgpass) or sqlite [env: TEAM_STORE; default: the home's config, else "
                   "sqlite]")
        ->type_name("URL");
    app.add_option("-t,--team", team,
                   "the team to act on [env: TEAM_NAME; default: the only live team]")
        ->type_name("NAME");
    app.add_option("--as", as,
                   "who is calling: an agent name or name@team [env: TEAM_AGENT_ID; default: "
                   "the team's leader]")
        ->type_name("NAME");
    app.add_flag("--json", g.json, "machine output: exactly one JSON document on stdout");
    app.add_flag("--no-color", g.no_color, "plain human output [env: NO_COLOR]");
}

// Every command, with the function of its file that declares it.
struct Command {
    const char* name;
    void (*add)(CLI::App&);
};
const Command kCommands[] = {
    {"create", add_create_command},
    {"list", add_list_command},
    {"status", add_status_command},
    {"delete", add_delete_command},
    {"activity", add_activity_command},
    {"spawn", add_spawn_command},
    {"agents", add_agents_command},
    {"attach", add_attach_command},
    {"logs", add_logs_command},
    {"prompt", add_prompt_command},
    {"wait", add_wait_command},
    {"usage", add_usage_command},
    {"send", add_send_command},
    {"inbox", add_inbox_command},
    {"task", add_task_command},
    {"kill-agent", add_kill_command},
    {"shutdown", add_shutdown_command},
    {"teardown", add_teardown_command},
    {"resume", add_resume_command},
    {"diff", add_diff_command},
    {"merge", add_merge_command},
    {"worktree", add_worktree_command},
    {"land", add_land_command},
    {"lands", add_lands_command},
    {"cancel", add_cancel_command},
    {"permission", add_permission_command},
    {"shell", add_shell_command},
    {"session", add_session_command},
    {"run", add_run_command},
    {"config", add_config_command},
    {"doctor", add_doctor_command},
    {"store", add_store_command},
    {"host", add_host_command},
    {"__supervise", add_supervise_command},
    {"__agent", add_supervise_command},  // declares the three hidden supervisors
    {"__acp", add_supervise_command},
    {"__watch", add_supervise_command},
    {"__report", add_supervise_command},
    {"__screen", add_supervise_command},
    {"__notify", add_supervise_command},
    {"__claude-state", add_supervise_command},
    {"__usage", add_supervise_command},
    {"__link", add_supervise_command},
    {"__keeper", add_supervise_command},
    {"__channel", add_supervise_command},
    {"mcp", add_mcp_command},      // the MCP server (mcp/)
    {"serve", add_serve_command},  // the HTTP API and dashboard (http/)
    {"completion", add_completion_command},
    {"__complete", add_completion_command},  // declares both, the hidden one too
    {"__man", add_man_command},
};

// Declares the command named `only`, or every command when none is named.
void add_commands(CLI::App& app, const char* only) {
    for (const auto& c : kCommands) {
        if (only
                ? std::strcmp(c.name, only) == 0
                : std::strcmp(c.name, "__agent") != 0 && std::strcmp(c.name, "__acp") != 0 &&
                      std::strcmp(c.name, "__watch") != 0 && std::strcmp(c.name, "__link") != 0 &&
                      std::strcmp(c.name, "__report") != 0 &&
                      std::strcmp(c.name, "__screen") != 0 &&
                      std::strcmp(c.name, "__notify") != 0 &&
                      std::strcmp(c.name, "__claude-state") != 0 &&
                      std::strcmp(c.name, "__usage") != 0 && std::strcmp(c.name, "__keeper") != 0 &&
                      std::strcmp(c.name, "__channel") != 0 &&
                      std::strcmp(c.name, "__complete") != 0) {
            c.add(app);
        }
    }
}

}  // namespace

void add_all_commands(CLI::App& app) {
    add_commands(app, nullptr);
}

void declare_all(CLI::App& app) {
    // The values are never read: storage that outlives the declared options is all they need.
    static GlobalOptions g;
    static std::string home, team, as;
    add_global_options(app, g, home, team, as);
    add_commands(app, nullptr);
}

int run(int argc, char** argv) {
    // Everything team creates (home, database, logs, lock files) is private to the user; what
    // it runs gets the user's umask back (base/umask.hpp).
    make_files_private();

    bool json_requested = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--") == 0) break;
        if (std::strcmp(argv[i], "--json") == 0) json_requested = true;
    }

    CLI::App app{
        "team: run teams of coding agents side by side in tmux panes; hand out tasks, talk\n"
        "through inboxes, and stop agents gracefully or by force, leaving nothing behind.",
        "team"};
    app.set_version_flag("--version", version());
    app.fallthrough();  // global options may stand after the command too
    app.require_subcommand(1);
    app.footer(exit_codes_line() +
               "\nRun 'team COMMAND --help' for a command's options. Guide: docs/guide.md");

    GlobalOptions g;
    std::string home, team, as;
    add_global_options(app, g, home, team, as);
    // Declaring every command's options costs more than most commands' own work (CLI11 builds
    // an object per option), so when the command word is known only that command is declared.
    // Without one (team, team --help, a typo) all are, for the listing and the did-you-mean.
    const char* only = nullptr;
    if (auto word = command_word(argc, argv); word && !help_before_command(argc, argv)) {
        for (const auto& c : kCommands) {
            if (*word == c.name) only = c.name;
        }
    }
    add_commands(app, only);

    // Subcommand help lists only the subcommand's own options: name the global ones too, at
    // every level (team shell kill --help as well as team shell --help).
    std::function<void(CLI::App&)> add_global_help = [&](CLI::App& parent) {
        for (auto* sub : parent.get_subcommands([](const CLI::App*) { return true; })) {
            sub->footer(sub->get_footer() + (sub->get_footer().empty() ? "" : "\n\n") +
                        kGlobalHelp + exit_codes_line());
            add_global_help(*sub);
        }
    };
    add_global_help(app);

    try {
        check_command_word(app, argc, argv);
        // What follows "--" of a command that runs a command is kept from CLI11 (see input.hpp).
        std::vector<std::string> args = split_command_line(app, argc, argv);
        std::vector<char*> head{argv[0]};
        for (auto& a : args) head.push_back(a.data());
        app.parse(static_cast<int>(head.size()), head.data());
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        if (argc <= 1) {
            std::fputs(app.help().c_str(), stderr);
            return 2;
        }
        return report(usage_error(parse_error_message(e, command_word(argc, argv))),
                      json_requested);
    } catch (const Error& e) {
        return report(e, json_requested);
    }

    // A --json that CLI11 took as the value of an option before it (`--team= --json`) still
    // asks for JSON: the caller parses stdout either way.
    g.json = g.json || json_requested;
    if (!home.empty()) g.home = home;
    // The store is the environment's: processes team starts (supervisors) inherit it.
    if (!g.store.empty()) ::setenv("TEAM_STORE", g.store.c_str(), 1);
    g.team = !team.empty() ? std::optional(team) : env("TEAM_NAME");
    g.as = !as.empty() ? std::optional(as) : env("TEAM_AGENT_ID");
    g.no_color = g.no_color || env("NO_COLOR").has_value();
    bool color = !g.json && !g.no_color && ::isatty(STDOUT_FILENO);
    Output out(g.json, color);
    Context context(g, out);

    try {
        try {
            return selected_action()(context);
        } catch (const Error&) {
            throw;
        } catch (const std::exception& e) {
            rethrow_store_error(e);
        }
    } catch (const Error& e) {
        return report(e, g.json);
    }
}

}  // namespace team::cli
