// ACP's transport as a client sees it: newline-delimited JSON-RPC 2.0 in both directions, where
// the agent sends requests (fs/*, terminal/*, session/request_permission), notifications
// (session/update) and replies to ours. This file only classifies a line; making and framing an
// outgoing message is jsonrpc/codec's, shared with the MCP server.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "jsonrpc/codec.hpp"

namespace team::acp {

// The longest line read from an agent (SPEC 15): a longer one ends that agent's connection.
inline constexpr std::size_t kMaxLine = 16 * 1024 * 1024;

// The protocol version this client offers (and the only one it accepts back).
inline constexpr int kProtocolVersion = 1;

// The error codes this client sends or reads: JSON-RPC's own, and ACP's.
using jsonrpc::internal_error;
using jsonrpc::invalid_params;
using jsonrpc::invalid_request;
using jsonrpc::method_not_found;
enum AcpCode : int {
    auth_required = -32000,  // authenticate first
    resource_not_found = -32002,
};

struct RpcError {
    int code = internal_error;
    std::string message;
    nlohmann::json data;
};

// A message from the agent: its request (an id and a method), a notification (a method, no id)
// or a reply to one of ours (an id and a result or an error).
struct Incoming {
    enum class Kind { request, notification, reply } kind = Kind::notification;
    std::string method;
    nlohmann::json params;          // an object, or null when absent
    nlohmann::json id;              // requests and replies
    nlohmann::json result;          // replies
    std::optional<RpcError> error;  // replies that failed
};

// Reads one line (without its newline). A line that is not a JSON-RPC message gives the reason
// it is not, for the message that ends the connection.
std::variant<Incoming, std::string> read_message(std::string_view line);

// The first `n` characters of `text`, for messages that quote what an agent sent.
std::string excerpt(std::string_view text, std::size_t n = 80);

}  // namespace team::acp
