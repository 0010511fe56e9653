#include "state/teams.hpp"

#include <SQLiteCpp/SQLiteCpp.h>

namespace team {

bool team_is_active(Store& store, std::int64_t team_id) {
    SQLite::Statement live_team(store.db(),
                                "SELECT 1 FROM teams WHERE id = ? AND status = 'active'");
    live_team.bind(1, team_id);
    return live_team.executeStep();
}

}  // namespace team
