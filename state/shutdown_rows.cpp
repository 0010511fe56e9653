#include "state/shutdown_rows.hpp"

#include "state/db.hpp"

#include <nlohmann/json.hpp>

#include "state/sql.hpp"

namespace team {

namespace {

const char* const kRequestColumns = R"sql(
    SELECT r.id, r.team_id, r.agent_id, a.name || '@' || t.name, r.method, r.phase, r.reason,
           r.reject_reason, r.requested_by, r.requested_at, r.responded_at, r.confirmed_at,
           r.force_at, r.forced_at, r.grace_ms, r.reassign_to, r.reassigned, r.closed_at,
           r.force_at_boot
    FROM shutdown_requests r JOIN agents a ON a.id = r.agent_id JOIN teams t ON t.id = r.team_id
)sql";

ShutdownRequest request_from(Statement& row) {
    ShutdownRequest r;
    r.id = row.getColumn(0).getInt64();
    r.team_id = row.getColumn(1).getInt64();
    r.agent_id = row.getColumn(2).getInt64();
    r.agent = row.getColumn(3).getString();
    r.method = state_from<ShutdownMethod>(row.getColumn(4).getString());
    r.phase = state_from<ShutdownPhase>(row.getColumn(5).getString());
    r.reason = row.getColumn(6).getString();
    r.reject_reason = column_or_null<std::string>(row.getColumn(7));
    r.requested_by = row.getColumn(8).getString();
    r.requested_at = row.getColumn(9).getInt64();
    r.responded_at = column_or_null<EpochMs>(row.getColumn(10));
    r.confirmed_at = column_or_null<EpochMs>(row.getColumn(11));
    r.force_at = column_or_null<EpochMs>(row.getColumn(12));
    r.forced_at = column_or_null<EpochMs>(row.getColumn(13));
    r.grace_ms = row.getColumn(14).getInt64();
    r.reassign_to = column_or_null<std::string>(row.getColumn(15));
    if (!row.getColumn(16).isNull()) {
        r.reassigned =
            nlohmann::json::parse(row.getColumn(16).getString()).get<std::vector<std::string>>();
    }
    r.closed_at = column_or_null<EpochMs>(row.getColumn(17));
    r.force_at_boot = column_or_null<std::int64_t>(row.getColumn(18));
    return r;
}

// The requests `where` selects (one `?`, bound to `key`), in its order.
std::vector<ShutdownRequest> select_requests(Store& store, const char* where, std::int64_t key) {
    Statement select(store.db(), std::string(kRequestColumns) + " WHERE " + where);
    select.bind(1, key);
    std::vector<ShutdownRequest> out;
    while (select.executeStep()) out.push_back(request_from(select));
    return out;
}

std::optional<ShutdownRequest> first(std::vector<ShutdownRequest> rows) {
    if (rows.empty()) return std::nullopt;
    return std::move(rows.front());
}

}  // namespace

std::optional<ShutdownRequest> find_request(Store& store, std::int64_t id) {
    return first(select_requests(store, "r.id = ?", id));
}

std::optional<ShutdownRequest> newest_request(Store& store, std::int64_t agent_id) {
    return first(select_requests(store, "r.agent_id = ? ORDER BY r.id DESC LIMIT 1", agent_id));
}

std::optional<ShutdownRequest> newest_open_request(Store& store, std::int64_t agent_id) {
    return first(select_requests(
        store, "r.agent_id = ? AND r.closed_at IS NULL ORDER BY r.id DESC LIMIT 1", agent_id));
}

std::vector<ShutdownRequest> requests_of(Store& store, std::int64_t agent_id, bool open_only) {
    return select_requests(store,
                           open_only ? "r.agent_id = ? AND r.closed_at IS NULL ORDER BY r.id"
                                     : "r.agent_id = ? ORDER BY r.id",
                           agent_id);
}

std::vector<ShutdownRequest> open_requests(Store& store, std::int64_t team_id) {
    return select_requests(store, "r.team_id = ? AND r.closed_at IS NULL ORDER BY r.id", team_id);
}

std::int64_t insert_graceful_request(Store& store, const NewShutdownRequest& request) {
    Statement insert(store.db(), R"sql(
        INSERT INTO shutdown_requests (team_id, agent_id, method, phase, reason, requested_by,
                                       requested_at, force_at, force_at_boot, grace_ms, reassign_to)
        VALUES (?, ?, 'graceful', 'requested', ?, ?, ?, ?, ?, ?, ?)
        RETURNING id
    )sql");
    insert.bind(1, request.team_id);
    insert.bind(2, request.agent_id);
    insert.bind(3, request.reason);
    insert.bind(4, request.requested_by);
    insert.bind(5, request.requested_at);
    bind_or_null(insert, 6, request.force_at);
    bind_or_null(insert, 7, request.force_at_boot);
    insert.bind(8, request.grace_ms);
    bind_or_null(insert, 9, request.reassign_to);
    insert.executeStep();
    return insert.getColumn(0).getInt64();
}

std::optional<std::int64_t> insert_force_request(Store& store, const NewShutdownRequest& request) {
    Statement insert(store.db(), R"sql(
        INSERT INTO shutdown_requests (team_id, agent_id, method, phase, reason, requested_by,
                                       requested_at, forced_at, grace_ms, reassign_to)
        SELECT ?, id, 'force', 'requested', ?, ?, ?, ?, ?, ? FROM agents
        WHERE id = ? AND status <> 'terminated'
        RETURNING id
    )sql");
    insert.bind(1, request.team_id);
    insert.bind(2, request.reason);
    insert.bind(3, request.requested_by);
    insert.bind(4, request.requested_at);
    insert.bind(5, request.requested_at);
    insert.bind(6, request.grace_ms);
    bind_or_null(insert, 7, request.reassign_to);
    insert.bind(8, request.agent_id);
    if (!insert.executeStep()) return std::nullopt;
    return insert.getColumn(0).getInt64();
}

void mark_request_approved(Store& store, std::int64_t id, EpochMs at) {
    Statement up(store.db(),
                 "UPDATE shutdown_requests SET phase = 'approved', responded_at = ? "
                 "WHERE id = ?");
    up.bind(1, at);
    up.bind(2, id);
    up.exec();
}

void mark_request_rejected(Store& store, std::int64_t id, const std::string& reason, EpochMs at) {
    Statement up(store.db(), R"sql(
        UPDATE shutdown_requests SET phase = 'rejected', responded_at = ?, reject_reason = ?,
                                     closed_at = ?
        WHERE id = ?
    )sql");
    up.bind(1, at);
    up.bind(2, reason);
    up.bind(3, at);
    up.bind(4, id);
    up.exec();
}

void mark_request_confirmed(Store& store, std::int64_t id, EpochMs at) {
    Statement up(store.db(), R"sql(
        UPDATE shutdown_requests SET phase = 'confirmed', confirmed_at = ?,
                                     responded_at = coalesce(responded_at, ?)
        WHERE id = ?
    )sql");
    up.bind(1, at);
    up.bind(2, at);
    up.bind(3, id);
    up.exec();
}

void bring_deadline_forward(Store& store, std::int64_t agent_id, EpochMs force_at,
                            std::optional<std::int64_t> force_at_boot, std::int64_t grace_ms) {
    // A request from before schema 7 has its deadline on the wall clock only. (The smaller of
    // two as CASE: SQLite's min(a, b) is PostgreSQL's LEAST.)
    Statement sooner(store.db(), R"sql(
        UPDATE shutdown_requests
        SET force_at_boot = CASE WHEN ?4 IS NULL
                                 THEN CASE WHEN force_at IS NOT NULL AND force_at < ?1
                                           THEN force_at_boot ELSE NULL END
                                 WHEN force_at_boot IS NOT NULL AND force_at_boot < ?4
                                 THEN force_at_boot
                                 WHEN force_at_boot IS NULL AND force_at IS NOT NULL
                                      AND force_at < ?1
                                 THEN ?4 + force_at - ?1
                                 ELSE ?4 END,
            force_at = CASE WHEN force_at IS NOT NULL AND force_at < ?1 THEN force_at ELSE ?1 END,
            grace_ms = CASE WHEN grace_ms < ?2 THEN grace_ms ELSE ?2 END
        WHERE agent_id = ?3 AND closed_at IS NULL
    )sql");
    sooner.bind(1, force_at);
    sooner.bind(2, grace_ms);
    sooner.bind(3, agent_id);
    bind_or_null(sooner, 4, force_at_boot);
    sooner.exec();
}

void begin_force_newest(Store& store, std::int64_t agent_id, EpochMs at) {
    Statement up(store.db(), R"sql(
        UPDATE shutdown_requests SET forced_at = ?1, closed_at = NULL
        WHERE id = (SELECT max(id) FROM shutdown_requests WHERE agent_id = ?2)
          AND forced_at IS NULL
          AND EXISTS (SELECT 1 FROM agents WHERE id = ?2 AND status <> 'terminated')
    )sql");
    up.bind(1, at);
    up.bind(2, agent_id);
    up.exec();
}

void begin_force_due(Store& store, std::int64_t id, std::int64_t agent_id, EpochMs at) {
    Statement up(store.db(), R"sql(
        UPDATE shutdown_requests SET forced_at = ?, closed_at = NULL
        WHERE id = ? AND forced_at IS NULL
          AND EXISTS (SELECT 1 FROM agents WHERE id = ? AND status <> 'terminated')
    )sql");
    up.bind(1, at);
    up.bind(2, id);
    up.bind(3, agent_id);
    up.exec();
}

void close_requests(Store& store, std::int64_t agent_id, bool forced, EpochMs at,
                    const std::vector<std::string>& reassigned) {
    Statement close(store.db(), R"sql(
        UPDATE shutdown_requests
        SET phase = CASE WHEN ?1 THEN 'force_killed'
                         WHEN phase IN ('approved', 'confirmed') THEN 'confirmed'
                         ELSE phase END,
            confirmed_at = CASE WHEN NOT ?1 AND phase IN ('approved', 'confirmed')
                                THEN coalesce(confirmed_at, ?2) ELSE confirmed_at END,
            closed_at = ?2, reassigned = ?3
        WHERE agent_id = ?4 AND closed_at IS NULL
    )sql");
    close.bind(1, forced);
    close.bind(2, at);
    close.bind(3, nlohmann::json(reassigned).dump());
    close.bind(4, agent_id);
    close.exec();
}

}  // namespace team
