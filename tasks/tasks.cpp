#include "tasks/tasks.hpp"

#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>

#include "base/error.hpp"
#include "base/names.hpp"
#include "base/text.hpp"
#include "state/activity.hpp"
#include "state/sql.hpp"

namespace team::tasks {

namespace {

constexpr std::size_t kMaxSubjectBytes = 4096;
constexpr std::size_t kMaxDescriptionBytes = 1u << 20;

const char* const kTaskColumns =
    "id, subject, description, status, owner, claimed_at, warning, created_at, updated_at";

// True (as SQL) while a blocker of the task `outer`.id is unfinished.
std::string blocked_sql(const std::string& outer) {
    return "EXISTS (SELECT 1 FROM task_blockers b JOIN tasks x ON x.team_id = b.team_id AND "
           "x.id = b.blocker WHERE b.team_id = " +
           outer + ".team_id AND b.task_id = " + outer +
           ".id AND x.status IN ('pending', 'in_progress'))";
}

Task read_task(SQLite::Statement& row) {
    Task t;
    t.id = row.getColumn(0).getInt64();
    t.subject = row.getColumn(1).getString();
    t.description = row.getColumn(2).getString();
    t.status = state_from<TaskStatus>(row.getColumn(3).getString());
    t.owner = column_or_null<std::string>(row.getColumn(4));
    t.claimed_at = column_or_null<EpochMs>(row.getColumn(5));
    t.warning = column_or_null<std::string>(row.getColumn(6));
    t.created_at = row.getColumn(7).getInt64();
    t.updated_at = row.getColumn(8).getInt64();
    return t;
}

std::vector<std::int64_t> blockers_of(SQLite::Database& db, std::int64_t team_id, std::int64_t id) {
    SQLite::Statement select(
        db, "SELECT blocker FROM task_blockers WHERE team_id = ? AND task_id = ? ORDER BY blocker");
    select.bind(1, team_id);
    select.bind(2, id);
    std::vector<std::int64_t> out;
    while (select.executeStep()) out.push_back(select.getColumn(0).getInt64());
    return out;
}

std::optional<Task> load_task(SQLite::Database& db, std::int64_t team_id, std::int64_t id) {
    SQLite::Statement select(
        db, std::string("SELECT ") + kTaskColumns + " FROM tasks WHERE team_id = ? AND id = ?");
    select.bind(1, team_id);
    select.bind(2, id);
    if (!select.executeStep()) return std::nullopt;
    Task t = read_task(select);
    t.blocked_by = blockers_of(db, team_id, id);
    return t;
}

Error task_not_found(const TeamRecord& team, std::int64_t id) {
    return not_found("task " + std::to_string(id) + " not found in team " + quote(team.name));
}

Task require_task(Store& store, const TeamRecord& team, std::int64_t id) {
    auto t = load_task(store.db(), team.id, id);
    if (!t) throw task_not_found(team, id);
    return *t;
}

// The unfinished blockers of a task, as "2 (pending), 5 (in_progress)".
std::string unfinished_blockers(SQLite::Database& db, std::int64_t team_id, std::int64_t id) {
    SQLite::Statement select(db, R"sql(
        SELECT x.id, x.status FROM task_blockers b
        JOIN tasks x ON x.team_id = b.team_id AND x.id = b.blocker
        WHERE b.team_id = ? AND b.task_id = ? AND x.status IN ('pending', 'in_progress')
        ORDER BY x.id
    )sql");
    select.bind(1, team_id);
    select.bind(2, id);
    std::string out;
    while (select.executeStep()) {
        if (!out.empty()) out += ", ";
        out += std::to_string(select.getColumn(0).getInt64()) + " (" +
               select.getColumn(1).getString() + ")";
    }
    return out;
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
void require_live_caller(SQLite::Database& db, const Caller& caller, bool claiming) {
    SQLite::Statement status(db, "SELECT status FROM agents WHERE id = ?");
    status.bind(1, caller.member_id);
    std::string now = status.executeStep() ? status.getColumn(0).getString() : "terminated";
    if (now == "terminated") {
        throw refused("you (" + caller.id() + ") are terminated; a task cannot be given to you");
    }
    if (claiming && now == "shutting_down") {
        throw refused("you (" + caller.id() +
                      ") are shutting down; finish your current work instead of claiming more");
    }
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
            {"updatedAt", iso8601(t.updated_at)}};
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
        auto& db = store_.db();
        SQLite::Statement next(db, "SELECT COALESCE(MAX(id), 0) + 1 FROM tasks WHERE team_id = ?");
        next.bind(1, team.id);
        next.executeStep();
        std::int64_t id = next.getColumn(0).getInt64();
        auto now = clock_.now();
        SQLite::Statement insert(db, R"sql(
            INSERT INTO tasks (team_id, id, subject, description, status, owner, created_at,
                               updated_at)
            VALUES (?, ?, ?, ?, 'pending', ?, ?, ?)
        )sql");
        insert.bind(1, team.id);
        insert.bind(2, id);
        insert.bind(3, request.subject);
        insert.bind(4, request.description);
        bind_or_null(insert, 5, owner);
        insert.bind(6, now);
        insert.bind(7, now);
        insert.exec();
        SQLite::Statement block(
            db, "INSERT INTO task_blockers (team_id, task_id, blocker) VALUES (?, ?, ?)");
        for (auto b : blockers) {
            block.bind(1, team.id);
            block.bind(2, id);
            block.bind(3, b);
            block.exec();
            block.reset();
        }
        append_activity(db, team.id, now, caller.id(), "task_created",
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
    // Named indexes: without statistics, SQLite would rather walk the whole team in id order
    // (the primary key) than sort a few rows, which is 100,000 rows for 10 available ones.
    std::string sql = std::string("SELECT ") + kTaskColumns + " FROM tasks t";
    if (filter.available || filter.status) {
        sql += " INDEXED BY tasks_status";
    } else if (filter.owner) {
        sql += " INDEXED BY tasks_owner";
    }
    sql += " WHERE team_id = ?";
    if (filter.status) {
        sql += " AND status = ?";
    } else if (!filter.available) {
        sql += " AND status <> 'deleted'";
    }
    if (owner) sql += " AND owner = ?";
    if (filter.available) {
        sql += " AND status = 'pending' AND owner IS NULL AND NOT " + blocked_sql("t");
    }
    sql += " ORDER BY id";
    SQLite::Statement select(store_.db(), sql);
    int i = 0;
    select.bind(++i, team.id);
    if (filter.status) select.bind(++i, *filter.status);
    if (owner) select.bind(++i, *owner);
    std::vector<Task> out;
    while (select.executeStep()) out.push_back(read_task(select));
    if (out.empty()) return out;

    // Blockers of the listed tasks, in one pass over the team's blocker rows.
    SQLite::Statement blockers(store_.db(), R"sql(
        SELECT task_id, blocker FROM task_blockers
        WHERE team_id = ? AND task_id BETWEEN ? AND ? ORDER BY task_id, blocker
    )sql");
    blockers.bind(1, team.id);
    blockers.bind(2, out.front().id);
    blockers.bind(3, out.back().id);
    auto it = out.begin();
    while (blockers.executeStep()) {
        auto task_id = blockers.getColumn(0).getInt64();
        while (it != out.end() && it->id < task_id) ++it;
        if (it == out.end()) break;
        if (it->id == task_id) it->blocked_by.push_back(blockers.getColumn(1).getInt64());
    }
    return out;
}

Task TaskList::show(const TeamRecord& team, const std::string& id) {
    return require_task(store_, team, parse_task_id(id));
}

Task TaskList::claim(const TeamRecord& team, const Caller& caller,
                     const std::optional<std::string>& given) {
    std::optional<std::int64_t> wanted;
    if (given) wanted = parse_task_id(*given);
    return store_.write([&] {
        auto& db = store_.db();
        require_live_caller(db, caller, true);
        std::int64_t id;
        if (wanted) {
            id = *wanted;
        } else {
            SQLite::Statement first(
                db,
                "SELECT id FROM tasks t INDEXED BY tasks_status WHERE team_id = ? AND status = "
                "'pending' AND owner IS NULL AND NOT " +
                    blocked_sql("t") + " ORDER BY id LIMIT 1");
            first.bind(1, team.id);
            if (!first.executeStep()) {
                auto counts = count_by_status(db, team.id);
                throw not_found("no available task in team " + quote(team.name) + " (" +
                                std::to_string(counts["pending"]) +
                                " pending, each blocked or assigned)");
            }
            id = first.getColumn(0).getInt64();
        }
        auto now = clock_.now();
        // The claim itself: one conditional UPDATE. Exactly one concurrent claimer changes it.
        SQLite::Statement take(db, R"sql(
            UPDATE tasks SET status = 'in_progress', owner = ?, claimed_at = ?, updated_at = ?
            WHERE team_id = ? AND id = ? AND status = 'pending' AND (owner IS NULL OR owner = ?)
              AND NOT )sql" + blocked_sql("tasks"));
        take.bind(1, caller.name);
        take.bind(2, now);
        take.bind(3, now);
        take.bind(4, team.id);
        take.bind(5, id);
        take.bind(6, caller.name);
        if (take.exec() == 0) {
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
                          unfinished_blockers(db, team.id, id));
        }
        append_activity(db, team.id, now, caller.id(), "task_claimed",
                        {{"taskId", std::to_string(id)}});
        return require_task(store_, team, id);
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
        auto& db = store_.db();
        Task t = require_task(store_, team, id);
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
                require_live_caller(db, caller, true);
                owner = caller.name;
            }
            if (t.status != TaskStatus::in_progress || owner != t.owner) claimed_at = now;
            if (t.status != TaskStatus::in_progress) {
                auto blockers = unfinished_blockers(db, team.id, id);
                if (!blockers.empty()) {
                    throw refused("task " + std::to_string(id) + " is blocked by " + blockers);
                }
            }
        }
        if (status == TaskStatus::pending || !owner) claimed_at = -1;

        SQLite::Statement up(db, R"sql(
            UPDATE tasks SET status = ?, owner = ?, claimed_at = ?, subject = ?, description = ?,
                             updated_at = ?
            WHERE team_id = ? AND id = ?
        )sql");
        up.bind(1, str(status));
        bind_or_null(up, 2, owner);
        if (claimed_at >= 0) {
            up.bind(3, claimed_at);
        } else {
            up.bind(3);
        }
        up.bind(4, change.subject.value_or(t.subject));
        up.bind(5, change.description.value_or(t.description));
        up.bind(6, now);
        up.bind(7, team.id);
        up.bind(8, id);
        up.exec();
        nlohmann::json changes = nlohmann::json::object();
        if (status != t.status) changes["status"] = str(status);
        if (owner != t.owner) changes["owner"] = owner ? nlohmann::json(*owner) : nullptr;
        if (change.subject) changes["subject"] = change.subject->substr(0, 200);
        if (change.description) changes["description"] = true;
        append_activity(db, team.id, now, caller.id(), "task_updated",
                        {{"taskId", std::to_string(id)}, {"changes", changes}});
        return require_task(store_, team, id);
    });
}

Task TaskList::done(const TeamRecord& team, const Caller& caller, const std::string& given) {
    auto id = parse_task_id(given);
    return store_.write([&] {
        auto& db = store_.db();
        Task t = require_task(store_, team, id);
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
        SQLite::Statement up(db, R"sql(
            UPDATE tasks SET status = 'completed', updated_at = ? WHERE team_id = ? AND id = ?
        )sql");
        up.bind(1, now);
        up.bind(2, team.id);
        up.bind(3, id);
        up.exec();
        append_activity(db, team.id, now, caller.id(), "task_completed",
                        {{"taskId", std::to_string(id)}});
        return require_task(store_, team, id);
    });
}

std::map<std::string, int> count_by_status(SQLite::Database& db, std::int64_t team_id) {
    std::map<std::string, int> counts{
        {"pending", 0}, {"in_progress", 0}, {"completed", 0}, {"deleted", 0}};
    SQLite::Statement select(db, "SELECT status, n FROM task_counts WHERE team_id = ?");
    select.bind(1, team_id);
    while (select.executeStep()) {
        counts[select.getColumn(0).getString()] = select.getColumn(1).getInt();
    }
    return counts;
}

std::map<std::string, int> open_by_owner(SQLite::Database& db, std::int64_t team_id) {
    std::map<std::string, int> counts;
    SQLite::Statement select(db, R"sql(
        SELECT a.name, (SELECT count(*) FROM tasks t INDEXED BY tasks_owner
                        WHERE t.team_id = a.team_id AND t.owner = a.name
                          AND t.status IN ('pending', 'in_progress'))
        FROM agents a WHERE a.team_id = ? AND a.status <> 'terminated'
    )sql");
    select.bind(1, team_id);
    while (select.executeStep()) {
        if (int n = select.getColumn(1).getInt()) counts[select.getColumn(0).getString()] = n;
    }
    return counts;
}

}  // namespace team::tasks
