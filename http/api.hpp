// The HTTP API's face of the operations table, without Beast: a request (method, target, body)
// planned into an operation call, the call run with an ops::Core of the running thread, and the
// result turned into a status and a JSON body. What is here is the face's own: the route, the
// values from query and body, the status of a result. The verbs are the table's.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "base/error.hpp"
#include "ops/core.hpp"

namespace team::ops {
struct Operation;
}

namespace team::http {

struct Answer {
    int status = 200;
    std::string body;
    std::string content_type = "application/json";
    std::function<void()> after_send = {};  // the operation's after_reply: run once it is sent
};

// An answer in SPEC 1.4's error shape (ops::error_document), with its own status: a route's
// 404 or 405, a body too large, a token missing.
Answer error_answer(int status, const Error& error);

// An operation to call for a request.
struct OperationCall {
    const ops::Operation* op = nullptr;
    nlohmann::json values;
    ops::Identity identity;
};

// The event stream (GET /api/events): resume after `since` (Last-Event-ID or ?since=), only
// the events of `team` when given.
struct EventsCall {
    std::optional<std::int64_t> since;
    std::optional<std::string> team;
};

// What a request to /api asks: an operation, the event stream, or an answer at once (404 for an
// unknown resource or operation, 405, 400 for a malformed query or body). `base` is the server's
// identity (the home; the caller is the leader); the route's team goes into a copy of it.
using Plan = std::variant<OperationCall, EventsCall, Answer>;
Plan plan(std::string_view method, std::string_view target, std::string_view body,
          std::string_view last_event_id, const ops::Identity& base);

// Runs the call with a Core of this thread (pool threads keep theirs between calls: opening the
// store each time would cost more than most reads) and renders its result.
Answer run(const OperationCall& call, bool reuse_core);

}  // namespace team::http
