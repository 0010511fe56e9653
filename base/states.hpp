// The states of the records, as types: a typo in a status is a compile error, not a silent
// mismatch. Text only at the edges: the store's columns and the JSON of SPEC (text_of, state_from).
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace team {

// A team (SPEC 3).
enum class TeamState { active, dissolved };
// A member of a team (SPEC 4).
enum class AgentStatus { spawning, active, shutting_down, terminated };
// A task (SPEC 6).
enum class TaskStatus { pending, in_progress, completed, deleted };
// A background shell (SPEC 8).
enum class ShellStatus { starting, running, completed, killed, timed_out, failed };
// How an agent is stopped, and where its request stands (SPEC 7).
enum class ShutdownMethod { graceful, force };
// `unconfirmed` is never stored: a kill-agent --force whose agent's host did not answer reports
// it (SPEC 16), the request staying in its phase.
enum class ShutdownPhase { requested, approved, rejected, confirmed, force_killed, unconfirmed };

// The names of each state, in the order of its enumerators.
template <class E>
struct StateNames;
template <>
struct StateNames<TeamState> {
    static constexpr std::array<std::string_view, 2> names{"active", "dissolved"};
    static constexpr std::string_view what = "team status";
};
template <>
struct StateNames<AgentStatus> {
    static constexpr std::array<std::string_view, 4> names{"spawning", "active", "shutting_down",
                                                           "terminated"};
    static constexpr std::string_view what = "agent status";
};
template <>
struct StateNames<TaskStatus> {
    static constexpr std::array<std::string_view, 4> names{"pending", "in_progress", "completed",
                                                           "deleted"};
    static constexpr std::string_view what = "task status";
};
template <>
struct StateNames<ShellStatus> {
    static constexpr std::array<std::string_view, 6> names{"starting", "running",   "completed",
                                                           "killed",   "timed_out", "failed"};
    static constexpr std::string_view what = "shell status";
};
template <>
struct StateNames<ShutdownMethod> {
    static constexpr std::array<std::string_view, 2> names{"graceful", "force"};
    static constexpr std::string_view what = "shutdown method";
};
template <>
struct StateNames<ShutdownPhase> {
    static constexpr std::array<std::string_view, 6> names{
        "requested", "approved", "rejected", "confirmed", "force_killed", "unconfirmed"};
    static constexpr std::string_view what = "shutdown phase";
};

// The text of a state, as the store and the JSON have it.
template <class E>
constexpr std::string_view text_of(E state) {
    return StateNames<E>::names[static_cast<std::size_t>(state)];
}

// The same as a std::string, for JSON and output.
template <class E>
std::string str(E state) {
    return std::string(text_of(state));
}

// The state of that text; nothing when it names none (input to check).
template <class E>
constexpr std::optional<E> parse_state(std::string_view text) {
    const auto& names = StateNames<E>::names;
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (names[i] == text) return static_cast<E>(i);
    }
    return std::nullopt;
}

// The state a store column holds; a text that names none is a damaged store.
template <class E>
E state_from(std::string_view text);

// Throws failed("the store holds an unknown <what> '<text>'").
[[noreturn]] void unknown_stored_state(std::string_view what, std::string_view text);

template <class E>
E state_from(std::string_view text) {
    if (auto state = parse_state<E>(text)) return *state;
    unknown_stored_state(StateNames<E>::what, text);
}

}  // namespace team
