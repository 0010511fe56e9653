// Agents as every look gives them (SPEC 4's agent JSON with what SPEC 14-16 add): the record,
// its host and the host's state, its worktree's git state, its ACP session. One builder, so the
// list (`team agents`, agent_list, GET /api/teams/T/agents) and the one agent (GET
// /api/teams/T/agents/NAME) carry the same fields.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "ops/core.hpp"
#include "state/records.hpp"

namespace team::ops {

// The rows of `agents`, in their order. Each look costs one query per kind of addition, not one
// per agent.
nlohmann::json agent_rows(Core& core, const TeamRecord& team,
                          const std::vector<AgentRecord>& agents);

}  // namespace team::ops
