#include "state/host_rows.hpp"

#include "state/db.hpp"
#include "state/sql.hpp"

namespace team {

namespace {

#define TEAM_HOST_COLUMNS                                                                 \
    "id, name, ssh, team_path, home_id, version, lease_ms, renewed_at, lost_at, rtt_us, " \
    "checked_at, check_error, added_at"

HostRecord read_host(Statement& row) {
    HostRecord h;
    h.id = row.getColumn(0).getInt64();
    h.name = row.getColumn(1).getString();
    h.ssh = row.getColumn(2).getString();
    h.team_path = row.getColumn(3).getString();
    h.home_id = row.getColumn(4).getString();
    h.version = row.getColumn(5).getString();
    h.lease_ms = row.getColumn(6).getInt64();
    h.renewed_at = column_or_null<EpochMs>(row.getColumn(7));
    h.lost_at = column_or_null<EpochMs>(row.getColumn(8));
    h.rtt_us = column_or_null<std::int64_t>(row.getColumn(9));
    h.checked_at = column_or_null<EpochMs>(row.getColumn(10));
    h.check_error = column_or_null<std::string>(row.getColumn(11));
    h.added_at = row.getColumn(12).getInt64();
    return h;
}

std::optional<HostRecord> find_by(Store& store, const char* column, const std::string& value) {
    Statement select(store.db(), std::string("SELECT " TEAM_HOST_COLUMNS " FROM hosts WHERE ") +
                                     column + " = ?");
    select.bind(1, value);
    if (!select.executeStep()) return std::nullopt;
    return read_host(select);
}

}  // namespace

std::optional<HostRecord> find_host(Store& store, const std::string& name) {
    return find_by(store, "name", name);
}

std::optional<HostRecord> find_host_by_home(Store& store, const std::string& home_id) {
    return find_by(store, "home_id", home_id);
}

std::vector<HostRecord> list_hosts(Store& store) {
    Statement select(store.db(), "SELECT " TEAM_HOST_COLUMNS " FROM hosts ORDER BY name");
    std::vector<HostRecord> out;
    while (select.executeStep()) out.push_back(read_host(select));
    return out;
}

std::vector<std::string> host_names(Store& store) {
    Statement select(store.db(), "SELECT name FROM hosts ORDER BY name");
    std::vector<std::string> out;
    while (select.executeStep()) out.push_back(select.getColumn(0).getString());
    return out;
}

std::int64_t insert_host(Store& store, const HostRecord& h) {
    Statement insert(store.db(), R"sql(
        INSERT INTO hosts (name, ssh, team_path, home_id, version, lease_ms, rtt_us, checked_at,
                           added_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id
    )sql");
    insert.bind(1, h.name);
    insert.bind(2, h.ssh);
    insert.bind(3, h.team_path);
    insert.bind(4, h.home_id);
    insert.bind(5, h.version);
    insert.bind(6, h.lease_ms);
    bind_or_null(insert, 7, h.rtt_us);
    bind_or_null(insert, 8, h.checked_at);
    insert.bind(9, h.added_at);
    insert.executeStep();
    return insert.getColumn(0).getInt64();
}

bool delete_host(Store& store, const std::string& name) {
    Statement del(store.db(), "DELETE FROM hosts WHERE name = ?");
    del.bind(1, name);
    return del.exec() > 0;
}

void record_host_check(Store& store, const std::string& name, const std::string& version,
                       std::optional<std::int64_t> rtt_us, const std::optional<std::string>& error,
                       EpochMs at) {
    Statement update(store.db(), R"sql(
        UPDATE hosts SET version = CASE WHEN ? = '' THEN version ELSE ? END, rtt_us = ?,
                         check_error = ?, checked_at = ?
        WHERE name = ?
    )sql");
    update.bind(1, version);
    update.bind(2, version);
    bind_or_null(update, 3, rtt_us);
    bind_or_null(update, 4, error);
    update.bind(5, at);
    update.bind(6, name);
    update.exec();
}

bool renew_host_lease(Store& store, const std::string& home_id, EpochMs at) {
    Statement update(store.db(),
                     "UPDATE hosts SET renewed_at = ? WHERE home_id = ? AND lost_at IS NULL");
    update.bind(1, at);
    update.bind(2, home_id);
    return update.exec() > 0;
}

void release_host_lease(Store& store, const std::string& home_id) {
    Statement update(store.db(), "UPDATE hosts SET renewed_at = NULL WHERE home_id = ?");
    update.bind(1, home_id);
    update.exec();
}

void mark_host_lost(Store& store, const std::string& name, EpochMs at) {
    Statement update(store.db(), "UPDATE hosts SET lost_at = COALESCE(lost_at, ?) WHERE name = ?");
    update.bind(1, at);
    update.bind(2, name);
    update.exec();
}

void clear_host_lost(Store& store, const std::string& name) {
    Statement update(store.db(),
                     "UPDATE hosts SET lost_at = NULL, renewed_at = NULL WHERE name = ?");
    update.bind(1, name);
    update.exec();
}

}  // namespace team

namespace team {

const char* str(HostState state) {
    switch (state) {
        case HostState::idle:
            return "idle";
        case HostState::up:
            return "up";
        case HostState::suspect:
            return "suspect";
        case HostState::lost:
            return "lost";
    }
    return "lost";
}

HostState host_state(const HostRecord& host, EpochMs now) {
    if (host.lost_at) return HostState::lost;
    if (!host.renewed_at) return HostState::idle;
    auto age = now - *host.renewed_at;
    if (age <= 2 * renew_every_ms(host)) return HostState::up;
    if (age <= host.lease_ms) return HostState::suspect;
    return HostState::lost;
}

bool lease_run_out(const HostRecord& host, EpochMs now, EpochMs since) {
    if (host.lost_at) return true;
    EpochMs last = host.renewed_at ? std::max(*host.renewed_at, since) : since;
    return now - last > host.lease_ms + grace_ms(host);
}

}  // namespace team

namespace team {

std::vector<std::int64_t> live_agents_of_home(Store& store, const std::string& home_id) {
    Statement select(
        store.db(),
        "SELECT id FROM agents WHERE home_id = ? AND status <> 'terminated' ORDER BY id");
    select.bind(1, home_id);
    std::vector<std::int64_t> out;
    while (select.executeStep()) out.push_back(select.getColumn(0).getInt64());
    return out;
}

}  // namespace team
