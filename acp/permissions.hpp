// Permission requests (session/request_permission) and the policy that answers them (SPEC 15):
// `ask` hands every request to the host (the leader's inbox), `allow-reads` answers read, search,
// think and fetch tool calls itself and asks for the rest, `allow-all` allows, `deny` rejects.
// A rejection picks one of the agent's reject_* options, never `cancelled`: only a cancel of the
// turn answers `cancelled` (a Deny sent as `cancelled` ends the whole turn in most agents).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "acp/updates.hpp"

namespace team::acp {

enum class Policy { ask, allow_reads, allow_all, deny };

// "ask", "allow-reads", "allow-all", "deny"; a usage error naming the value otherwise.
Policy parse_policy(std::string_view text);
std::string policy_name(Policy policy);

struct PermissionOption {
    std::string id;  // optionId
    std::string name;
    std::string kind;  // allow_once, allow_always, reject_once, reject_always
};

// One open request as the host sees it.
struct PermissionRequest {
    std::int64_t number = 0;  // this client's number for it (answer_permission takes it)
    std::string session_id;
    ToolCallPatch tool_call;  // the tool call it is about
    std::vector<PermissionOption> options;
    nlohmann::json raw;  // the request's params as they came
};

// Reads a request's params; nothing when it has no options to choose from.
std::optional<PermissionRequest> read_permission_request(const nlohmann::json& params);

// What the host (or the policy) decides.
struct PermissionChoice {
    enum class Kind { allow, allow_always, deny, deny_always, option, cancelled } kind;
    std::string option_id;  // Kind::option
};

// The optionId that answers `choice`, or nothing for `cancelled` (and for an allow/deny the
// agent offered no option of: the caller refuses it). allow prefers allow_once, deny prefers
// reject_once; the _always kinds prefer their own and fall back to the _once one. An `option`
// must be one of the request's.
std::optional<std::string> option_for(const PermissionRequest& request,
                                      const PermissionChoice& choice);

// The policy's own answer, or nothing when the host must be asked.
std::optional<PermissionChoice> policy_answer(Policy policy, const PermissionRequest& request);

// The outcome object of session/request_permission's reply.
nlohmann::json selected_outcome(const std::string& option_id);
nlohmann::json cancelled_outcome();

}  // namespace team::acp
