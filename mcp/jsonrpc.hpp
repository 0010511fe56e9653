// JSON-RPC 2.0 as MCP's stdio transport carries it: one message per line, UTF-8, no batches
// (removed in protocol revision 2025-06-18). This file knows nothing of tools or of the core: it
// reads a line into a message, or into the error response the line deserves, and makes replies.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace team::mcp {

// JSON-RPC's error codes (and the one MCP adds for arguments that do not fit a tool).
enum RpcCode : int {
    parse_error = -32700,       // not JSON
    invalid_request = -32600,   // JSON, but not a request (no jsonrpc "2.0", no method, a batch)
    method_not_found = -32601,  // a method this server does not serve
    invalid_params = -32602,    // an unknown tool, or arguments that do not fit its schema
    internal_error = -32603,
};

// The longest line this server reads (SPEC 12): a longer one is refused and skipped.
inline constexpr std::size_t kMaxLine = 2 * 1024 * 1024;

// A request (it has an id and wants a reply) or a notification (no id).
struct Message {
    std::string method;
    nlohmann::json params;             // an object, or null when absent
    std::optional<nlohmann::json> id;  // a string or an integer; none for a notification
    bool is_request() const { return id.has_value(); }
};

// A reply that the client sent us (we send no requests, so these are ignored).
struct Reply {};

// A line that is not a message: the error response to send for it (its id null, or the
// request's id when one could be read).
struct Refusal {
    nlohmann::json response;
};

// Reads one line (without its newline). Empty lines are not given here.
std::variant<Message, Reply, Refusal> parse_line(std::string_view line);

// {"jsonrpc": "2.0", "id": id, "result": result}
nlohmann::json result_response(const nlohmann::json& id, nlohmann::json result);
// {"jsonrpc": "2.0", "id": id, "error": {"code", "message"[, "data"]}}
nlohmann::json error_response(const nlohmann::json& id, int code, const std::string& message,
                              const nlohmann::json& data = nullptr);
// {"jsonrpc": "2.0", "method": method, "params": params}
nlohmann::json notification(const std::string& method, nlohmann::json params);

// One message as a line: compact JSON, no newline inside (JSON escapes them), ASCII-safe
// replacement of invalid UTF-8 so a bad byte in a pane's output cannot break the framing.
std::string frame(const nlohmann::json& message);

}  // namespace team::mcp
