// The HTTP API's routes (SPEC 13): a small table of method + path segments, each naming the
// operation it calls and how the path's variable segments become the operation's values, made
// from the routes the operations declare (ops/operation.hpp, HttpRoute). Nothing of a verb is
// here: a route only says which operation, and the values are the query string and the JSON
// body merged, as the operation's parameters name them.
// No Beast here, so the routing is unit-tested in milliseconds (tests/unit/test_http_router.cpp).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace team::ops {
struct Operation;
}

namespace team::http {

// A route: "/api/teams/{team}/agents/{name}/kill". A segment in braces captures the value
// there: {team} is the team the request acts on, any other capture is the operation's value of
// that name ({name}, {id}, {agent}).
struct Route {
    std::string_view method;
    std::string_view pattern;
    std::string_view op;  // the operation's name; "" for the routes the server answers itself
    // Values the route fixes whatever the request says (GET .../agents/{name} lists all).
    std::string_view fixed = "";
};

// Every route of the API, in the operations table's order, then GET /api/events.
const std::vector<Route>& routes();

struct Match {
    const Route* route = nullptr;
    std::map<std::string, std::string> captures;  // decoded
};

// What matching a path found: the route, or that the path is known but not for this method
// (405), or nothing (404).
struct Found {
    std::optional<Match> match;
    bool path_known = false;  // some route has this path under another method
};

// Matches `method` and the path part of a target (no query string). Throws a usage Error for a
// malformed percent escape.
Found find_route(std::string_view method, std::string_view path);

// Decodes %XX escapes (and '+' as a space in a query). Throws a usage Error when malformed.
std::string percent_decode(std::string_view text, bool plus_is_space);

// The query string's pairs, decoded, in order. Throws a usage Error when malformed.
std::vector<std::pair<std::string, std::string>> parse_query(std::string_view query);

// The values of one request for `op`: the query's pairs (text turned into the parameter's type:
// "true"/"1"/"" for a boolean, a repeated key or a single value for a list), then the JSON body's
// members over them, then the captures of the path. `team` receives a value named team that the
// operation does not take (the team the request acts on). Throws a usage Error for a body that
// is not a JSON object or a boolean that is neither true nor false.
nlohmann::json request_values(const ops::Operation& op, const Match& match,
                              const std::vector<std::pair<std::string, std::string>>& query,
                              std::string_view body, std::optional<std::string>& team);

// The HTTP status of an operation's result: 200 for an answer (`error` false: ops::Result::
// is_error, whatever the exit code), else its error kind's (base/error.hpp: 400 usage, 404
// not_found, 409 refused, 500 failed, 502 unconfirmed, 504 timeout), 500 for another code.
int status_of(int exit_code, bool error);

}  // namespace team::http
