#include "http/router.hpp"

#include <algorithm>

#include "base/error.hpp"
#include "ops/operation.hpp"

namespace team::http {

namespace {

std::vector<std::string_view> segments(std::string_view path) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < path.size()) {
        if (path[i] == '/') {
            ++i;
            continue;
        }
        auto end = path.find('/', i);
        if (end == std::string_view::npos) end = path.size();
        out.push_back(path.substr(i, end - i));
        i = end;
    }
    return out;
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

const ops::Param* param_of(const ops::Operation& op, std::string_view name) {
    for (const auto& p : op.params) {
        if (p.name == name) return &p;
    }
    return nullptr;
}

// A query's text as the parameter's type; unknown names stay text, for invoke to refuse.
nlohmann::json typed(const ops::Param* p, const std::string& key, const std::string& text) {
    if (!p) return text;
    switch (p->type) {
        case ops::Type::boolean:
            if (text.empty() || text == "true" || text == "1") return true;
            if (text == "false" || text == "0") return false;
            throw usage_error(key + " must be true or false, not " + quote(text));
        case ops::Type::strings:
        case ops::Type::integers:
        case ops::Type::command:
            return nlohmann::json::array({text});
        default:
            return text;
    }
}

}  // namespace

const std::vector<Route>& routes() {
    // The routes the operations declare (ops/operation.hpp), in the table's order, and the one
    // the server answers itself: the event stream.
    static const std::vector<Route> kRoutes = [] {
        std::vector<Route> out;
        for (const auto* op : ops::operations()) {
            for (const auto& r : op->routes) {
                out.push_back({r.method, r.pattern, op->name, r.fixed});
            }
        }
        out.push_back({"GET", "/api/events", ""});
        return out;
    }();
    return kRoutes;
}

std::string percent_decode(std::string_view text, bool plus_is_space) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (c == '%') {
            int hi = i + 1 < text.size() ? hex_value(text[i + 1]) : -1;
            int lo = i + 2 < text.size() ? hex_value(text[i + 2]) : -1;
            if (hi < 0 || lo < 0) throw usage_error("malformed percent escape in " + quote(text));
            out.push_back(static_cast<char>(hi * 16 + lo));
            i += 2;
        } else if (c == '+' && plus_is_space) {
            out.push_back(' ');
        } else {
            out.push_back(c);
        }
    }
    return out;
}

std::vector<std::pair<std::string, std::string>> parse_query(std::string_view query) {
    std::vector<std::pair<std::string, std::string>> out;
    std::size_t i = 0;
    while (i < query.size()) {
        auto end = query.find('&', i);
        if (end == std::string_view::npos) end = query.size();
        auto pair = query.substr(i, end - i);
        if (!pair.empty()) {
            auto eq = pair.find('=');
            auto key = percent_decode(pair.substr(0, eq), true);
            std::string value;
            if (eq != std::string_view::npos) value = percent_decode(pair.substr(eq + 1), true);
            out.emplace_back(std::move(key), std::move(value));
        }
        i = end + 1;
    }
    return out;
}

Found find_route(std::string_view method, std::string_view path) {
    Found found;
    auto parts = segments(path);
    for (const auto& route : routes()) {
        auto pattern = segments(route.pattern);
        if (pattern.size() != parts.size()) continue;
        Match m;
        m.route = &route;
        bool fits = true;
        for (std::size_t i = 0; i < parts.size() && fits; ++i) {
            auto p = pattern[i];
            if (p.size() > 2 && p.front() == '{' && p.back() == '}') {
                auto value = percent_decode(parts[i], false);
                if (value.empty()) fits = false;
                m.captures[std::string(p.substr(1, p.size() - 2))] = std::move(value);
            } else {
                fits = p == parts[i];
            }
        }
        if (!fits) continue;
        if (route.method != method) {
            found.path_known = true;
            continue;
        }
        found.match = std::move(m);
        return found;
    }
    return found;
}

nlohmann::json request_values(const ops::Operation& op, const Match& match,
                              const std::vector<std::pair<std::string, std::string>>& query,
                              std::string_view body, std::optional<std::string>& team) {
    nlohmann::json values = nlohmann::json::object();
    bool takes_team = param_of(op, "team") != nullptr;
    for (const auto& [key, text] : query) {
        if (key == "team" && !takes_team) {
            team = text;
            continue;
        }
        const ops::Param* p = param_of(op, key);
        auto value = typed(p, key, text);
        if (values.contains(key) && values[key].is_array() && value.is_array()) {
            values[key].push_back(value[0]);  // ?env=A=1&env=B=2
        } else {
            values[key] = std::move(value);
        }
    }
    auto blank = std::all_of(body.begin(), body.end(), [](char c) {
        return c == ' ' || c == '\n' || c == '\r' || c == '\t';
    });
    if (!blank) {
        auto doc = nlohmann::json::parse(body, nullptr, false);
        if (doc.is_discarded()) throw usage_error("the request body is not valid JSON");
        if (!doc.is_object()) throw usage_error("the request body must be a JSON object");
        for (auto& [key, value] : doc.items()) {
            if (key == "team" && !takes_team) {
                if (!value.is_string()) throw usage_error("team must be a string");
                team = value.get<std::string>();
                continue;
            }
            values[key] = value;
        }
    }
    for (const auto& [name, value] : match.captures) {
        if (name == "team") {
            team = value;
            // An operation that takes its team as its own argument (status NAME, delete NAME).
            if (!op.team_param.empty()) values[std::string(op.team_param)] = value;
            continue;
        }
        values[name] = value;
    }
    if (!match.route->fixed.empty()) values[std::string(match.route->fixed)] = true;
    return values;
}

int status_of(int exit_code, bool error) {
    // Whether it is an error is the core's rule (ops::Result::is_error): a command's own exit
    // code (run) or a turn's stop reason is an answer, whatever its number.
    if (!error) return 200;
    for (const auto& kind : kErrorKinds) {
        if (kind.exit == exit_code) return kind.http;
    }
    return http_status(ErrorCode::failed);
}

}  // namespace team::http
