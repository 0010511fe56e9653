// The operations of sessions (SPEC 9).
#include "base/error.hpp"
#include "base/names.hpp"
#include "ops/operation.hpp"
#include "ops/table.hpp"
#include "proc/signals.hpp"
#include "sessions/sessions.hpp"

namespace team::ops {

namespace {

using sessions::SessionRecord;
using sessions::Sessions;
using shells::Millis;

nlohmann::json or_null(const std::optional<std::string>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// The COMMAND-STRING: the words joined with spaces (as ssh does).
std::string command_string(const std::vector<std::string>& words) {
    if (words.empty()) throw usage_error("no command given: team session exec NAME -- 'COMMAND'");
    std::string joined;
    for (const auto& w : words) joined += (joined.empty() ? "" : " ") + w;
    return joined;
}

void check_session_name(const std::string& name) {
    check_name(name, "session name");
}

// team session exec: the command's stdout and stderr as progress events ({stdout} or {stderr},
// as they come) and each warning ({warning}) when it arises; the result's exit code is the
// command's (128+N for signal N, 124 on timeout).
Result exec_in_session(Request& r) {
    const auto& a = r.args;
    sessions::SessionExecRequest request;
    request.name = a.string("name");
    check_session_name(request.name);
    request.timeout = a.duration("timeout");
    request.command = command_string(a.strings("command"));
    request.output_limit = static_cast<std::size_t>(a.integer("output_limit").value());
    if (r.team) request.team_id = r.team->id;
    request.actor = r.core.actor(r.team);
    if (r.progress) {
        request.on_stdout = [&](std::string_view chunk) {
            r.progress({{"stdout", std::string(chunk)}});
        };
        request.on_stderr = [&](std::string_view chunk) {
            r.progress({{"stderr", std::string(chunk)}});
        };
        request.on_warning = [&](const std::string& w) { r.progress({{"warning", w}}); };
    }
    Sessions sessions(r.core.store(), r.core.clock());
    auto result = sessions.exec(request);
    const auto& st = result.status;
    Result out({{"exitCode", st.exit_code ? nlohmann::json(*st.exit_code) : nullptr},
                {"signal", st.signal ? nlohmann::json(proc::signal_name(*st.signal)) : nullptr},
                {"stdout", result.stdout_text},
                {"stderr", result.stderr_text},
                {"cwd", result.cwd},
                {"session", request.name},
                {"timedOut", result.timed_out},
                {"truncated", result.truncated},
                {"stateKept", result.state_kept},
                {"warnings", result.warnings}},
               result.exit_code());
    out.exit_is_answer = !result.timed_out;  // the command's own exit status
    out.view = {{"timeout", a.string("timeout")}};
    return out;
}

Result start_in_session(Request& r) {
    const auto& a = r.args;
    sessions::SessionStartRequest request;
    request.name = a.string("name");
    check_session_name(request.name);
    request.timeout = a.duration("timeout");
    request.output_limit = a.integer("output_limit");
    request.command = command_string(a.strings("command"));
    if (r.team) {
        request.team_id = r.team->id;
        if (!r.caller().is_leader) request.agent = r.caller().id();
    }
    request.actor = r.core.actor(r.team);
    Sessions sessions(r.core.store(), r.core.clock());
    auto [shell, warnings] = sessions.start(request);
    Result out({{"success", true},
                {"shell_id", shell.id},
                {"pid", shell.pid ? nlohmann::json(*shell.pid) : nullptr},
                {"output_file", shell.output_file},
                {"session", request.name},
                {"warnings", warnings}});
    out.view = {{"command", request.command}};
    return out;
}

Result list_sessions(Request& r) {
    nlohmann::json doc = nlohmann::json::array();
    if (!r.core.has_store()) return {doc};
    Sessions sessions(r.core.store(), r.core.clock());
    for (const auto& s : sessions.list()) {
        auto running = sessions.running_execs(s).size() + sessions.running_shells(s).size();
        doc.push_back({{"name", s.name},
                       {"cwd", s.state.cwd},
                       {"running", running},
                       {"commands", s.commands},
                       {"createdBy", s.created_by},
                       {"createdAt", iso8601(s.created_at)},
                       {"lastUsedAt", iso8601(s.updated_at)}});
    }
    return {doc};
}

Result show_session(Request& r) {
    Sessions sessions(r.core.store(), r.core.clock());
    SessionRecord s = sessions.get(r.args.string("name"));
    auto execs = sessions.running_execs(s);
    auto shells = sessions.running_shells(s);
    nlohmann::json running = nlohmann::json::array();
    for (const auto& e : execs) {
        running.push_back({{"kind", "exec"},
                           {"command", e.command},
                           {"pid", e.supervisor_pid},
                           {"by", e.actor},
                           {"startedAt", iso8601(e.started_at)}});
    }
    for (const auto& sh : shells) {
        running.push_back({{"kind", "shell"},
                           {"shellId", sh.id},
                           {"command", sh.command.size() == 3 ? sh.command[2] : ""},
                           {"pid", sh.pid ? nlohmann::json(*sh.pid) : nullptr},
                           {"by", or_null(sh.agent)},
                           {"startedAt", iso8601(sh.started_at)}});
    }
    nlohmann::json doc = {{"name", s.name},
                          {"createdBy", s.created_by},
                          {"createdAt", iso8601(s.created_at)},
                          {"lastUsedAt", iso8601(s.updated_at)},
                          {"commands", s.commands},
                          {"running", running}};
    doc.update(sessions::describe(s.state));
    return {doc};
}

Result close_session(Request& r) {
    std::string name = r.args.string("name");
    Millis timeout = r.args.duration("timeout").value();
    check_session_name(name);
    Sessions sessions(r.core.store(), r.core.clock());
    auto result = sessions.close(name, timeout, r.core.actor(r.team));
    bool ok = result.survivors == 0;
    std::string error =
        ok ? ""
           : std::to_string(result.survivors) + " process(es) of the session could not be ended";
    return {{{"success", ok},
             {"session", name},
             {"execsKilled", result.execs_killed},
             {"shellsKilled", result.shells_killed},
             {"error", ok ? nlohmann::json(nullptr) : nlohmann::json(error)}},
            ok ? 0 : 1};
}

const Param kName{.name = "name",
                  .help = "the session (made by its first command)",
                  .placeholder = "NAME",
                  .required = true,
                  .positional = true,
                  .kind = Kind::session};
const Param kCommandString{
    .name = "command",
    .type = Type::command,
    .help = "bash code, after --: the words are joined with spaces; - reads it from stdin",
    .placeholder = "COMMAND-STRING",
    .required = true};

}  // namespace

const Operation exec_in_session_op{
    .name = "exec_in_session",
    .command = "session exec",
    .tool = "session_exec",
    .no_route = "not in SPEC 13",
    .summary =
        "run a command string in session NAME and wait; its cd, export, functions and aliases "
        "last",
    .params = {kName,
               {.name = "timeout",
                .type = Type::duration,
                .help = "kill the command's whole tree after this long (exit 124; state not kept)",
                .placeholder = "DUR"},
               {.name = "output_limit",
                .type = Type::integer,
                .help = "bytes of stdout and of stderr kept for --json (the end)",
                .placeholder = "BYTES",
                .default_text = "16777216",
                .min = 1},
               kCommandString},
    .access = Access::write,
    .scope = Scope::named_team,
    .waits = true,
    .body = exec_in_session,
};

const Operation start_in_session_op{
    .name = "start_in_session",
    .command = "session start",
    .no_tool = "not in SPEC 12 (session_exec is)",
    .no_route = "not in SPEC 13",
    .summary = "run a command string from session NAME's state in the background (a shell)",
    .params = {kName,
               {.name = "timeout",
                .type = Type::duration,
                .help = "kill it (SIGTERM, 5s, SIGKILL) after this long",
                .placeholder = "DUR"},
               {.name = "output_limit",
                .type = Type::integer,
                .help = "keep only the last BYTES of output",
                .placeholder = "BYTES",
                .default_text = "16777216",
                .min = 1},
               kCommandString},
    .access = Access::write,
    .scope = Scope::named_team,
    .body = start_in_session,
};

const Operation list_sessions_op{
    .name = "list_sessions",
    .command = "session list",
    .no_tool = "not in SPEC 12 (session_exec is)",
    .no_route = "not in SPEC 13",
    .summary = "the sessions: name, cwd, running commands",
    .params = {},
    .scope = Scope::none,
    .body = list_sessions,
};

const Operation show_session_op{
    .name = "show_session",
    .command = "session show",
    .no_tool = "not in SPEC 12 (session_exec is)",
    .no_route = "not in SPEC 13",
    .summary = "one session's state and what runs in it",
    .params = {{.name = "name",
                .help = "the session",
                .placeholder = "NAME",
                .required = true,
                .positional = true,
                .kind = Kind::session}},
    .scope = Scope::none,
    .body = show_session,
};

const Operation close_session_op{
    .name = "close_session",
    .command = "session close",
    .no_tool = "not in SPEC 12 (session_exec is)",
    .no_route = "not in SPEC 13",
    .summary = "kill the session's running commands and forget it",
    .params = {{.name = "name",
                .help = "the session",
                .placeholder = "NAME",
                .required = true,
                .positional = true,
                .kind = Kind::session},
               {.name = "timeout",
                .type = Type::duration,
                .help = "how long its commands get after SIGTERM before SIGKILL",
                .placeholder = "DUR",
                .default_text = "5s"}},
    .access = Access::write,
    .scope = Scope::named_team,
    .waits = true,
    .body = close_session,
};

}  // namespace team::ops
