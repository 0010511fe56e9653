#include "mcp/schema.hpp"

#include <algorithm>

#include "base/duration.hpp"
#include "base/error.hpp"
#include "base/names.hpp"

namespace team::mcp {

namespace {

std::string type_name(const nlohmann::json& schema) {
    auto type = schema.value("type", nlohmann::json("value"));
    if (type == "integer") return "a whole number";
    if (type == "boolean") return "true or false";
    if (type == "array") return "an array";
    if (type == "object") return "an object";
    return "a " + type.get<std::string>();
}

// Whether `v` fits the type of `schema` (the schemas here have one type each).
bool fits(const nlohmann::json& schema, const nlohmann::json& v) {
    auto type = schema.value("type", nlohmann::json());
    if (type == "string") return v.is_string();
    if (type == "boolean") return v.is_boolean();
    if (type == "integer") {
        if (!v.is_number_integer()) return false;
        if (schema.contains("minimum") && v.get<long long>() < schema["minimum"].get<long long>()) {
            return false;
        }
        return true;
    }
    if (type == "object") {
        if (!v.is_object()) return false;
        if (auto ap = schema.find("additionalProperties"); ap != schema.end() && ap->is_object()) {
            return std::all_of(v.begin(), v.end(), [&](const auto& e) { return fits(*ap, e); });
        }
        return true;
    }
    if (type == "array") {
        if (!v.is_array()) return false;
        if (auto items = schema.find("items"); items != schema.end()) {
            return std::all_of(v.begin(), v.end(), [&](const auto& e) { return fits(*items, e); });
        }
        return true;
    }
    return true;
}

std::string expected(const nlohmann::json& schema) {
    std::string what = type_name(schema);
    if (schema.value("type", "") == "integer" && schema.contains("minimum")) {
        what += " of at least " + std::to_string(schema["minimum"].get<long long>());
    }
    if (schema.value("type", "") == "array" && schema.contains("items")) {
        what += " of " + type_name(schema["items"]) + "s";
    }
    if (schema.value("type", "") == "object" && schema.contains("additionalProperties")) {
        what += " of " + type_name(schema["additionalProperties"]) + "s";
    }
    return what;
}

}  // namespace

nlohmann::json param_schema(const ops::Param& p) {
    nlohmann::json s;
    switch (p.type) {
        case ops::Type::string:
        case ops::Type::text:
        case ops::Type::duration:
            s = {{"type", "string"}};
            break;
        case ops::Type::boolean:
            s = {{"type", "boolean"}};
            break;
        case ops::Type::integer:
            s = {{"type", "integer"}, {"minimum", p.min}};
            break;
        case ops::Type::strings:
        case ops::Type::command:
            s = {{"type", "array"}, {"items", {{"type", "string"}}}};
            break;
        case ops::Type::integers:
            s = {{"type", "array"}, {"items", {{"type", "integer"}, {"minimum", p.min}}}};
            break;
    }
    std::string help = param_help(p);
    if (p.type == ops::Type::command) help = "the program and its arguments, executed as given";
    if (!help.empty()) s["description"] = help;
    return s;
}

namespace {

// The help as the command line shows it, without the command line's own words ('-': stdin),
// which mean nothing to a tool.
std::string tool_help(std::string help) {
    if (auto at = help.find(" ('-': stdin)"); at != std::string::npos) help.erase(at, 13);
    return help;
}

}  // namespace

std::string param_help(const ops::Param& p) {
    std::string help = tool_help(ops::help_of(p));
    if (p.type == ops::Type::duration) {
        help += "; a duration: 250ms, 5s, 2m, 1h (a bare number is seconds)";
    }
    return help;
}

std::string millis_help(const ops::Param& p) {
    std::string help = tool_help(std::string(p.help));
    if (!p.default_text.empty()) {
        auto ms = parse_duration(std::string(p.default_text), std::string(p.name));
        help += " (default " + std::to_string(ms.count()) + ")";
    }
    return help + "; in milliseconds";
}

void check_arguments(const nlohmann::json& schema, const nlohmann::json& arguments) {
    const auto& properties = schema["properties"];
    for (const auto& [key, value] : arguments.items()) {
        auto p = properties.find(key);
        if (p == properties.end()) {
            std::vector<std::string> known;
            for (const auto& [k, _] : properties.items()) known.push_back(k);
            throw ArgumentError{key, "unknown argument " + quote(key) + did_you_mean(key, known)};
        }
        if (value.is_null()) continue;
        if (!fits(*p, value)) throw ArgumentError{key, key + " must be " + expected(*p)};
        if (auto e = p->find("enum"); e != p->end()) {
            if (std::find(e->begin(), e->end(), value) == e->end()) {
                throw ArgumentError{key, key + " must be one of " + e->dump()};
            }
        }
    }
    if (auto required = schema.find("required"); required != schema.end()) {
        for (const auto& r : *required) {
            std::string name = r.get<std::string>();
            auto it = arguments.find(name);
            if (it == arguments.end() || it->is_null()) {
                throw ArgumentError{name, name + " is required"};
            }
        }
    }
}

}  // namespace team::mcp
