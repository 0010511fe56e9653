#include "http/api.hpp"

#include "base/error.hpp"
#include "http/router.hpp"
#include "ops/core_cache.hpp"
#include "ops/operation.hpp"

namespace team::http {

namespace {

std::string dump(const nlohmann::json& doc) {
    // Invalid UTF-8 (from a pane or a process) is replaced, as the command line does.
    return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::optional<std::int64_t> event_id(std::string_view text) {
    if (text.empty() || text.size() > 18) return std::nullopt;
    if (text.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
    return std::stoll(std::string(text));
}

}  // namespace

Answer error_answer(int status, const Error& error) {
    return {status, dump(ops::error_document(error))};
}

Plan plan(std::string_view method, std::string_view target, std::string_view body,
          std::string_view last_event_id, const ops::Identity& base) {
    auto question = target.find('?');
    auto path = target.substr(0, question);
    auto query_text =
        question == std::string_view::npos ? std::string_view{} : target.substr(question + 1);
    try {
        auto query = parse_query(query_text);
        Found found = find_route(method, path);
        if (!found.match) {
            if (found.path_known) {
                return error_answer(405, usage_error(std::string(method) + " is not allowed on " +
                                                     std::string(path)));
            }
            return error_answer(404, not_found("no such resource: " + std::string(path)));
        }
        const Route& route = *found.match->route;
        if (route.op.empty()) {  // the event stream
            EventsCall events;
            for (const auto& [key, value] : query) {
                if (key == "team" && !value.empty()) {
                    events.team = value;
                } else if (key == "since") {
                    events.since = event_id(value);
                    if (!events.since) throw usage_error("since must be an event id");
                } else {
                    throw usage_error("unknown parameter " + quote(key) + " of /api/events");
                }
            }
            // EventSource sends the id it saw last when it reconnects.
            if (auto id = event_id(last_event_id)) events.since = id;
            return events;
        }
        const ops::Operation* op = ops::find_operation(route.op);
        if (!op) return error_answer(404, not_found("unknown operation " + quote(route.op)));
        OperationCall call;
        call.op = op;
        call.identity = base;
        std::optional<std::string> team;
        call.values = request_values(*op, *found.match, query, body, team);
        // A following stream has no end over a request: the live view is /api/events.
        if (call.values.contains("follow")) {
            throw usage_error("follow is not available over HTTP; use GET /api/events");
        }
        if (team) call.identity.team = team;
        return call;
    } catch (const Error& e) {
        return error_answer(400, e);
    }
}

Answer run(const OperationCall& call, bool reuse_core) {
    ops::Result r;
    try {
        if (reuse_core) {
            // One Core per team named (its identity is fixed), kept by this thread.
            thread_local ops::CoreCache cores;
            r = ops::invoke(cores.get(call.identity), *call.op, call.values, ops::Naming::json);
            cores.after(call.identity, r);
        } else {
            ops::Core own(call.identity);
            r = ops::invoke(own, *call.op, call.values, ops::Naming::json);
        }
    } catch (const Error& e) {
        r = ops::error_result(*call.op, call.values, e);
    } catch (const std::exception& e) {
        r = ops::error_result(*call.op, call.values, failed(e.what()));
    }
    Answer a{status_of(r.exit_code, r.is_error()), dump(r.doc)};
    a.after_send = std::move(r.after_reply);
    return a;
}

}  // namespace team::http
