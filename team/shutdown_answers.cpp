#include "team/shutdown.hpp"

#include <unistd.h>

#include "base/error.hpp"
#include "base/names.hpp"
#include "base/text.hpp"
#include "proc/pidfd.hpp"
#include "state/activity.hpp"
#include "state/members.hpp"
#include "team/messages.hpp"
#include "team/shutdown_parts.hpp"

namespace team {

using namespace shutdown_parts;

namespace {

// The request the caller answers: the one named (it must be addressed to the caller), else the
// caller's newest open one.
ShutdownRequest find_own_request(Store& store, const TeamRecord& team, const Caller& caller,
                                 const std::optional<std::string>& request_id,
                                 const std::string& verb) {
    if (request_id) {
        auto r = find_request(store, parse_request_id(*request_id));
        if (!r || r->team_id != team.id) {
            throw not_found("shutdown request " + quote(*request_id) + " not found in team " +
                            quote(team.name));
        }
        if (r->agent_id != caller.member_id) {
            throw refused("only " + r->agent + ", to whom shutdown request " + r->id_string() +
                          " is addressed, can " + verb + " it (you are " + caller.id() + ")");
        }
        return *r;
    }
    if (caller.is_leader) {
        throw refused("only the agent a shutdown request is addressed to can " + verb +
                      " it; you are the leader (" + caller.id() + ")");
    }
    auto r = newest_open_request(store, caller.member_id);
    if (!r) throw not_found("there is no open shutdown request for you (" + caller.id() + ")");
    return *r;
}

}  // namespace

ShutdownRequest Shutdowns::approve(const TeamRecord& team, const Caller& caller,
                                   const std::optional<std::string>& request_id) {
    return store_.write([&] {
        auto& db = store_.db();
        auto r = find_own_request(store_, team, caller, request_id, "approve");
        if (r.method == ShutdownMethod::force || r.forced_at) {
            throw refused("shutdown request " + r.id_string() + " is a forced one: " + r.agent +
                          " is being ended without a say");
        }
        if (r.phase != ShutdownPhase::requested || r.closed_at) {
            throw refused("shutdown request " + r.id_string() + " is already " + str(r.phase) +
                          (r.phase == ShutdownPhase::approved
                               ? "; finish and run 'team shutdown confirm'"
                               : std::string()));
        }
        EpochMs now = clock_.now();
        mark_request_approved(store_, r.id, now);
        if (auto leader = find_leader(store_, team.id)) {
            post_message(db, team, caller.name, *leader, "shutdown_approved",
                         caller.id() + " approved the shutdown; it confirms when it has finished",
                         {{"requestId", r.id_string()}, {"reason", r.reason}}, now);
        }
        append_activity(db, team.id, now, caller.id(), "shutdown_approved",
                        {{"agentId", r.agent}, {"requestId", r.id_string()}});
        return *find_request(store_, r.id);
    });
}

ShutdownRequest Shutdowns::reject(const TeamRecord& team, const Caller& caller,
                                  const std::string& reason,
                                  const std::optional<std::string>& request_id) {
    check_text(reason, kMaxReasonBytes, "the reason");
    if (reason.find_first_not_of(" \t\r\n") == std::string::npos) {
        throw usage_error("a rejection needs a reason: team shutdown reject --reason TEXT");
    }
    return store_.write([&] {
        auto& db = store_.db();
        auto r = find_own_request(store_, team, caller, request_id, "reject");
        if (r.method == ShutdownMethod::force || r.forced_at) {
            throw refused("shutdown request " + r.id_string() +
                          " is a forced one and cannot be rejected");
        }
        if (r.phase != ShutdownPhase::requested || r.closed_at) {
            throw refused(
                "shutdown request " + r.id_string() + " is already " + str(r.phase) +
                (r.phase == ShutdownPhase::approved ? ": an approval cannot be taken back" : ""));
        }
        EpochMs now = clock_.now();
        mark_request_rejected(store_, r.id, reason, now);
        set_agent_active_again(store_, r.agent_id);
        if (auto leader = find_leader(store_, team.id)) {
            post_message(db, team, caller.name, *leader, "shutdown_rejected",
                         caller.id() + " rejected the shutdown: " + reason,
                         {{"requestId", r.id_string()}, {"reason", reason}}, now);
        }
        append_activity(db, team.id, now, caller.id(), "shutdown_rejected",
                        {{"agentId", r.agent}, {"requestId", r.id_string()}, {"reason", reason}});
        return *find_request(store_, r.id);
    });
}

ShutdownRequest Shutdowns::confirm(const TeamRecord& team, const Caller& caller,
                                   const std::optional<std::string>& request_id,
                                   std::function<void()>* after_reply) {
    auto r = store_.write([&] {
        auto r = find_own_request(store_, team, caller, request_id, "confirm");
        if (r.method == ShutdownMethod::force || r.forced_at) {
            throw refused("shutdown request " + r.id_string() + " is a forced one: " + r.agent +
                          " is being ended already");
        }
        if ((r.phase != ShutdownPhase::requested && r.phase != ShutdownPhase::approved) ||
            r.closed_at) {
            throw refused("shutdown request " + r.id_string() + " is already " + str(r.phase));
        }
        EpochMs now = clock_.now();
        mark_request_confirmed(store_, r.id, now);
        // The supervisor ends the agent's tree (within the request's grace), records the end
        // and removes the pane: it lives outside the tree, so this works from inside the pane,
        // whose processes (this one among them) are about to end. Woken before the commit
        // (it waits for it), like a deadline, so no moment is left where this command could die
        // with the confirmation stored and the supervisor unaware. This first wake only tells
        // it: it ends the tree at the next, or kReplyWindow after this one at the latest
        // (agent_end.hpp), so that a caller inside the tree answers before it is signalled.
        if (auto agent = load_agent(store_, r.agent_id))
            wake_supervisor(store_, processes_, *agent);
        return *find_request(store_, r.id);
    });
    auto agent = load_agent(store_, r.agent_id);
    if (!agent) return r;
    if (lives_here(store_, *agent) && inside_tree_of(*agent)) {
        // The second wake, once the caller's answer is out: the caller is part of the tree.
        if (after_reply) {
            *after_reply = [processes = &processes_, a = *agent] {
                signal_supervisor(*processes, a);
            };
        }
        return r;
    }
    wake_supervisor(store_, processes_, *agent);  // nobody here is in the tree: end it now
    auto deadline = clock_.steady() + milliseconds(r.grace_ms) + kSupervisorWait;
    if (!await_end(agent->id, deadline)) {
        auto now = load_agent(store_, agent->id);
        if (now && (!live_supervisor(store_, processes_, *now) || !now->live()))
            finish_here(team, agent->id, caller.id());
    }
    return find_request(store_, r.id).value_or(r);
}

std::vector<ShutdownRequest> Shutdowns::status(const TeamRecord& team, const Caller& caller,
                                               const std::optional<std::string>& name) {
    agents().reconcile(team);
    if (!name && caller.is_leader) return open_requests(store_, team.id);
    std::int64_t member_id = caller.member_id;
    std::string who = caller.id();
    if (name) {
        check_name(*name, "agent name");
        auto member = find_member(store_, team, *name);
        if (!member) member_not_found(store_, team, *name);
        member_id = member->id;
        who = member->id_string();
    }
    auto newest = newest_request(store_, member_id);
    if (!newest) throw not_found("there is no shutdown request for " + who);
    return {*newest};
}

}  // namespace team
