// The operations that stop agents (SPEC 7).
#include "ops/operation.hpp"
#include "ops/remote.hpp"
#include "ops/table.hpp"
#include "team/shutdown.hpp"

namespace team::ops {

namespace {

// --notify / --no-notify: typed into the pane as asked; neither: as the agent's record says.
std::optional<bool> notify_choice(const Args& a) {
    if (a.flag("notify") && a.flag("no_notify")) {
        throw usage_error(a.label("notify") + " and " + a.label("no_notify") +
                          " ask for different things: give one");
    }
    if (a.flag("notify")) return true;
    if (a.flag("no_notify")) return false;
    return std::nullopt;
}

const Param kNotify{.name = "notify",
                    .type = Type::boolean,
                    .help =
                        "also type a notice of the request into the agent's pane, so an idle "
                        "coding agent reads its inbox (on for agents spawned with --preset "
                        "or --notify)"};
const Param kNoNotify{.name = "no_notify",
                      .type = Type::boolean,
                      .help = "type no notice into the pane, even for a preset's agent"};

KillOptions kill_options(const Args& a);

Result kill_agent(Request& r) {
    KillOptions k = kill_options(r.args);
    KillResult result =
        Shutdowns(r.core.store(), r.core.clock(), r.core.tmux()).kill(*r.team, r.caller(), k);
    return {to_json(result), result.exit_code};
}

KillOptions kill_options(const Args& a) {
    KillOptions k;
    k.name = a.string("name");
    k.force = a.flag("force");
    k.reason = a.string("reason");
    k.wait = a.flag("wait");
    k.timeout = a.duration("timeout");
    k.force_after = a.duration("force_after");
    k.grace = a.duration("grace").value();
    k.reassign_to = a.optional_string("reassign_to");  // given empty: a bad name, not the pool
    k.notify = notify_choice(a);
    return k;
}

// SPEC 1.4: the result keeps its shape on every error.
nlohmann::json kill_agent_shape(const nlohmann::json& values) {
    KillResult result;
    auto name = values.find("name");
    if (name != values.end() && name->is_string()) result.agent_id = name->get<std::string>();
    result.method = values.value("force", nlohmann::json(false)) == true ? ShutdownMethod::force
                                                                         : ShutdownMethod::graceful;
    nlohmann::json doc = to_json(result);
    doc["phase"] = nullptr;
    doc["requestId"] = nullptr;
    return doc;
}

}  // namespace

Result kill_agent_unanswered(Request& r, const std::string& why) {
    KillOptions k = kill_options(r.args);
    k.elsewhere_wait = std::chrono::milliseconds(0);
    k.unanswered = why;
    KillResult result =
        Shutdowns(r.core.store(), r.core.clock(), r.core.tmux()).kill(*r.team, r.caller(), k);
    return {to_json(result), result.exit_code};
}

const Operation kill_agent_op{
    .name = "kill_agent",
    .command = "kill-agent",
    .tool = "kill_agent",
    .routes = {{"POST", "/api/teams/{team}/agents/{name}/kill"}},
    .summary = "leader only: stop an agent, gracefully (a shutdown request it answers) or --force",
    .params = {{.name = "name",
                .help = "the agent to stop",
                .placeholder = "NAME",
                .required = true,
                .positional = true,
                .kind = Kind::agent},
               {.name = "force",
                .type = Type::boolean,
                .help = "end its whole process tree now: SIGTERM (with SIGCONT), SIGKILL after "
                        "--grace"},
               {.name = "reason",
                .type = Type::text,
                .help = "why, for the agent and the activity log ('-': stdin)",
                .placeholder = "TEXT"},
               {.name = "wait",
                .type = Type::boolean,
                .help = "block until the agent confirmed (and has ended), rejected (exit 4) or "
                        "was force-killed; an agent already shutting down: wait on its request"},
               {.name = "timeout",
                .type = Type::duration,
                .help = "with --wait (implied): exit 124 when DUR runs out, phase as it stands",
                .placeholder = "DUR"},
               {.name = "force_after",
                .type = Type::duration,
                .help = "a deadline: not confirmed by then, it is force-killed by its pane's "
                        "supervisor, even if this command is gone",
                .placeholder = "DUR"},
               {.name = "grace",
                .type = Type::duration,
                .help = "how long its processes get between SIGTERM and SIGKILL",
                .placeholder = "DUR",
                .default_text = "5s"},
               {.name = "reassign_to",
                .help = "give its unfinished tasks to this member (still pending) instead of the "
                        "pool",
                .placeholder = "NAME",
                .kind = Kind::agent},
               kNotify,
               kNoNotify},
    .access = Access::write,
    .leader_only = true,
    .leader_action = "kill agents",
    .waits = true,
    .agent_param = "name",
    .runs_on_host = [](const Args& a) { return a.flag("force"); },
    .body = kill_agent,
    .error_shape = kill_agent_shape,
};

}  // namespace team::ops

namespace team::ops {

namespace {

Shutdowns shutdowns(Request& r) {
    return Shutdowns(r.core.store(), r.core.clock(), r.core.tmux());
}

nlohmann::json answered(const ShutdownRequest& request) {
    nlohmann::json doc = to_json(request);
    doc["success"] = true;
    return doc;
}

Result approve(Request& r) {
    return {answered(shutdowns(r).approve(*r.team, r.caller(), r.args.optional_string("request")))};
}

Result reject(Request& r) {
    return {answered(shutdowns(r).reject(*r.team, r.caller(), r.args.string("reason"),
                                         r.args.optional_string("request")))};
}

Result confirm(Request& r) {
    std::function<void()> after_reply;  // from inside the agent's tree: its supervisor's go-ahead
    Result result(answered(shutdowns(r).confirm(*r.team, r.caller(),
                                                r.args.optional_string("request"), &after_reply)));
    result.after_reply = std::move(after_reply);
    return result;
}

Result shutdown_status(Request& r) {
    auto name = r.args.optional_string("name");
    auto rows = shutdowns(r).status(*r.team, r.caller(), name);
    nlohmann::json doc = nlohmann::json::array();
    for (const auto& q : rows) doc.push_back(to_json(q));
    // One agent asked: its request; the leader's overview: the list.
    if (name || !r.caller().is_leader) return {doc.front()};
    return {doc};
}

Result teardown(Request& r) {
    const auto& a = r.args;
    TeardownOptions t;
    t.grace = a.duration("grace").value();
    t.reason = a.string("reason");
    t.purge = a.flag("purge");
    t.notify = notify_choice(a);
    const TeamRecord& team = *r.team;
    if (r.progress) {
        r.progress({{"event", "teardown"}, {"team", team.name}, {"grace", a.string("grace")}});
    }
    auto on_row = [&](const TeardownRow& row) {
        if (!r.progress) return;
        nlohmann::json event = to_json(row);
        event["event"] = "agent";
        r.progress(event);
    };
    auto result = shutdowns(r).teardown(team, r.caller(), t, on_row);
    bool ok = result.survivors == 0;
    nlohmann::json agents = nlohmann::json::array();
    for (const auto& row : result.agents) agents.push_back(to_json(row));
    nlohmann::json doc = {{"success", ok},           {"team", team.name},
                          {"agents", agents},        {"dissolved", result.dissolved},
                          {"purged", result.purged}, {"survivors", result.survivors}};
    if (!ok) {
        doc["error"] = std::to_string(result.survivors) + " process" +
                       (result.survivors == 1 ? "" : "es") + " of team " + team.name +
                       " could not be ended; the team was not dissolved";
    }
    return {doc, ok ? 0 : 1};
}

const Param kRequestId{
    .name = "request", .help = "the request (default: your newest open one)", .placeholder = "ID"};

}  // namespace

const Operation approve_shutdown_op{
    .name = "approve_shutdown",
    .command = "shutdown approve",
    .tool = "shutdown_respond",
    .no_route = "not in SPEC 13: an agent answers its own request, the dashboard does not",
    .summary = "accept the shutdown request addressed to you",
    .params = {kRequestId},
    .access = Access::write,
    .body = approve,
};

const Operation reject_shutdown_op{
    .name = "reject_shutdown",
    .command = "shutdown reject",
    .no_tool = "shutdown_respond (action reject), declared by approve_shutdown",
    .no_route = "not in SPEC 13: an agent answers its own request, the dashboard does not",
    .summary = "refuse the shutdown request addressed to you, saying why",
    .params = {{.name = "reason",
                .type = Type::text,
                .help = "why, for the leader ('-': stdin)",
                .placeholder = "TEXT",
                .required = true},
               kRequestId},
    .access = Access::write,
    .body = reject,
};

const Operation confirm_shutdown_op{
    .name = "confirm_shutdown",
    .command = "shutdown confirm",
    .no_tool = "shutdown_respond (action confirm), declared by approve_shutdown",
    .no_route = "not in SPEC 13: an agent answers its own request, the dashboard does not",
    .summary = "you are done: end now (tasks handed back, pane closed)",
    .params = {kRequestId},
    .access = Access::write,
    .waits = true,
    .body = confirm,
};

const Operation shutdown_status_op{
    .name = "shutdown_status",
    .command = "shutdown status",
    .tool = "shutdown_status",
    .routes = {{"GET", "/api/teams/{team}/shutdowns"}},
    .summary = "the shutdown request of an agent and its phase",
    .params = {{.name = "name",
                .help = "the agent (default: you; the leader: every open request)",
                .placeholder = "NAME",
                .positional = true,
                .kind = Kind::agent}},
    .access = Access::read,
    .body = shutdown_status,
};

const Operation teardown_op{
    .name = "teardown",
    .command = "teardown",
    .tool = "team_teardown",
    .routes = {{"POST", "/api/teams/{team}/teardown"}},
    .summary =
        "leader only: stop every agent (gracefully, then by force), close the session, dissolve",
    .params = {{.name = "name",
                .help = "the team (default: --team, or the only live team)",
                .placeholder = "NAME",
                .positional = true,
                .kind = Kind::team},
               {.name = "grace",
                .type = Type::duration,
                .help = "how long agents get to confirm before force",
                .placeholder = "DUR",
                .default_text = "30s"},
               {.name = "reason",
                .type = Type::text,
                .help = "why, for the agents and the activity log",
                .placeholder = "TEXT"},
               {.name = "purge",
                .type = Type::boolean,
                .help = "also delete the team's records and pane logs"},
               kNotify,
               kNoNotify},
    .access = Access::write,
    .leader_only = true,
    .leader_action = "tear down the team",
    .waits = true,
    .team_param = "name",
    .body = teardown,
};

}  // namespace team::ops
