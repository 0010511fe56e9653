#include "tasks/tasks.hpp"

#include <algorithm>

#include "base/error.hpp"
#include "base/names.hpp"
#include "base/text.hpp"
#include "state/activity.hpp"
#include "state/members.hpp"

namespace team::tasks {

namespace {

constexpr std::size_t kMaxSubjectBytes = 4096;
constexpr std::size_t kMaxDescriptionBytes = 1u << 20;

std::optional<Task> load_task(Store& store, std::int64_t team_id, std::int64_t id) {
    return find_task(store, team_id, id);
}

Error task_not_found(const TeamRecord& team, std::int64_t id) {
    return not_found("task " + std::to_string(id) + " not found in team " + quote(team.name));
}

Task require_task(Store& store, const TeamRecord& team, std::int64_t id) {
    auto t = load_task(store, team.id, id);
    if (!t) throw task_not_found(team, id);
    return *t;
}

// The member that may own a task: a live one. Unknown -> not_found, terminated -> refused.
std::string live_owner(Store& store, const TeamRecord& team, const std::string& given) {
    std::string name = given;
    if (auto at = name.find('@'); at != std::string::npos) {
        if (name.substr(at + 1) != team.name) {
            throw usage_error("owner " + quote(given) + " is not of team " + quote(team.name));
        }
        name = name.substr(0, at);
    }
    check_name(name, "agent name");
    auto member = find_member(store, team, name);
    if (!member) member_not_found(store, team, name);
    if (!member->live()) {
        throw refused("agent " + quote(name) + " is terminated; a task cannot be given to it");
    }
    return name;
}

void check_subject(const std::string& subject) {
    if (subject.empty()) throw usage_error("the subject is empty");
    check_text(subject, kMaxSubjectBytes, "the subject");
}

// The caller, looked up before this transaction, may have ended since: a task given to it now
// would never be handed back. `claiming`: one that is shutting down takes no new work either.
void require_live_caller(Store& store, const Caller& caller, bool claiming) {
    auto member = load_agent(store, caller.member_id);
    AgentStatus now = member ? member->status : AgentStatus::terminated;
    if (now == AgentStatus::terminated) {
        throw refused("you (" + caller.id() + ") are terminated; a task cannot be given to you");
    }
    if (claiming && now == AgentStatus::shutting_down) {
        throw refused("you (" + caller.id() +
                      ") are shutting down; finish your current work instead of claiming more");
    }
}

// A write under a claim's epoch (SPEC 16's fencing token): a task handed back since (its owner
// ended, or its host was lost) has a newer epoch, and the old claimant's write is refused. An
// agent that writes must also still be live: one ended with its host's lease writes nothing.
void check_fence(Store& store, const Task& t, const Caller& caller,
                 std::optional<std::int64_t> epoch) {
    if (epoch && *epoch != t.epoch) {
        throw refused("task " + std::to_string(t.id) + " is at epoch " + std::to_string(t.epoch) +
                      ", not " + std::to_string(*epoch) +
                      ": it was handed back since that claim, and the write is refused");
    }
    if (!caller.is_leader) require_live_caller(store, caller, false);
}

std::string who(const std::string& owner, const Caller& caller) {
    return owner == caller.name ? "you (" + caller.id() + ")" : quote(owner);
}

}  // namespace

nlohmann::json to_json(const Task& t) {
    nlohmann::json blocked = nlohmann::json::array();
    for (auto b : t.blocked_by) blocked.push_back(std::to_string(b));
    return {{"id", std::to_string(t.id)},
            {"subject", t.subject},
            {"description", t.description},
            {"status", str(t.status)},
            {"owner", t.owner ? nlohmann::json(*t.owner) : nullptr},
            {"blockedBy", blocked},
            {"claimedAt", t.claimed_at ? nlohmann::json(iso8601(*t.claimed_at)) : nullptr},
            {"warning", t.warning ? nlohmann::json(*t.warning) : nullptr},
            {"createdAt", iso8601(t.created_at)},
            {"updatedAt", iso8601(t.updated_at)},
            {"epoch", t.epoch}};
}

std::int64_t parse_task_id(const std::string& text) {
    bool digits =
        !text.empty() && text.size() <= 18 &&
        std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
    std::int64_t id = digits ? std::stoll(text) : 0;
    if (id < 1) throw usage_error("bad task id " + quote(text) + ": expected a number like 3");
    return id;
}

void check_status(const std::string& status) {
    if (!parse_state<TaskStatus>(status)) {
        throw usage_error("bad task status " + quote(status) +
                          ": use pending, in_progress, completed or deleted");
    }
}

Task TaskList::add(const TeamRecord& team, const Caller& caller, const NewTask& request) {
    check_subject(request.subject);
    check_text(request.description, kMaxDescriptionBytes, "the description");
    std::vector<std::int64_t> blockers;
    for (const auto& b : request.blocked_by) {
        auto id = parse_task_id(b);
        if (std::find(blockers.begin(), blockers.end(), id) == blockers.end()) {
            blockers.push_back(id);
        }
    }
    return store_.write([&] {
        std::optional<std::string> owner;
        if (request.owner) owner = live_owner(store_, team, *request.owner);
        for (auto b : blockers) require_task(store_, team, b);
        auto now = clock_.now();
        std::int64_t id = insert_task(store_, team.id, request.subject, request.description, owner,
                                      blockers, now);
        append_activity(store_.db(), team.id, now, caller.id(), "task_created",
                        {{"taskId", std::to_string(id)},
                         {"subject", request.subject.substr(0, 200)},
                         {"owner", owner ? nlohmann::json(*owner) : nullptr}});
        return require_task(store_, team, id);
    });
}

std::vector<Task> TaskList::list(const TeamRecord& team, const TaskFilter& filter) {
    if (filter.status) check_status(*filter.status);
    std::optional<std::string> owner = filter.owner;
    if (owner) {
        if (auto at = owner->find('@'); at != std::string::npos) {
            if (owner->substr(at + 1) != team.name) {
                throw usage_error("owner " + quote(*owner) + " is not of team " + quote(team.name));
            }
            owner = owner->substr(0, at);
        }
        check_name(*owner, "agent name");
        if (!find_member(store_, team, *owner)) member_not_found(store_, team, *owner);
    }
    TaskQuery query;
    query.owner = owner;
    if (filter.status) query.status = parse_state<TaskStatus>(*filter.status);
    query.available = filter.available;
    return list_tasks(store_, team.id, query);
}

Task TaskList::show(const TeamRecord& team, const std::string& id) {
    return require_task(store_, team, parse_task_id(id));
}

Task TaskList::claim(const TeamRecord& team, const Caller& caller,
                     const std::optional<std::string>& given) {
    std::optional<std::int64_t> wanted;
    if (given) wanted = parse_task_id(*given);
    // A shared write: claims of many homes run side by side, each taking its row by lock.
    return store_.write(Db::Turn::shared, [&] {
        require_live_caller(store_, caller, true);
        std::int64_t id;
        if (wanted) {
            id = *wanted;
        } else {
            auto first = first_available_task(store_, team.id);
            if (!first) {
                auto counts = count_tasks_by_status(store_, team.id);
                throw not_found("no available task in team " + quote(team.name) + " (" +
                                std::to_string(counts["pending"]) +
                                " pending, each blocked or assigned)");
            }
            id = *first;
        }
        auto now = clock_.now();
        // The claim itself: one conditional UPDATE. Exactly one concurrent claimer changes it.
        if (!claim_task_row(store_, team.id, id, caller.name, now)) {
            Task t = require_task(store_, team, id);
            if (t.status == TaskStatus::in_progress) {
                throw refused("task " + std::to_string(id) + " is already claimed by " +
                              who(t.owner.value_or("?"), caller));
            }
            if (t.status != TaskStatus::pending) {
                throw refused("task " + std::to_string(id) + " is " + str(t.status) +
                              "; there is nothing to claim");
            }
            if (t.owner && *t.owner != caller.name) {
                throw refused("task " + std::to_string(id) + " is assigned to " + quote(*t.owner));
            }
            throw refused("task " + std::to_string(id) + " is blocked by " +
                          unfinished_blockers(store_, team.id, id));
        }
        // Read back before the entry: appending it takes the appenders' lock (Db::Turn),
        // held to the commit, and other claims wait on it for as few round trips as can be.
        Task claimed = require_task(store_, team, id);
        append_activity(store_.db(), team.id, now, caller.id(), "task_claimed",
                        {{"taskId", std::to_string(id)}});
        return claimed;
    });
}

Task TaskList::update(const TeamRecord& team, const Caller& caller, const std::string& given,
                      const TaskChange& change) {
    auto id = parse_task_id(given);
    if (change.owner && change.unassign) throw usage_error("give --owner or --unassign, not both");
    if (!change.status && !change.owner && !change.unassign && !change.subject &&
        !change.description) {
        throw usage_error(
            "nothing to change: give --status, --owner, --unassign, --subject or --description");
    }
    if (change.status) check_status(*change.status);
    if (change.subject) check_subject(*change.subject);
    if (change.description) {
        check_text(*change.description, kMaxDescriptionBytes, "the description");
    }
    return store_.write([&] {
        Task t = require_task(store_, team, id);
        check_fence(store_, t, caller, change.epoch);
        if (t.owner && *t.owner != caller.name && !caller.is_leader) {
            throw refused("task " + std::to_string(id) + " is owned by " + quote(*t.owner) +
                          "; only its owner or the leader can change it");
        }
        std::optional<std::string> owner = t.owner;
        if (change.owner) owner = live_owner(store_, team, *change.owner);
        if (change.unassign) owner.reset();
        TaskStatus status = change.status ? *parse_state<TaskStatus>(*change.status) : t.status;
        if (!change.status && !owner && t.status == TaskStatus::in_progress) {
            status = TaskStatus::pending;
        }
        auto now = clock_.now();
        // (A plain number, not an optional: GCC 12 warns of a false maybe-uninitialized.)
        EpochMs claimed_at = t.claimed_at ? *t.claimed_at : -1;
        if ((status == TaskStatus::completed && t.status != TaskStatus::completed) &&
            !caller.is_leader && owner != caller.name) {
            throw refused("task " + std::to_string(id) +
                          " is not yours; only its owner or the leader can complete it");
        }
        if (status == TaskStatus::in_progress) {
            if (!owner) {
                require_live_caller(store_, caller, true);
                owner = caller.name;
            }
            if (t.status != TaskStatus::in_progress || owner != t.owner) claimed_at = now;
            if (t.status != TaskStatus::in_progress) {
                auto blockers = unfinished_blockers(store_, team.id, id);
                if (!blockers.empty()) {
                    throw refused("task " + std::to_string(id) + " is blocked by " + blockers);
                }
            }
        }
        if (status == TaskStatus::pending || !owner) claimed_at = -1;

        update_task_row(store_, team.id, id, status, owner,
                        claimed_at >= 0 ? std::optional<EpochMs>(claimed_at) : std::nullopt,
                        change.subject.value_or(t.subject),
                        change.description.value_or(t.description), now);
        nlohmann::json changes = nlohmann::json::object();
        if (status != t.status) changes["status"] = str(status);
        if (owner != t.owner) changes["owner"] = owner ? nlohmann::json(*owner) : nullptr;
        if (change.subject) changes["subject"] = change.subject->substr(0, 200);
        if (change.description) changes["description"] = true;
        append_activity(store_.db(), team.id, now, caller.id(), "task_updated",
                        {{"taskId", std::to_string(id)}, {"changes", changes}});
        return require_task(store_, team, id);
    });
}

Task TaskList::done(const TeamRecord& team, const Caller& caller, const std::string& given,
                    std::optional<std::int64_t> epoch) {
    auto id = parse_task_id(given);
    return store_.write([&] {
        Task t = require_task(store_, team, id);
        check_fence(store_, t, caller, epoch);
        if (t.status == TaskStatus::completed || t.status == TaskStatus::deleted) {
            throw refused("task " + std::to_string(id) + " is already " + str(t.status));
        }
        if (!caller.is_leader && t.owner != caller.name) {
            throw refused(
                "task " + std::to_string(id) + " is " +
                (t.owner ? "owned by " + quote(*t.owner) : std::string("not yours")) +
                "; only its owner or the leader can complete it" +
                (t.owner ? "" : " (claim it first: team task claim " + std::to_string(id) + ")"));
        }
        auto now = clock_.now();
        update_task_row(store_, team.id, id, TaskStatus::completed, t.owner, t.claimed_at,
                        t.subject, t.description, now);
        append_activity(store_.db(), team.id, now, caller.id(), "task_completed",
                        {{"taskId", std::to_string(id)}});
        return require_task(store_, team, id);
    });
}

}  // namespace team::tasks
