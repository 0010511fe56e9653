// The agent's side of an ACP session as the client serves it (acp/client.hpp): its
// session/update notifications applied to the transcript, its permission requests answered by
// the policy or handed to the host, its fs/* requests served inside the roots and its
// terminal/* requests on threads of their own (they wait), anything else -32601.
#include <atomic>
#include <memory>

#include "acp/client.hpp"
#include "base/error.hpp"
#include "proc/signals.hpp"

namespace team::acp {

using nlohmann::json;

namespace {

json exit_status_json(const ExitStatus& s) {
    return {{"exitCode", s.exit_code ? json(*s.exit_code) : json(nullptr)},
            {"signal", s.signal ? json(proc::signal_name(*s.signal)) : json(nullptr)}};
}

// team::Error as the JSON-RPC error the agent gets.
int rpc_code(const Error& e) {
    switch (e.code()) {
        case ErrorCode::usage:
        case ErrorCode::refused:
            return invalid_params;
        case ErrorCode::not_found:
            return resource_not_found;
        default:
            return internal_error;
    }
}

std::optional<std::uint32_t> uint_param(const json& params, const char* name) {
    auto it = params.find(name);
    if (it == params.end() || !it->is_number_unsigned()) return std::nullopt;
    return it->get<std::uint32_t>();
}

std::string string_param(const json& params, const char* name) {
    auto it = params.find(name);
    if (it == params.end() || !it->is_string())
        throw usage_error(std::string("missing string '") + name + "'");
    return it->get<std::string>();
}

}  // namespace

void Client::on_message(Incoming&& in) {
    if (in.kind == Incoming::Kind::notification) {
        if (in.method != "session/update") return;  // unknown notifications are ignored
        Update u = read_update(in.params);
        {
            std::lock_guard lock(mutex_);
            // A loaded session's replay: its conversation is kept already (acp/client.hpp).
            if (loading_) {
                ++replayed_;
                return;
            }
            transcript_.apply(u);
        }
        host_.updated(u);
        return;
    }
    if (in.method == "session/request_permission") return request_permission(in);
    if (in.method.rfind("terminal/", 0) == 0) {
        // Served on a thread of their own: wait_for_exit and kill take time.
        std::lock_guard lock(mutex_);
        // Those that have finished are joined first: a long session makes many.
        for (auto it = workers_.begin(); it != workers_.end();) {
            if (it->done->load()) {
                it->thread.join();
                it = workers_.erase(it);
            } else {
                ++it;
            }
        }
        auto done = std::make_shared<std::atomic<bool>>(false);
        workers_.push_back({std::thread([this, done, in = std::move(in)]() mutable {
                                serve_terminal(std::move(in));
                                done->store(true);
                            }),
                            done});
        return;
    }
    serve(std::move(in));
}

void Client::request_permission(const Incoming& in) {
    auto request = read_permission_request(in.params);
    if (!request) {
        connection_.reply_error(in.id, invalid_params, "a permission request needs options");
        return;
    }
    bool cancelling;
    {
        std::lock_guard lock(mutex_);
        request->number = next_permission_++;
        cancelling = cancelled_at_.has_value();
    }
    if (cancelling) {  // the turn is being cancelled: every request is answered so
        connection_.reply(in.id, cancelled_outcome());
        return;
    }
    if (auto choice = policy_answer(options_.policy, *request)) {
        if (auto option = option_for(*request, *choice)) {
            connection_.reply(in.id, selected_outcome(*option));
            host_.activity("permission for " +
                           quote(request->tool_call.title.value_or(request->tool_call.id)) +
                           " answered " + quote(*option) + " by the policy " +
                           policy_name(options_.policy));
            return;
        }
    }
    {
        std::lock_guard lock(mutex_);
        permissions_[request->number] = OpenPermission{in.id, *request};
    }
    host_.permission_requested(*request);
}

void Client::serve(Incoming in) {
    try {
        if (in.method == "fs/read_text_file") {
            std::string content =
                read_text_file(roots_, string_param(in.params, "path"),
                               uint_param(in.params, "line"), uint_param(in.params, "limit"));
            connection_.reply(in.id, {{"content", content}});
        } else if (in.method == "fs/write_text_file") {
            std::string path = string_param(in.params, "path");
            write_text_file(roots_, path, string_param(in.params, "content"));
            connection_.reply(in.id, json::object());
            host_.activity("the agent wrote " + quote(path));
        } else {
            connection_.reply_error(in.id, method_not_found,
                                    "method " + quote(in.method) + " not found");
        }
    } catch (const Error& e) {
        connection_.reply_error(in.id, rpc_code(e), e.what());
    } catch (const std::exception& e) {
        connection_.reply_error(in.id, internal_error, e.what());
    }
}

void Client::serve_terminal(Incoming in) {
    Terminals& terminals = host_.terminals();
    try {
        const json& p = in.params;
        if (in.method == "terminal/create") {
            TerminalSpec spec;
            spec.command = string_param(p, "command");
            for (const json& a : p.value("args", json::array()))
                if (a.is_string()) spec.args.push_back(a.get<std::string>());
            for (const json& e : p.value("env", json::array()))
                if (e.is_object()) spec.env.emplace_back(e.value("name", ""), e.value("value", ""));
            auto cwd = p.find("cwd");
            spec.cwd = cwd != p.end() && cwd->is_string()
                           ? roots_.resolve(cwd->get<std::string>(), false)
                           : options_.cwd;
            auto limit = p.find("outputByteLimit");
            if (limit != p.end() && limit->is_number_unsigned())
                spec.output_byte_limit = limit->get<std::uint64_t>();
            connection_.reply(in.id, {{"terminalId", terminals.create(spec)}});
            return;
        }
        std::string id = string_param(p, "terminalId");
        if (in.method == "terminal/output") {
            TerminalOutput out = terminals.output(id);
            json r = {{"output", out.output}, {"truncated", out.truncated}};
            if (out.exit) r["exitStatus"] = exit_status_json(*out.exit);
            connection_.reply(in.id, r);
        } else if (in.method == "terminal/wait_for_exit") {
            connection_.reply(in.id, exit_status_json(terminals.wait_for_exit(id)));
        } else if (in.method == "terminal/kill") {
            terminals.kill(id);
            connection_.reply(in.id, json::object());
        } else if (in.method == "terminal/release") {
            terminals.release(id);
            connection_.reply(in.id, json::object());
        } else {
            connection_.reply_error(in.id, method_not_found,
                                    "method " + quote(in.method) + " not found");
        }
    } catch (const Error& e) {
        connection_.reply_error(in.id, rpc_code(e), e.what());
    } catch (const std::exception& e) {
        connection_.reply_error(in.id, internal_error, e.what());
    }
}

}  // namespace team::acp
