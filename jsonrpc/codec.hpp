// JSON-RPC 2.0 as our two stdio protocols carry it, one message per line, UTF-8, no batches:
// MCP's server (mcp/, SPEC 12) and ACP's client (acp/, SPEC 15) both sit on this room, and it
// knows nothing of either (nor of the core): it reads a line into a request or notification, or
// into the error response the line deserves, and makes requests, replies, notifications and
// their lines. What a protocol adds (MCP's 2 MiB line, ACP's own error codes and its reading of
// the agent's replies) stays in that protocol's room.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace team::jsonrpc {

// JSON-RPC's own error codes.
enum Code : int {
    parse_error = -32700,       // not JSON
    invalid_request = -32600,   // JSON, but not a request (no jsonrpc "2.0", no method, a batch)
    method_not_found = -32601,  // a method the receiver does not serve
    invalid_params = -32602,    // params that do not fit the method (MCP: an unknown tool too)
    internal_error = -32603,
};

// A request (it has an id and wants a reply) or a notification (no id).
struct Message {
    std::string method;
    nlohmann::json params;             // an object, or null when absent
    std::optional<nlohmann::json> id;  // a string or an integer; none for a notification
    bool is_request() const { return id.has_value(); }
};

// A reply (a result or an error, no method): the MCP server sends no requests and ignores them.
struct Reply {};

// A line that is not a message: the error response to send for it (its id null, or the
// request's id when one could be read).
struct Refusal {
    nlohmann::json response;
};

// Reads one line (without its newline) as a server does. Empty lines are not given here.
std::variant<Message, Reply, Refusal> parse_line(std::string_view line);

// {"jsonrpc": "2.0", "id": id, "method": method, "params": params}
nlohmann::json request(std::int64_t id, const std::string& method, nlohmann::json params);
// {"jsonrpc": "2.0", "id": id, "result": result}
nlohmann::json result_response(const nlohmann::json& id, nlohmann::json result);
// {"jsonrpc": "2.0", "id": id, "error": {"code", "message"[, "data"]}}
nlohmann::json error_response(const nlohmann::json& id, int code, const std::string& message,
                              const nlohmann::json& data = nullptr);
// {"jsonrpc": "2.0", "method": method, "params": params}
nlohmann::json notification(const std::string& method, nlohmann::json params);

// One message as a line, its newline included: compact JSON, no newline inside (JSON escapes
// them), invalid UTF-8 replaced so a bad byte in a pane's output cannot break the framing.
std::string frame(const nlohmann::json& message);

}  // namespace team::jsonrpc
