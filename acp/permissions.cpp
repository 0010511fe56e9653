#include "acp/permissions.hpp"

#include "base/error.hpp"

namespace team::acp {

using nlohmann::json;

Policy parse_policy(std::string_view text) {
    if (text == "ask") return Policy::ask;
    if (text == "allow-reads") return Policy::allow_reads;
    if (text == "allow-all") return Policy::allow_all;
    if (text == "deny") return Policy::deny;
    throw usage_error("unknown permission policy " + quote(text) +
                      " (ask, allow-reads, allow-all or deny)");
}

std::string policy_name(Policy policy) {
    switch (policy) {
        case Policy::ask:
            return "ask";
        case Policy::allow_reads:
            return "allow-reads";
        case Policy::allow_all:
            return "allow-all";
        case Policy::deny:
            return "deny";
    }
    return "ask";
}

std::optional<PermissionRequest> read_permission_request(const json& params) {
    if (!params.is_object()) return std::nullopt;
    PermissionRequest r;
    r.raw = params;
    r.session_id = params.value("sessionId", std::string());
    // The tool call is read as a tool_call_update would be.
    Update u = read_update(json{{"update", [&] {
                                     json t = params.value("toolCall", json::object());
                                     if (!t.is_object()) t = json::object();
                                     t["sessionUpdate"] = "tool_call_update";
                                     return t;
                                 }()}});
    r.tool_call = u.tool;
    auto options = params.find("options");
    if (options == params.end() || !options->is_array()) return std::nullopt;
    for (const json& o : *options) {
        if (!o.is_object() || !o.contains("optionId") || !o["optionId"].is_string()) continue;
        r.options.push_back({o["optionId"].get<std::string>(), o.value("name", std::string()),
                             o.value("kind", std::string())});
    }
    if (r.options.empty()) return std::nullopt;
    return r;
}

namespace {

std::optional<std::string> first_of_kind(const PermissionRequest& r, std::string_view kind) {
    for (const auto& o : r.options)
        if (o.kind == kind) return o.id;
    return std::nullopt;
}

std::optional<std::string> preferring(const PermissionRequest& r, std::string_view first,
                                      std::string_view second) {
    if (auto id = first_of_kind(r, first)) return id;
    return first_of_kind(r, second);
}

}  // namespace

std::optional<std::string> option_for(const PermissionRequest& r, const PermissionChoice& c) {
    using K = PermissionChoice::Kind;
    switch (c.kind) {
        case K::allow:
            return preferring(r, "allow_once", "allow_always");
        case K::allow_always:
            return preferring(r, "allow_always", "allow_once");
        case K::deny:
            return preferring(r, "reject_once", "reject_always");
        case K::deny_always:
            return preferring(r, "reject_always", "reject_once");
        case K::option:
            for (const auto& o : r.options)
                if (o.id == c.option_id) return o.id;
            return std::nullopt;
        case K::cancelled:
            return std::nullopt;
    }
    return std::nullopt;
}

std::optional<PermissionChoice> policy_answer(Policy policy, const PermissionRequest& r) {
    using K = PermissionChoice::Kind;
    switch (policy) {
        case Policy::ask:
            return std::nullopt;
        case Policy::allow_all:
            return PermissionChoice{K::allow, ""};
        case Policy::deny:
            return PermissionChoice{K::deny, ""};
        case Policy::allow_reads: {
            std::string kind = r.tool_call.kind.value_or("other");
            if (kind == "read" || kind == "search" || kind == "think" || kind == "fetch")
                return PermissionChoice{K::allow, ""};
            return std::nullopt;
        }
    }
    return std::nullopt;
}

json selected_outcome(const std::string& option_id) {
    return {{"outcome", {{"outcome", "selected"}, {"optionId", option_id}}}};
}

json cancelled_outcome() {
    return {{"outcome", {{"outcome", "cancelled"}}}};
}

}  // namespace team::acp
