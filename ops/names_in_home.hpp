// What the command line's completion offers as values (cli/cmd_completion.cpp): the names of a
// home's teams, agents, tasks, shells and sessions, read from the store without a change, and the
// fixed lists of presets and colours. Here so that the face reaches the store through ops/ only.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ops/core.hpp"

namespace team::ops {

// A value and a word on it, as a shell shows candidates.
using NamedValues = std::vector<std::pair<std::string, std::string>>;

enum class HomeNames { team, agent, task, shell, session };

// The names of that kind in `core`'s home (agents and tasks: of its team). Nothing when the home
// has no store yet: a TAB never creates one.
NamedValues names_in_home(Core& core, HomeNames kind);

// The presets `spawn --preset` takes, and the colours of the pool.
const std::vector<std::string>& preset_choices();
const std::vector<std::string>& color_choices();

}  // namespace team::ops
