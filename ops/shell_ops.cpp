// The operations of background shells and of `team run` (SPEC 8).
#include <filesystem>

#include "base/error.hpp"
#include "ops/operation.hpp"
#include "ops/table.hpp"
#include "proc/signals.hpp"
#include "shells/foreground.hpp"
#include "shells/shells.hpp"

namespace team::ops {

namespace {

// The signals a shell's kill and run's timeout offer (proc::parse_signal takes more).
const std::vector<std::string>& signal_choices() {
    static const std::vector<std::string> kSignals{"SIGTERM", "SIGINT", "SIGKILL"};
    return kSignals;
}

using shells::Millis;
using shells::Shells;

nlohmann::json or_null(const auto& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// --agent NAME: attributes to that member; without it, an agent calling from its pane
// (TEAM_AGENT_ID) owns what it starts.
std::optional<std::string> shell_agent(Request& r, const std::optional<TeamRecord>& team,
                                       const std::string& agent) {
    if (!agent.empty()) {
        if (!team) throw usage_error("--agent needs a team: give --team NAME");
        return Caller(r.core.teams().resolve_caller(*team, agent)).id();
    }
    if (team) {
        Caller caller = r.core.caller(*team);
        if (!caller.is_leader) return caller.id();
    }
    return std::nullopt;
}

Result start_shell(Request& r) {
    const auto& a = r.args;
    std::string agent = a.string("agent");
    // A shell works in a team only when one is named, or when --agent names one of its members.
    std::optional<TeamRecord> team = r.team;
    if (!agent.empty() && !team) team = r.core.team();
    shells::ShellStart request;
    request.argv = a.strings("command");
    std::string cwd = a.string("cwd");
    request.cwd = cwd.empty() ? std::filesystem::current_path().string() : cwd;
    request.env = a.strings("env");
    request.timeout = a.duration("timeout");
    if (auto limit = a.integer("output_limit")) request.output_limit = *limit;
    if (team) request.team_id = team->id;
    request.agent = shell_agent(r, team, agent);
    request.actor = r.core.actor(team);
    Shells shells(r.core.store(), r.core.clock());
    ShellRecord s = shells.start(request);
    Result result({{"success", true},
                   {"shell_id", s.id},
                   {"pid", or_null(s.pid)},
                   {"output_file", s.output_file}});
    result.view = {{"command", s.command}};
    return result;
}

Result list_shells(Request& r) {
    bool all = r.args.flag("all");
    nlohmann::json doc = nlohmann::json::array();
    Result result(doc);
    result.view = {{"all", all}, {"home", false}};
    if (!r.core.has_store()) return result;
    std::optional<std::string> agent;
    if (auto name = r.args.optional_string("agent"); name && !name->empty()) {
        agent = Caller(r.core.teams().resolve_caller(r.core.team(), *name)).id();
    }
    Shells shells(r.core.store(), r.core.clock());
    for (const auto& s : shells.list(all, agent)) doc.push_back(shells::to_json(s));
    result.doc = doc;
    result.view["home"] = true;
    return result;
}

Result shell_status(Request& r) {
    Shells shells(r.core.store(), r.core.clock());
    return {shells::to_json(shells.get(r.args.string("id")))};
}

// Without --follow: {output, truncated, exitStatus}. With it: each piece of output as a
// progress event {output} as it comes, then {exitStatus}; a face that takes no progress gets
// the whole {output, exitStatus} at the end.
Result shell_output(Request& r) {
    Shells shells(r.core.store(), r.core.clock());
    std::string id = r.args.string("id");
    ShellRecord s = shells.get(id);
    std::optional<std::size_t> limit;
    if (auto n = r.args.integer("limit")) limit = static_cast<std::size_t>(*n);
    if (!r.args.flag("follow")) {
        auto slice = shells.output(s, limit);
        return {{{"output", slice.output},
                 {"truncated", slice.truncated},
                 {"exitStatus", shells::exit_status_json(s)}}};
    }
    std::string gathered;
    s = shells.follow(id, limit, [&](std::string_view fresh) {
        if (r.progress) {
            r.progress({{"output", std::string(fresh)}});
        } else {
            gathered += fresh;
        }
    });
    if (r.progress) return {{{"exitStatus", shells::exit_status_json(s)}}};
    return {{{"output", gathered}, {"exitStatus", shells::exit_status_json(s)}}};
}

Result wait_shell(Request& r) {
    std::string id = r.args.string("id");
    Shells shells(r.core.store(), r.core.clock());
    auto s = shells.wait(id, r.args.duration("timeout"));
    if (!s) {
        throw Error(ErrorCode::timeout, id + " still running after " + r.args.string("timeout"));
    }
    Result result(shells::exit_status_json(*s));
    result.view = {{"id", s->id}, {"status", str(s->status)}, {"error", or_null(s->error)}};
    return result;
}

// team run: the command's output as progress events {output} as it comes (a face that takes
// none gets it in the result only); the result's exit code is the command's (SPEC 8).
Result run_command(Request& r) {
    const auto& a = r.args;
    shells::ForegroundRun run;
    run.argv = a.strings("command");
    run.timeout = a.duration("timeout");
    run.signal = proc::parse_signal(a.string("signal"), a.label("signal"), true);
    run.grace = a.duration("grace").value();
    run.output_limit = static_cast<std::size_t>(a.integer("output_limit").value());
    auto echo = [&](std::string_view chunk) {
        if (r.progress) r.progress({{"output", std::string(chunk)}});
    };
    auto result = shells::run_foreground(run, echo);
    const auto& st = result.status;
    Result out({{"exitStatus",
                 {{"exitCode", or_null(st.exit_code)},
                  {"signal", st.signal ? nlohmann::json(proc::signal_name(*st.signal)) : nullptr}}},
                {"timedOut", result.timed_out},
                {"output", result.output},
                {"truncated", result.truncated}},
               result.exit_code());
    out.exit_is_answer = !result.timed_out;  // the command's own exit status
    out.view = {{"timeout", a.string("timeout")}};
    return out;
}

// The team a shell belongs to, if any (for the actor of what is done to it).
std::optional<TeamRecord> team_of(Core& core, const ShellRecord& shell) {
    if (!shell.team_id) return std::nullopt;
    return core.teams().find_by_id(*shell.team_id);
}

Result kill_shell(Request& r) {
    const auto& a = r.args;
    std::string id = a.string("id");
    int sig = proc::parse_signal(a.string("signal"), a.label("signal"), true);
    Millis timeout = a.duration("timeout").value();
    if (!r.core.has_store()) throw not_found("Shell not found: " + id);
    Shells shells(r.core.store(), r.core.clock());
    auto shell = shells.get(id);
    shells::KillResult k =
        shells.kill(id, sig, timeout, !a.flag("no_force"), r.core.actor(team_of(r.core, shell)));
    nlohmann::json doc = {
        {"success", k.success},
        {"shell_id", id},
        {"signal_sent", k.signal_sent},
        {"force_killed", k.force_killed},
        {"exit_code", k.shell.exit_code ? nlohmann::json(*k.shell.exit_code) : nullptr},
        {"exitStatus", shells::exit_status_json(k.shell)},
        {"error", k.error ? nlohmann::json(*k.error) : nullptr}};
    return {doc, k.success ? 0 : 1};
}

// The kill keeps its shape on every error (SPEC 1.4).
nlohmann::json kill_shell_shape(const nlohmann::json& values) {
    auto id = values.find("id");
    std::string shell = id != values.end() && id->is_string() ? id->get<std::string>() : "";
    return {{"success", false},      {"shell_id", shell},    {"signal_sent", "none"},
            {"force_killed", false}, {"exit_code", nullptr}, {"exitStatus", nullptr},
            {"error", nullptr}};
}

Result release_shell(Request& r) {
    Shells shells(r.core.store(), r.core.clock());
    auto s = shells.get(r.args.string("id"));
    shells.release(s.id, r.core.actor(team_of(r.core, s)));
    return {{{"success", true}, {"shell_id", s.id}}};
}

Result gc_shells(Request& r) {
    Millis age = r.args.duration("older_than").value();
    std::vector<std::string> ids;
    if (r.core.has_store()) {
        Shells shells(r.core.store(), r.core.clock());
        ids = shells.gc(age, r.core.actor(r.core.named_team()));
    }
    return {{{"released", ids}}};
}

// SPEC 16: a shell on another host of the store, started, looked at and ended by that host's
// own team (ops/remote.hpp).
const Param kShellHost{.name = "host",
                       .help = "on this host of the store (team host add) rather than here",
                       .placeholder = "NAME"};

}  // namespace

const Operation start_shell_op{
    .name = "start_shell",
    .command = "shell start",
    .tool = "shell_start",
    .routes = {{"POST", "/api/teams/{team}/shells"}},
    .summary = "start CMD in the background and return at once",
    .params = {{.name = "agent",
                .help = "attribute the shell to this agent of the team",
                .placeholder = "NAME",
                .kind = Kind::agent},
               {.name = "cwd",
                .help = "where CMD runs (default: the current directory)",
                .placeholder = "DIR",
                .kind = Kind::dir},
               {.name = "env",
                .type = Type::strings,
                .help = "an environment variable for CMD (repeatable)",
                .placeholder = "K=V"},
               {.name = "timeout",
                .type = Type::duration,
                .help = "kill CMD (SIGTERM, 5s, SIGKILL) after this long",
                .placeholder = "DUR"},
               {.name = "output_limit",
                .type = Type::integer,
                .help = "keep only the last BYTES of output",
                .placeholder = "BYTES",
                .default_text = "16777216",
                .min = 1},
               {.name = "command",
                .type = Type::command,
                .help = "the command and its arguments, executed as given (never through a shell)",
                .placeholder = "CMD",
                .required = true},
               kShellHost},
    .access = Access::write,
    .scope = Scope::named_team,
    .host_param = "host",
    .body = start_shell,
};

const Operation list_shells_op{
    .name = "list_shells",
    .command = "shell list",
    .tool = "shell_list",
    .routes = {{"GET", "/api/teams/{team}/shells"}},
    .summary = "running background shells: id, command, started, status",
    .params = {{.name = "all", .type = Type::boolean, .help = "also list finished shells"},
               {.name = "agent",
                .help = "only the shells of this agent",
                .placeholder = "NAME",
                .kind = Kind::agent},
               kShellHost},
    .scope = Scope::none,
    .host_param = "host",
    .body = list_shells,
};

const Operation shell_status_op{
    .name = "shell_status",
    .command = "shell status",
    .tool = "shell_status",
    .routes = {{"GET", "/api/teams/{team}/shells/{id}"}},
    .summary = "one shell's record",
    .params = {{.name = "id",
                .help = "the shell (bg-xxxxxx)",
                .placeholder = "ID",
                .required = true,
                .positional = true,
                .kind = Kind::shell},
               kShellHost},
    .scope = Scope::none,
    .host_param = "host",
    .body = shell_status,
};

const Operation shell_output_op{
    .name = "shell_output",
    .command = "shell output",
    .tool = "shell_output",
    .routes = {{"GET", "/api/teams/{team}/shells/{id}/output"}},
    .summary = "what the shell printed (stdout and stderr together)",
    .params = {{.name = "id",
                .help = "the shell",
                .placeholder = "ID",
                .required = true,
                .positional = true,
                .kind = Kind::shell},
               {.name = "limit",
                .type = Type::integer,
                .help = "only the last BYTES (never cutting a UTF-8 character)",
                .placeholder = "BYTES",
                .min = 1},
               {.name = "follow",
                .type = Type::boolean,
                .help = "keep printing output as it comes, until the shell ends"},
               kShellHost},
    .scope = Scope::none,
    .waits = true,
    .host_param = "host",
    .body = shell_output,
};

const Operation wait_shell_op{
    .name = "wait_shell",
    .command = "shell wait",
    .tool = "shell_wait",
    .no_route = "not in SPEC 13: GET .../shells/{id} shows the status, /api/events its end",
    .summary = "block until the shell ends; exit 124 on --timeout",
    .params = {{.name = "id",
                .help = "the shell",
                .placeholder = "ID",
                .required = true,
                .positional = true,
                .kind = Kind::shell},
               {.name = "timeout",
                .type = Type::duration,
                .help = "give up after this long (exit 124)",
                .placeholder = "DUR"},
               kShellHost},
    .scope = Scope::none,
    .waits = true,
    .host_param = "host",
    .body = wait_shell,
};

const Operation run_op{
    .name = "run",
    .command = "run",
    .tool = "run",
    .no_route = "not in SPEC 13: a command in the caller's foreground",
    .summary = "run CMD in the foreground, killing its whole tree at --timeout",
    .params = {{.name = "timeout",
                .type = Type::duration,
                .help = "kill the command's whole tree after this long (exit 124)",
                .placeholder = "DUR"},
               {.name = "output_limit",
                .type = Type::integer,
                .help = "bytes of output kept for --json (the end)",
                .placeholder = "BYTES",
                .default_text = "1048576",
                .min = 1},
               {.name = "signal",
                .help = "the signal sent at the timeout",
                .placeholder = "SIG",
                .default_text = "SIGTERM",
                .choices = signal_choices},
               {.name = "grace",
                .type = Type::duration,
                .help = "how long after the signal before SIGKILL",
                .placeholder = "DUR",
                .default_text = "5s"},
               {.name = "command",
                .type = Type::command,
                .help = "the command and its arguments, executed as given (never through a shell)",
                .placeholder = "CMD",
                .required = true}},
    .scope = Scope::none,
    .waits = true,
    .body = run_command,
};

const Operation kill_shell_op{
    .name = "kill_shell",
    .command = "shell kill",
    .tool = "kill_shell",
    .routes = {{"POST", "/api/teams/{team}/shells/{id}/kill"}},
    .summary = "signal the shell's whole process tree, then SIGKILL what is left",
    .params = {{.name = "id",
                .help = "the shell",
                .placeholder = "ID",
                .required = true,
                .positional = true,
                .kind = Kind::shell},
               {.name = "signal",
                .help = "the first signal: SIGTERM, SIGINT or SIGKILL",
                .placeholder = "SIG",
                .default_text = "SIGTERM",
                .choices = signal_choices},
               {.name = "timeout",
                .type = Type::duration,
                .help = "how long the tree gets to end before SIGKILL",
                .placeholder = "DUR",
                .default_text = "5s"},
               {.name = "no_force",
                .type = Type::boolean,
                .help = "never send SIGKILL; report what is still running"},
               kShellHost},
    .access = Access::write,
    .scope = Scope::none,
    .waits = true,
    .host_param = "host",
    .body = kill_shell,
    .error_shape = kill_shell_shape,
};

const Operation release_shell_op{
    .name = "release_shell",
    .command = "shell release",
    .tool = "shell_release",
    .no_route = "not in SPEC 13",
    .summary = "kill the shell if running, delete its output, forget it",
    .params = {{.name = "id",
                .help = "the shell",
                .placeholder = "ID",
                .required = true,
                .positional = true,
                .kind = Kind::shell},
               kShellHost},
    .access = Access::write,
    .scope = Scope::none,
    .host_param = "host",
    .body = release_shell,
};

const Operation gc_shells_op{
    .name = "gc_shells",
    .command = "shell gc",
    .no_tool = "not in SPEC 12: the home's housekeeping, a person's",
    .no_route = "not in SPEC 13: the home's housekeeping, a person's",
    .summary = "release finished shells older than DUR",
    .params = {{.name = "older_than",
                .type = Type::duration,
                .help = "only shells that ended longer ago than this",
                .placeholder = "DUR",
                .default_text = "1h"}},
    .access = Access::write,
    .scope = Scope::none,
    .body = gc_shells,
};

}  // namespace team::ops
