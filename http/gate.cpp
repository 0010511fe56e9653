#include "http/gate.hpp"

#include <optional>

#include "base/error.hpp"
#include "http/auth.hpp"
#include "http/router.hpp"

namespace team::http {

namespace {

Answer unauthorized(bool api) {
    if (api) return error_answer(401, refused("a token is needed (Authorization: Bearer)"));
    return {401, "team serve: open the address `team serve --url` prints (it carries the token)\n",
            "text/plain; charset=utf-8"};
}

Verdict refuse(bool api, Answer answer) {
    Verdict v;
    v.api = api;
    v.answer = std::move(answer);
    return v;
}

// The token of `/?token=...`, none when absent or the query is malformed.
std::optional<std::string> query_token(std::string_view target) {
    auto q = target.find('?');
    if (q == std::string_view::npos) return std::nullopt;
    std::optional<std::string> given;
    try {
        for (auto& [k, v] : parse_query(target.substr(q + 1))) {
            if (k == "token") given = v;
        }
    } catch (const Error&) {
        return std::nullopt;
    }
    return given;
}

}  // namespace

Verdict check_request(const RequestHead& r, const GateConfig& config) {
    auto path = r.target.substr(0, r.target.find('?'));
    bool api = path == "/api" || path.starts_with("/api/");

    if (!config.any_host && !host_allowed(r.host, config.listen_host)) {
        return refuse(api, error_answer(403, refused("this server does not answer for that host")));
    }
    // The page opened with the token: the cookie, then the address without the token.
    if (r.method == "GET" && path == "/" && r.target.find("token=") != std::string_view::npos) {
        auto given = query_token(r.target);
        if (!given || !same_token(*given, config.token)) return refuse(false, unauthorized(false));
        Verdict v = refuse(false, {303, "", "text/plain"});
        v.headers = {{"Set-Cookie", std::string(kCookieName) + "=" + std::string(config.token) +
                                        "; Path=/; HttpOnly; SameSite=Strict"},
                     {"Location", "/"}};
        return v;
    }
    std::optional<std::string> token;
    if (!r.authorization.empty()) {
        token = bearer_token(r.authorization);
    } else if (!r.cookie.empty()) {
        token = cookie_value(r.cookie, kCookieName);
    }
    if (!token || !same_token(*token, config.token)) return refuse(api, unauthorized(api));
    bool changes = r.method != "GET" && r.method != "HEAD" && r.method != "OPTIONS";
    if (changes && r.csrf != "1") {
        return refuse(
            api,
            error_answer(403, refused("a request that changes something needs X-Team-CSRF: 1")));
    }
    Verdict v;
    v.pass = true;
    v.api = api;
    return v;
}

}  // namespace team::http
