// The operations of background shells (SPEC 8).
#include "ops/operation.hpp"
#include "ops/table.hpp"
#include "proc/shells.hpp"
#include "proc/signals.hpp"

namespace team::ops {

namespace {

using proc::Millis;
using proc::Shells;

// The team a shell belongs to, if any (for the actor of what is done to it).
std::optional<TeamRecord> team_of(Core& core, const proc::ShellRecord& shell) {
    if (!shell.team_id) return std::nullopt;
    return core.teams().find_by_id(*shell.team_id);
}

Result kill_shell(Request& r) {
    const auto& a = r.args;
    std::string id = a.string("id");
    int sig = proc::parse_signal(a.optional_string("signal").value_or("SIGTERM"), a.label("signal"),
                                 true);
    Millis timeout = a.duration("timeout").value_or(Millis(5000));
    if (!r.core.has_store()) throw not_found("Shell not found: " + id);
    Shells shells(r.core.store(), r.core.clock());
    auto shell = shells.get(id);
    proc::KillResult k =
        shells.kill(id, sig, timeout, !a.flag("no_force"), r.core.actor(team_of(r.core, shell)));
    nlohmann::json doc = {
        {"success", k.success},
        {"shell_id", id},
        {"signal_sent", k.signal_sent},
        {"force_killed", k.force_killed},
        {"exit_code", k.shell.exit_code ? nlohmann::json(*k.shell.exit_code) : nullptr},
        {"exitStatus", proc::exit_status_json(k.shell)},
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
    Millis age = r.args.duration("older_than").value_or(Millis(3600 * 1000));
    std::vector<std::string> ids;
    if (r.core.has_store()) {
        Shells shells(r.core.store(), r.core.clock());
        ids = shells.gc(age, r.core.actor(r.core.named_team()));
    }
    return {{{"released", ids}}};
}

}  // namespace

const Operation kill_shell_op{
    .name = "kill_shell",
    .command = "shell kill",
    .summary = "signal the shell's whole process tree, then SIGKILL what is left",
    .params = {{.name = "id",
                .help = "the shell",
                .placeholder = "ID",
                .required = true,
                .positional = true},
               {.name = "signal",
                .help = "the first signal: SIGTERM (default), SIGINT or SIGKILL",
                .placeholder = "SIG",
                .default_text = "SIGTERM"},
               {.name = "timeout",
                .type = Type::duration,
                .help = "how long the tree gets to end before SIGKILL (default 5s)",
                .placeholder = "DUR",
                .default_text = "5s"},
               {.name = "no_force",
                .type = Type::boolean,
                .help = "never send SIGKILL; report what is still running"}},
    .access = Access::write,
    .scope = Scope::none,
    .waits = true,
    .body = kill_shell,
    .error_shape = kill_shell_shape,
};

const Operation release_shell_op{
    .name = "release_shell",
    .command = "shell release",
    .summary = "kill the shell if running, delete its output, forget it",
    .params = {{.name = "id",
                .help = "the shell",
                .placeholder = "ID",
                .required = true,
                .positional = true}},
    .access = Access::write,
    .scope = Scope::none,
    .body = release_shell,
};

const Operation gc_shells_op{
    .name = "gc_shells",
    .command = "shell gc",
    .summary = "release finished shells older than DUR",
    .params = {{.name = "older_than",
                .type = Type::duration,
                .help = "only shells that ended longer ago than this (default 1h)",
                .placeholder = "DUR",
                .default_text = "1h"}},
    .access = Access::write,
    .scope = Scope::none,
    .body = gc_shells,
};

}  // namespace team::ops
