// JSON schemas of the MCP tools (mcp/tools.hpp): a parameter of the operations table as a
// property of a tool's inputSchema, and the check of a call's arguments against such a schema,
// naming the field that does not fit. Only what these schemas use: one type per property,
// minimum, items, additionalProperties, enum, required.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "ops/operation.hpp"

namespace team::mcp {

// Arguments that do not fit a tool's schema: JSON-RPC -32602, naming the field.
struct ArgumentError {
    std::string field;
    std::string message;
};

// The JSON schema of one parameter: its type, minimum and items, and its help as description.
nlohmann::json param_schema(const ops::Param& param);

// A parameter's help as a tool shows it: its default, what a duration looks like, nothing of the
// command line's ('-': stdin).
std::string param_help(const ops::Param& param);

// A duration parameter's help as a tool that takes whole milliseconds shows it (SPEC 12): its
// default, once, in milliseconds.
std::string millis_help(const ops::Param& param);

// Checks `arguments` (an object) against `schema`: unknown fields, types, minimums, enums and
// required fields. Throws ArgumentError.
void check_arguments(const nlohmann::json& schema, const nlohmann::json& arguments);

}  // namespace team::mcp
