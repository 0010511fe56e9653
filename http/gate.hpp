// The checks every request to `team serve` passes before it means anything (SPEC 13), as one
// pure function over the request's head, beside the token's parts (http/auth.hpp): the Host
// (DNS rebinding: 403), then the token by `Authorization: Bearer` or the cookie (401), then
// `X-Team-CSRF: 1` for a request that changes something (403). The page opened with
// `/?token=...` gets the cookie and a redirect to the address without the token. No Beast
// here: every branch is unit-tested in milliseconds (tests/unit/test_http_gate.cpp).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "http/api.hpp"

namespace team::http {

// What the gate reads of a request: its method and target, and four headers ("" when absent).
struct RequestHead {
    std::string_view method = "";
    std::string_view target = "";  // path and query
    std::string_view host = "";
    std::string_view authorization = "";
    std::string_view cookie = "";
    std::string_view csrf = "";  // X-Team-CSRF
};

// What the gate knows of the server.
struct GateConfig {
    std::string_view token = "";        // what a request must show
    std::string_view listen_host = "";  // the address it listens on, a Host it answers for
    bool any_host = false;              // listening on every address: any Host
};

struct Verdict {
    bool pass = false;  // the request goes on (to the API, or to the dashboard's files)
    bool api = false;   // its path is /api or under it (an answer there is JSON)
    Answer answer;      // when it does not pass: what it gets
    std::vector<std::pair<std::string, std::string>> headers;  // with the answer
};

Verdict check_request(const RequestHead& request, const GateConfig& config);

}  // namespace team::http
