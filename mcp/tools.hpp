// The tools of `team mcp` (SPEC 12): one per operation of the table that declares one (its
// `tool`, ops/operation.hpp), their schemas generated from the operations' parameters, and the few
// renamed or converted fields of the tools whose input SPEC 12 gives in another shape (kill_agent's
// camelCase milliseconds, kill_shell's shell_id and force, inbox_read's waitMs, agent_spawn's env
// object). The output of every tool is its operation's document: no rule of a verb lives here.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ops/operation.hpp"

namespace team::mcp {

// One request of a tool, made into one of the core.
struct Call {
    const ops::Operation* op = nullptr;
    nlohmann::json values;            // the operation's values, named as the table names them
    std::optional<std::string> team;  // the team the caller named, if any
};

struct Tool {
    std::string name;
    const ops::Operation* op = nullptr;  // the operation (shutdown_respond: approve's)
    nlohmann::json input_schema;
    nlohmann::json output_schema;
    std::string_view list_key;  // an operation that answers a list: the key it is put under

    // The tool's description and schemas, as tools/list gives them.
    nlohmann::json listing() const;
    // Maps the tool's arguments to the operation's values and checks them against its
    // parameters. Throws ArgumentError.
    Call call(const nlohmann::json& arguments) const;
    // The structured content of a result: the operation's document, a list under list_key.
    nlohmann::json structured(const nlohmann::json& doc) const;
};

// The tools of the table, in its order: one per operation that declares a tool.
const std::vector<Tool>& tools();
const Tool* find_tool(std::string_view name);
// The tools this face gives a shape of their own (renamed fields, a list key, a bound) that no
// operation declares: a shape left behind by a renamed or removed tool.
std::vector<std::string> missing_tools();

// The longest wait a tool may ask for (SPEC 12): 10 minutes.
inline constexpr long long kMaxWaitMs = 10 * 60 * 1000;

}  // namespace team::mcp
