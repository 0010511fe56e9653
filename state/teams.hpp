// The teams repository: teams as the store keeps them.
#pragma once

#include <cstdint>

#include "state/store.hpp"

namespace team {

// Whether the team of that row id is active (not dissolved).
bool team_is_active(Store& store, std::int64_t team_id);

}  // namespace team
