#include "acp/wire.hpp"

namespace team::acp {

using nlohmann::json;

std::variant<Incoming, std::string> read_message(std::string_view line) {
    json message = json::parse(line.begin(), line.end(), nullptr, false);
    if (message.is_discarded()) return "a line that is not JSON: " + excerpt(line);
    if (!message.is_object()) return "a JSON value that is not a message: " + excerpt(line);
    Incoming in;
    auto id = message.find("id");
    bool has_id = id != message.end() && (id->is_string() || id->is_number_integer());
    auto method = message.find("method");
    if (method != message.end()) {
        if (!method->is_string()) return "a message whose method is not a string: " + excerpt(line);
        in.method = method->get<std::string>();
        auto params = message.find("params");
        in.params = params != message.end() ? *params : json(nullptr);
        if (has_id) {
            in.kind = Incoming::Kind::request;
            in.id = *id;
        } else {
            in.kind = Incoming::Kind::notification;
        }
        return in;
    }
    if (!has_id) return "a message with neither a method nor an id: " + excerpt(line);
    in.kind = Incoming::Kind::reply;
    in.id = *id;
    if (auto error = message.find("error"); error != message.end() && error->is_object()) {
        RpcError e;
        e.code = error->value("code", static_cast<int>(internal_error));
        e.message = error->value("message", std::string());
        e.data = error->value("data", json(nullptr));
        in.error = e;
    } else {
        in.result = message.value("result", json(nullptr));
    }
    return in;
}

std::string excerpt(std::string_view text, std::size_t n) {
    if (text.size() <= n) return std::string(text);
    return std::string(text.substr(0, n)) + "…";
}

}  // namespace team::acp
