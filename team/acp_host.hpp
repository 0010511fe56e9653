// The host of an ACP agent (SPEC 15): the body of the hidden `team __acp ID`, which an agent
// spawned with --acp runs in its pane, under its pane supervisor (team/pane_supervisor.cpp), in
// place of its command. It runs the command as an ACP agent (acp/client.hpp), its child in a
// process group of its own (so section 7's kills, which end the pane supervisor's whole tree,
// reach it), and joins it to the store:
//
//   store (written by the verbs, team/acp_agents)       host                       agent
//   acp_turns queued / a message in its inbox  ──► session/prompt, one at a time ──►
//   acp_permissions answered (answering)       ──► the reply to request_permission ──►
//   acp_agents.cancels + 1                     ──► session/cancel                  ──►
//   a shutdown_request in its inbox            ──► approve, cancel, close, confirm
//                                              ◄── session/update: the transcript rows, drawn in
//                                                  the pane; request_permission: a row and a
//                                                  message to the leader; terminal/*: shells
//
// It wakes on the store's changes (ChangeWatch) and on the agent's end (an eventfd), never by
// polling. The transcript is written as it grows, in batches at most ten a second (one
// transaction each, one `acp_transcript` activity entry each).
#pragma once

#include <cstdint>

#include "state/store.hpp"

namespace team {

// Hosts the ACP agent `agent_id` until it ends. Returns the process's exit code: 0 when the
// agent's connection was closed by us (a shutdown), 1 when it ended otherwise (it exited,
// crashed, broke the protocol), 2 when there is nothing to host.
int host_acp_agent(Store& store, std::int64_t agent_id);

}  // namespace team
