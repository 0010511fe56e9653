#include "state/land_rows.hpp"

#include "state/db.hpp"
#include "state/sql.hpp"

namespace team {

namespace {

constexpr const char* kLandColumns = R"sql(
    SELECT id, team_id, started_at, ended_at, started_by, pid, into_branch, strategy, check_cmd,
           scratch, status FROM lands )sql";

LandRow read_land(Statement& s) {
    LandRow r;
    r.id = s.getColumn(0).getInt64();
    r.team_id = s.getColumn(1).getInt64();
    r.started_at = s.getColumn(2).getInt64();
    r.ended_at = column_or_null<EpochMs>(s.getColumn(3));
    r.started_by = s.getColumn(4).getString();
    r.pid = s.getColumn(5).getInt64();
    r.into = s.getColumn(6).getString();
    r.strategy = s.getColumn(7).getString();
    r.check = s.getColumn(8).getString();
    r.scratch = column_or_null<std::string>(s.getColumn(9));
    r.status = s.getColumn(10).getString();
    return r;
}

constexpr const char* kItemColumns = R"sql(
    SELECT land_id, position, agent, agent_id, branch, tip, state, onto, candidate, shell_id,
           result, decided_at FROM land_items )sql";

LandItemRow read_item(Statement& s) {
    LandItemRow r;
    r.land_id = s.getColumn(0).getInt64();
    r.position = s.getColumn(1).getInt();
    r.agent = s.getColumn(2).getString();
    r.agent_id = column_or_null<std::int64_t>(s.getColumn(3));
    r.branch = s.getColumn(4).getString();
    r.tip = s.getColumn(5).getString();
    r.state = s.getColumn(6).getString();
    r.onto = column_or_null<std::string>(s.getColumn(7));
    r.candidate = column_or_null<std::string>(s.getColumn(8));
    r.shell_id = column_or_null<std::string>(s.getColumn(9));
    if (auto text = column_or_null<std::string>(s.getColumn(10))) {
        r.result = nlohmann::json::parse(*text, nullptr, false);
        if (r.result.is_discarded()) r.result = nullptr;
    }
    r.decided_at = column_or_null<EpochMs>(s.getColumn(11));
    return r;
}

}  // namespace

std::int64_t insert_land(Store& store, const LandRow& l) {
    Statement s(store.db(), R"sql(
        INSERT INTO lands (team_id, started_at, started_by, pid, into_branch, strategy, check_cmd,
                           scratch, status)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id
    )sql");
    s.bind(1, l.team_id);
    s.bind(2, l.started_at);
    s.bind(3, l.started_by);
    s.bind(4, l.pid);
    s.bind(5, l.into);
    s.bind(6, l.strategy);
    s.bind(7, l.check);
    bind_or_null(s, 8, l.scratch);
    s.bind(9, l.status);
    s.executeStep();
    return s.getColumn(0).getInt64();
}

void insert_land_item(Store& store, const LandItemRow& i) {
    Statement s(store.db(), R"sql(
        INSERT INTO land_items (land_id, position, agent, agent_id, branch, tip, state)
        VALUES (?, ?, ?, ?, ?, ?, ?)
    )sql");
    s.bind(1, i.land_id);
    s.bind(2, i.position);
    s.bind(3, i.agent);
    bind_or_null(s, 4, i.agent_id);
    s.bind(5, i.branch);
    s.bind(6, i.tip);
    s.bind(7, i.state);
    s.exec();
}

void set_land_scratch(Store& store, std::int64_t land_id, const std::optional<std::string>& path) {
    Statement s(store.db(), "UPDATE lands SET scratch = ? WHERE id = ?");
    bind_or_null(s, 1, path);
    s.bind(2, land_id);
    s.exec();
}

void end_land(Store& store, std::int64_t land_id, const std::string& status, EpochMs at) {
    Statement s(store.db(), "UPDATE lands SET status = ?, ended_at = ? WHERE id = ?");
    s.bind(1, status);
    s.bind(2, at);
    s.bind(3, land_id);
    s.exec();
}

void set_land_item_state(Store& store, const LandItemRow& i) {
    Statement s(store.db(), R"sql(
        UPDATE land_items SET state = ?, tip = ?, onto = ?, candidate = ?, shell_id = ?
        WHERE land_id = ? AND position = ?
    )sql");
    s.bind(1, i.state);
    s.bind(2, i.tip);
    bind_or_null(s, 3, i.onto);
    bind_or_null(s, 4, i.candidate);
    bind_or_null(s, 5, i.shell_id);
    s.bind(6, i.land_id);
    s.bind(7, i.position);
    s.exec();
}

void decide_land_item(Store& store, const LandItemRow& i) {
    set_land_item_state(store, i);
    Statement s(store.db(), R"sql(
        UPDATE land_items SET result = ?, decided_at = ? WHERE land_id = ? AND position = ?
    )sql");
    s.bind(1, i.result.dump());
    bind_or_null(s, 2, i.decided_at);
    s.bind(3, i.land_id);
    s.bind(4, i.position);
    s.exec();
}

std::vector<LandRow> team_lands(Store& store, std::int64_t team_id, int limit) {
    Statement s(store.db(),
                std::string(kLandColumns) + "WHERE team_id = ? ORDER BY id DESC LIMIT ?");
    s.bind(1, team_id);
    s.bind(2, limit);
    std::vector<LandRow> out;
    while (s.executeStep()) out.push_back(read_land(s));
    return out;
}

std::vector<LandRow> running_lands(Store& store, std::int64_t team_id) {
    Statement s(store.db(),
                std::string(kLandColumns) + "WHERE team_id = ? AND status = 'running' ORDER BY id");
    s.bind(1, team_id);
    std::vector<LandRow> out;
    while (s.executeStep()) out.push_back(read_land(s));
    return out;
}

std::vector<LandItemRow> land_items(Store& store, std::int64_t land_id) {
    Statement s(store.db(), std::string(kItemColumns) + "WHERE land_id = ? ORDER BY position");
    s.bind(1, land_id);
    std::vector<LandItemRow> out;
    while (s.executeStep()) out.push_back(read_item(s));
    return out;
}

std::vector<LandItemRow> landed_items(Store& store, const std::string& branch,
                                      const std::string& tip) {
    Statement s(store.db(), std::string(kItemColumns) +
                                "WHERE branch = ? AND tip = ? AND (state = 'landed' OR "
                                "(state = 'interrupted' AND candidate IS NOT NULL)) "
                                "ORDER BY land_id DESC");
    s.bind(1, branch);
    s.bind(2, tip);
    std::vector<LandItemRow> out;
    while (s.executeStep()) out.push_back(read_item(s));
    return out;
}

}  // namespace team
