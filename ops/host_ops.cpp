// The operations of hosts (SPEC 16, second half): add, list, check, remove, lost. Hosts are the
// store's, not a team's: one host serves every team of the store.
#include <chrono>

#include "base/names.hpp"
#include "base/programs.hpp"
#include "hosts/link.hpp"
#include "ops/operation.hpp"
#include "ops/table.hpp"
#include "state/activity.hpp"
#include "state/host_rows.hpp"
#include "state/members.hpp"
#include "team/agent_end.hpp"

namespace team::ops {

using namespace std::chrono_literals;

namespace {

constexpr auto kCheckTimeout = 15s;

Store& shared_store(Core& core) {
    Store& store = core.store();
    if (store.engine() != Db::Engine::postgresql) {
        throw refused(
            "hosts need a shared store (SPEC 16): this home uses SQLite; point it at a "
            "PostgreSQL database first (team store use postgresql://…)");
    }
    return store;
}

HostRecord require_host(Store& store, const std::string& name) {
    hosts::check_host_name(name);
    auto host = find_host(store, name);
    if (!host) {
        throw not_found("host " + quote(name) + " not found" +
                        did_you_mean(name, host_names(store)));
    }
    return *host;
}

nlohmann::json optional_time(const std::optional<EpochMs>& t) {
    return t ? nlohmann::json(iso8601(*t)) : nlohmann::json(nullptr);
}

nlohmann::json host_json(Store& store, const HostRecord& h, EpochMs now) {
    return {{"name", h.name},
            {"ssh", h.ssh},
            {"teamPath", h.team_path},
            {"homeId", h.home_id},
            {"version", h.version},
            {"state", str(host_state(h, now))},
            {"leaseMs", h.lease_ms},
            {"leaseAgeMs", h.renewed_at ? nlohmann::json(now - *h.renewed_at) : nlohmann::json()},
            {"rttMs",
             h.rtt_us ? nlohmann::json(static_cast<double>(*h.rtt_us) / 1000.0) : nlohmann::json()},
            {"checkedAt", optional_time(h.checked_at)},
            {"checkError", h.check_error ? nlohmann::json(*h.check_error) : nlohmann::json()},
            {"lostAt", optional_time(h.lost_at)},
            {"addedAt", iso8601(h.added_at)},
            {"agents", live_agents_of_home(store, h.home_id).size()}};
}

// One hello and one ping through the host's link: what its team says of itself, and the round
// trip of a request through the warm channel.
struct Answer {
    nlohmann::json hello;
    std::int64_t rtt_us = 0;
};

Answer ask(Core& core, const hosts::LinkTarget& target) {
    auto reply = hosts::call(core.home(), target, own_binary(),
                             {{"hello", nlohmann::json::object()}}, kCheckTimeout);
    if (reply.contains("error")) {
        throw hosts::Unreachable("host " + quote(target.name) +
                                 " refused: " + reply["error"].get<std::string>());
    }
    Answer a;
    a.hello = reply.value("hello", nlohmann::json::object());
    auto start = std::chrono::steady_clock::now();
    hosts::call(core.home(), target, own_binary(), {{"ping", true}}, kCheckTimeout);
    a.rtt_us = std::chrono::duration_cast<std::chrono::microseconds>(
                   std::chrono::steady_clock::now() - start)
                   .count();
    return a;
}

Result add_host(Request& r) {
    const auto& a = r.args;
    std::string name = a.string("name");
    hosts::LinkTarget target{name, a.string("ssh"),
                             a.optional_string("team_path").value_or("team")};
    hosts::check_host_name(name);
    hosts::check_ssh_destination(target.ssh);
    hosts::check_team_path(target.team_path);
    auto lease = a.duration("lease").value();
    if (lease < 1s || lease > 1h)
        throw usage_error(a.label("lease") + " must be from 1s to 1h", "lease");
    Store& store = shared_store(r.core);
    if (find_host(store, name)) throw refused("host " + quote(name) + " exists already");
    Answer answer;
    try {
        answer = ask(r.core, target);
    } catch (const hosts::Unreachable& e) {
        hosts::stop_link(r.core.home(), name);
        throw failed(std::string(e.what()) + "; host " + quote(name) + " was not added");
    }
    std::string home_id = answer.hello.value("homeId", "");
    if (home_id.empty()) {
        hosts::stop_link(r.core.home(), name);
        throw failed("host " + quote(name) + " did not say which home it is; not added");
    }
    if (home_id == store.home_id()) {
        hosts::stop_link(r.core.home(), name);
        throw refused("host " + quote(name) + " (" + target.ssh +
                      ") is this home: its agents are spawned here without --host");
    }
    HostRecord host;
    host.name = name;
    host.ssh = target.ssh;
    host.team_path = target.team_path;
    host.home_id = home_id;
    host.version = answer.hello.value("version", "");
    host.lease_ms = lease.count();
    host.rtt_us = answer.rtt_us;
    auto now = r.core.clock().now();
    host.checked_at = now;
    host.added_at = now;
    store.write([&] {
        if (find_host(store, name)) throw refused("host " + quote(name) + " exists already");
        if (auto same = find_host_by_home(store, home_id)) {
            throw refused("that home (" + home_id + ") is host " + quote(same->name) + " already");
        }
        host.id = insert_host(store, host);
        append_activity(store.db(), std::nullopt, now, r.core.actor(std::nullopt), "host_added",
                        {{"host", name}, {"ssh", target.ssh}, {"homeId", home_id}});
    });
    // Agents that home already runs (a home of the shared store before it was a host) have a
    // lease from now on: another hello, now that the row is there, starts its keeper (the first
    // came before the row, when that home was no host yet).
    if (!live_agents_of_home(store, home_id).empty()) {
        try {
            hosts::call(r.core.home(), target, own_binary(), {{"hello", nlohmann::json::object()}},
                        kCheckTimeout);
        } catch (const hosts::Unreachable&) {
            // added all the same; `host check` starts the keeper once the host answers
        }
    }
    auto doc = host_json(store, host, now);
    doc["hostname"] = answer.hello.value("hostname", "");
    return Result(doc);
}

Result list_hosts_op_body(Request& r) {
    nlohmann::json doc = nlohmann::json::array();
    if (!r.core.has_store()) return Result(doc);
    Store& store = r.core.store();
    if (store.engine() != Db::Engine::postgresql) return Result(doc);
    auto now = r.core.clock().now();
    for (const auto& h : list_hosts(store)) doc.push_back(host_json(store, h, now));
    return Result(doc);
}

Result check_host(Request& r) {
    Store& store = shared_store(r.core);
    HostRecord host = require_host(store, r.args.string("name"));
    std::optional<std::string> error;
    Answer answer;
    try {
        answer = ask(r.core, {host.name, host.ssh, host.team_path});
        if (answer.hello.value("homeId", "") != host.home_id) {
            error = "it answers as home " + answer.hello.value("homeId", "?") + ", not " +
                    host.home_id + " (another machine, or its home was made again)";
        }
    } catch (const hosts::Unreachable& e) {
        error = e.what();
    }
    auto now = r.core.clock().now();
    bool taken_back = false;
    store.write([&] {
        record_host_check(store, host.name, error ? "" : answer.hello.value("version", ""),
                          error ? std::nullopt : std::optional<std::int64_t>(answer.rtt_us), error,
                          now);
        // A lost host that answers again, with nothing of its own left live, is taken back.
        if (!error && host.lost_at && live_agents_of_home(store, host.home_id).empty()) {
            clear_host_lost(store, host.name);
            taken_back = true;
        }
    });
    auto fresh = find_host(store, host.name).value_or(host);
    auto doc = host_json(store, fresh, now);
    doc["success"] = !error;
    if (taken_back) doc["takenBack"] = true;
    if (error) {
        doc["error"] = *error;
        doc["code"] = "failed";
        return Result(doc, 1);
    }
    return Result(doc);
}

Result remove_host(Request& r) {
    Store& store = shared_store(r.core);
    HostRecord host = require_host(store, r.args.string("name"));
    store.write([&] {
        auto live = live_agents_of_home(store, host.home_id);
        if (!live.empty()) {
            throw refused("host " + quote(host.name) + " runs " + std::to_string(live.size()) +
                          " live agent" + (live.size() == 1 ? "" : "s") +
                          ": stop them first (kill-agent, teardown), or `team host lost " +
                          host.name + "` if it is gone");
        }
        delete_host(store, host.name);
        append_activity(store.db(), std::nullopt, r.core.clock().now(), r.core.actor(std::nullopt),
                        "host_removed", {{"host", host.name}});
    });
    hosts::stop_link(r.core.home(), host.name);
    return Result({{"success", true}, {"name", host.name}});
}

// A person's word that the host is gone: its agents are recorded as ended, their tasks handed
// back (with new epochs), and a keeper there that comes back is refused its lease.
Result lost_host(Request& r) {
    Store& store = shared_store(r.core);
    HostRecord host = require_host(store, r.args.string("name"));
    std::vector<std::string> ended;
    store.write([&] {
        auto now = r.core.clock().now();
        mark_host_lost(store, host.name, now);
        for (auto id : live_agents_of_home(store, host.home_id)) {
            auto agent = load_agent(store, id);
            if (!agent || !agent->live()) continue;
            if (finish_agent(store, *agent, now,
                             {"lost",
                              std::nullopt,
                              std::nullopt,
                              r.core.actor(std::nullopt),
                              {},
                              {{"host", host.name}},
                              true})) {
                ended.push_back(agent->id_string());
            }
        }
        append_activity(store.db(), std::nullopt, now, r.core.actor(std::nullopt), "host_lost",
                        {{"host", host.name}, {"agents", ended}});
    });
    hosts::stop_link(r.core.home(), host.name);
    return Result({{"success", true}, {"name", host.name}, {"endedAgents", ended}});
}

const Param kHostName{.name = "name",
                      .help = "the host's name in the store",
                      .placeholder = "NAME",
                      .required = true,
                      .positional = true};

}  // namespace

const Operation add_host_op{
    .name = "add_host",
    .command = "host add",
    .no_tool = "adding a machine to the store is an administrator's step, run from a shell",
    .no_route = "adding a machine to the store is an administrator's step, run from a shell",
    .summary =
        "add a machine whose own team runs agents (spawn --host NAME): checks the ssh "
        "connection (key authentication), that host's team version and the store's schema",
    .params = {kHostName,
               {.name = "ssh",
                .help =
                    "[USER@]HOST as ssh reaches it (a Host of ssh_config, a name or an address)",
                .placeholder = "DEST",
                .required = true},
               {.name = "team_path",
                .help = "the team program on that host (default: team, on its PATH)",
                .placeholder = "PATH",
                .kind = Kind::file},
               {.name = "lease",
                .type = Type::duration,
                .help = "how long the host's agents outlive a lost contact with the store before "
                        "its keeper ends them and others take their tasks back",
                .placeholder = "DUR",
                .default_text = "6s"}},
    .access = Access::write,
    .scope = Scope::none,
    .waits = true,
    .body = add_host,
};

const Operation list_hosts_op{
    .name = "list_hosts",
    .command = "host list",
    .tool = "host_list",
    .routes = {{"GET", "/api/hosts"}},
    .summary = "the store's hosts: state (idle, up, suspect, lost), lease age, round trip, agents",
    .params = {},
    .access = Access::read,
    .scope = Scope::none,
    .body = list_hosts_op_body,
};

const Operation check_host_op{
    .name = "check_host",
    .command = "host check",
    .tool = "host_check",
    .routes = {{"POST", "/api/hosts/{name}/check"}},
    .summary =
        "reach a host through its link: its team's version and home, the round trip; a "
        "lost host that answers with no agent left is taken back",
    .params = {kHostName},
    .access = Access::write,
    .scope = Scope::none,
    .waits = true,
    .body = check_host,
};

const Operation remove_host_op{
    .name = "remove_host",
    .command = "host remove",
    .no_tool = "removing a machine from the store is an administrator's step",
    .no_route = "removing a machine from the store is an administrator's step",
    .summary = "forget a host that runs no live agent, and end its link",
    .params = {kHostName},
    .access = Access::write,
    .scope = Scope::none,
    .body = remove_host,
};

const Operation lost_host_op{
    .name = "lost_host",
    .command = "host lost",
    .no_tool = "declaring a machine gone is a person's decision",
    .no_route = "declaring a machine gone is a person's decision",
    .summary =
        "declare a host gone: its agents are recorded as ended and their tasks go back "
        "(new epochs); its keeper, if it comes back, ends what it still runs",
    .params = {kHostName},
    .access = Access::write,
    .scope = Scope::none,
    .body = lost_host,
};

}  // namespace team::ops
