#include "jsonrpc/codec.hpp"

namespace team::jsonrpc {

namespace {

bool valid_id(const nlohmann::json& id) {
    return id.is_string() || id.is_number_integer();
}

}  // namespace

std::variant<Message, Reply, Refusal> parse_line(std::string_view line) {
    nlohmann::json doc = nlohmann::json::parse(line, nullptr, false);
    if (doc.is_discarded()) {
        return Refusal{error_response(nullptr, parse_error, "parse error: the line is not JSON")};
    }
    if (doc.is_array()) {
        return Refusal{error_response(nullptr, invalid_request,
                                      "invalid request: batches are not supported (protocol "
                                      "revision 2025-06-18 and later)")};
    }
    if (!doc.is_object()) {
        return Refusal{error_response(nullptr, invalid_request,
                                      "invalid request: a message must be a JSON object")};
    }
    nlohmann::json id = nullptr;
    auto id_it = doc.find("id");
    bool has_id = id_it != doc.end();
    if (has_id && valid_id(*id_it)) id = *id_it;
    auto invalid = [&](const std::string& why) {
        return Refusal{error_response(id, invalid_request, "invalid request: " + why)};
    };
    auto version = doc.find("jsonrpc");
    if (version == doc.end() || *version != "2.0") return invalid("\"jsonrpc\" must be \"2.0\"");
    auto method = doc.find("method");
    if (method == doc.end()) {
        if (doc.contains("result") || doc.contains("error")) return Reply{};
        return invalid("no \"method\"");
    }
    if (!method->is_string()) return invalid("\"method\" must be a string");
    if (has_id && !valid_id(*id_it)) return invalid("\"id\" must be a string or an integer");
    Message m;
    m.method = method->get<std::string>();
    if (auto params = doc.find("params"); params != doc.end() && !params->is_null()) {
        if (!params->is_object()) return invalid("\"params\" must be an object");
        m.params = *params;
    }
    if (has_id) m.id = *id_it;
    return m;
}

nlohmann::json request(std::int64_t id, const std::string& method, nlohmann::json params) {
    return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

nlohmann::json result_response(const nlohmann::json& id, nlohmann::json result) {
    return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

nlohmann::json error_response(const nlohmann::json& id, int code, const std::string& message,
                              const nlohmann::json& data) {
    nlohmann::json error = {{"code", code}, {"message", message}};
    if (!data.is_null()) error["data"] = data;
    return {{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(error)}};
}

nlohmann::json notification(const std::string& method, nlohmann::json params) {
    return {{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}};
}

std::string frame(const nlohmann::json& message) {
    return message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace team::jsonrpc
