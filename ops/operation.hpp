// The operations table (SPEC 11). Every verb of SPEC 3-10 is one operation of the core, declared
// once, in the manner of tmux's cmd_entry: its name, a summary, its parameters (types, defaults,
// help), whether only the leader may run it, whether it reads or writes, whether it waits, and
// its body. The rules every verb shares are applied here, once, by `invoke`: the values are
// checked against the parameters, the team and the caller are resolved, the leader check is made,
// agents are reconciled before a look, errors become one result (with the operation's own shape
// kept when SPEC 1.4 asks for it) and one translation of the store's errors.
//
// The faces read the table: the command line declares its commands and options from it
// (cli/op_command.cpp), the MCP server its tools, named here, and their schemas (mcp/tools.cpp),
// the HTTP API its routes, declared here (http/router.cpp). A face only parses, calls `invoke`
// and prints.
#pragma once

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.hpp"
#include "ops/core.hpp"
#include "state/records.hpp"

namespace team::ops {

enum class Type {
    string,    // a name, an id, a path
    text,      // free text (the command line also reads it from stdin with "-")
    boolean,   // a flag
    integer,   // a whole number from Param::min
    duration,  // SPEC 1.3: 250ms, 5s, 2m, 1h; a bare number is seconds
    strings,   // a list of strings (a repeatable option)
    integers,  // a list of whole numbers from Param::min
    command,   // CMD [ARGS...]: a program and its arguments, executed as given
};

// What a parameter's value names, so the command line's completion offers its candidates
// (cli/command_model.hpp): a thing of the home, a path, or nothing in particular (free text, a
// number, a duration). A value from a fixed list says so by Param::choices instead.
enum class Kind { free, team, agent, task, shell, session, file, dir };

struct Param {
    std::string_view name;  // as JSON and MCP spell it (force_after); the CLI: --force-after
    Type type = Type::string;
    std::string_view help;
    std::string_view placeholder = "";  // NAME, DUR, TEXT: how help shows the value
    bool required = false;
    bool positional = false;  // the command line takes it as an argument, not an option
    // The default, the one statement of it: Args hands it to the body when the value is not
    // given, and help, MCP descriptions and the docs test take it from here (help_of).
    std::string_view default_text = "";
    long long min = 0;            // integers: the least value
    std::string_view alias = "";  // the command line's short flag ("-n"), if any
    Kind kind = Kind::free;
    const std::vector<std::string>& (*choices)() = nullptr;  // the values it takes, if a list
};

// A parameter's help as every face shows it: its text and, when it declares one, its default.
std::string help_of(const Param& p);

enum class Access { read, write };

// A route of the HTTP API (SPEC 13) to an operation: a method and a path whose segments in
// braces capture values ({team} is the team the request acts on; any other capture is the
// operation's value of that name: {name}, {id}, {agent}).
struct HttpRoute {
    std::string_view method;   // GET, POST, PATCH, DELETE
    std::string_view pattern;  // "/api/teams/{team}/agents/{name}/kill"
    // A boolean parameter the route sets whatever the request says (GET /api/activity: all).
    std::string_view fixed = "";
};

// Where an operation works: in a team (resolved as SPEC 1.1 says), in a team only when one is
// named (background shells), or outside any (list, create).
enum class Scope { team, named_team, none };

// How the face that made a request spells a parameter in its messages.
enum class Naming { cli, json };

struct Operation;

// The values of one request, checked against the operation's parameters.
class Args {
  public:
    // Throws a usage error for an unknown parameter, a value of the wrong type or a required
    // one missing.
    Args(const Operation& op, nlohmann::json values, Naming naming);

    // Whether the value was given (a declared default does not count).
    bool has(std::string_view name) const;
    // The accessors below hand back the value given, else the parameter's declared default.
    // A string or text parameter; "" when absent.
    std::string string(std::string_view name) const;
    std::optional<std::string> optional_string(std::string_view name) const;
    bool flag(std::string_view name) const;
    // The same for a flag the operation may not declare (false then).
    bool flag_if_declared(std::string_view name) const;
    std::optional<long long> integer(std::string_view name) const;
    std::optional<std::chrono::milliseconds> duration(std::string_view name) const;
    std::vector<std::string> strings(std::string_view name) const;
    std::vector<std::int64_t> integers(std::string_view name) const;

    // How the face names the parameter: "--force-after" on the command line, "force_after"
    // in JSON.
    std::string label(std::string_view name) const;
    const nlohmann::json& values() const { return values_; }
    Naming naming() const { return naming_; }

  private:
    const Param& param(std::string_view name) const;
    // The value given, else the declared default (as its text); none when neither.
    std::optional<nlohmann::json> value(std::string_view name) const;
    const Operation& op_;
    nlohmann::json values_;
    Naming naming_;
};

// What an operation hands back: its result document (SPEC's shape) and the exit code it stands
// for. A refusal or failure that an operation reports in its own shape (kill-agent, shell kill)
// is a result too, with `error` set. Whether the request failed is decided here, once, for every
// face (is_error): the command line exits with the code, MCP sets isError, HTTP answers the
// error's status, all from the same answer.
struct Result {
    Result() = default;
    Result(nlohmann::json document, int code = 0) : doc(std::move(document)), exit_code(code) {}

    nlohmann::json doc;
    int exit_code = 0;
    std::optional<Error> error;
    // What a person's view needs beyond the document (open task counts beside the agents),
    // never part of the JSON a face returns.
    nlohmann::json view = nullptr;
    // What must wait until the face has written (and flushed) its answer, run by the face right
    // after it, whether or not anyone reads the answer: a shutdown confirmed from inside the
    // agent's own tree wakes the pane's supervisor here, so the caller (`team mcp`, a child of
    // the agent) has answered before its tree is signalled. A face that cannot answer runs it
    // all the same; one that never runs it delays that end by team/agent_end.hpp's kReplyWindow.
    std::function<void()> after_reply;
    // The exit code is part of the answer, not a failure of the request: the exit status of
    // the command an operation ran (run, session exec) or a waited turn's stop reason (prompt
    // --wait: 130 cancelled, 5 refusal, max_tokens…). The command line exits with it all the
    // same; MCP answers it without isError and HTTP with 200. A wait that ran out or a turn that
    // failed is never an answer of this kind.
    bool exit_is_answer = false;
    bool ok() const { return exit_code == 0; }
    // The request failed (SPEC 1.4's errors, or the verb's own shape with success false): MCP's
    // isError, an error status over HTTP, the exit code of its kind on the command line.
    bool is_error() const { return exit_code != 0 && !exit_is_answer; }
};

// What a waiting operation reports as it goes (teardown: each agent's end as it is known); the
// command line prints it on a terminal, the MCP server sends it as progress notifications.
using Progress = std::function<void(const nlohmann::json& event)>;

// What a body gets: the core, the checked values, and the team when the operation works in one
// (resolved, leader-checked and reconciled before the body runs).
struct Request {
    Request(Core& c, const Operation& o, const Args& a) : core(c), op(o), args(a) {}

    Core& core;
    const Operation& op;
    const Args& args;
    std::optional<TeamRecord> team;
    Progress progress;  // may be empty

    // Who asks, as a member of the team: resolved on first use, so an operation that only reads
    // does not require the caller to be a member.
    const Caller& caller();

  private:
    std::optional<Caller> caller_;
};

struct Operation {
    std::string_view name;     // snake_case: how the code and the tests name the operation
    std::string_view command;  // the command line's words: "kill-agent", "shell kill"; "": none
    // The other two faces, declared here so that a verb brings them with it: the MCP tool's name
    // (SPEC 12) and the HTTP routes (SPEC 13). An operation without one says why in `no_tool`
    // or `no_route`, so a face forgotten is a failing test, not a silent gap.
    std::string_view tool = "";
    std::string_view no_tool = "";
    std::vector<HttpRoute> routes = {};
    std::string_view no_route = "";
    std::string_view summary;
    std::vector<Param> params;
    Access access = Access::read;
    Scope scope = Scope::team;
    bool leader_only = false;
    std::string_view leader_action = "";  // "kill agents": what the refusal says was attempted
    bool waits = false;                   // may block (--wait, --timeout, --follow)
    bool reconcile = false;  // agents are checked against tmux and the OS before the body
    // The parameter that names the team, when the operation takes it as its own argument
    // (status NAME, delete NAME); else the identity's team.
    std::string_view team_param = "";
    // Where the operation runs when what it acts on is on another host (SPEC 16): that host's
    // own `team` runs it, through the link (hosts/link.hpp), with the same values and identity.
    // `agent_param` names the agent whose host it is (logs, prompt, kill-agent --force),
    // `host_param` the host itself (spawn --host); `runs_on_host`, when set, says whether these
    // values need the host (kill-agent: only --force; a graceful request is the store's).
    std::string_view agent_param = "";
    std::string_view host_param = "";
    bool (*runs_on_host)(const Args&) = nullptr;
    // Checks of the values that need no lookup (a text's characters), run before the team and
    // the caller are resolved, so a malformed request is a usage error whatever else is wrong.
    void (*validate)(const Args&) = nullptr;
    Result (*body)(Request&) = nullptr;
    // The result's shape kept on error (SPEC 1.4), from the request's values as given (they may
    // be what was refused): the runner adds success false, error and code. Null: the plain
    // error document.
    nlohmann::json (*error_shape)(const nlohmann::json& values) = nullptr;
};

// Every operation, in the order the faces list them.
std::span<const Operation* const> operations();
// By name (kill_agent) or by command line words (kill-agent, "shell kill"); null when unknown.
const Operation* find_operation(std::string_view name);
const Operation* find_command(std::string_view words);

// Runs `op` for `values` as `core`'s identity asks. Never throws a team::Error: every error is a
// Result with `error` set, its document {success: false, error, code} or the operation's shape.
Result invoke(Core& core, const Operation& op, const nlohmann::json& values, Naming naming,
              Progress progress = {});

// The error document every face answers an error with (SPEC 1.4), built here only: `shape`
// (the operation's own, or an empty object) with success false, error (the message) and code
// (its name, base/error.hpp's table).
nlohmann::json error_document(const Error& error, nlohmann::json shape = nlohmann::json::object());

// The result of an error, in the operation's shape when it has one.
Result error_result(const Operation& op, const nlohmann::json& values, const Error& error);

}  // namespace team::ops
