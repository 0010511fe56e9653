// The machinery that runs an operation: the shared rules of SPEC 1, applied once.
#include <algorithm>

#include "base/cancel.hpp"
#include "base/duration.hpp"
#include "base/names.hpp"
#include "ops/operation.hpp"
#include "ops/remote.hpp"
#include "state/activity.hpp"
#include "team/agents.hpp"

namespace team::ops {

namespace {

const char* type_word(Type type) {
    switch (type) {
        case Type::string:
        case Type::text:
        case Type::duration:
            return "a string";
        case Type::boolean:
            return "true or false";
        case Type::integer:
            return "a whole number";
        case Type::strings:
        case Type::command:
            return "a list of strings";
        case Type::integers:
            return "a list of whole numbers";
    }
    return "a value";
}

bool fits(Type type, const nlohmann::json& v) {
    switch (type) {
        case Type::string:
        case Type::text:
        case Type::duration:
            return v.is_string();
        case Type::boolean:
            return v.is_boolean();
        case Type::integer:
            return v.is_number_integer() || v.is_string();  // the command line gives text
        case Type::strings:
        case Type::command:
            if (!v.is_array()) return false;
            return std::all_of(v.begin(), v.end(), [](const auto& e) { return e.is_string(); });
        case Type::integers:
            if (!v.is_array()) return false;
            return std::all_of(v.begin(), v.end(), [](const auto& e) {
                return e.is_number_integer() || e.is_string();
            });
    }
    return false;
}

}  // namespace

Args::Args(const Operation& op, nlohmann::json values, Naming naming)
    : op_(op), values_(std::move(values)), naming_(naming) {
    if (values_.is_null()) values_ = nlohmann::json::object();
    if (!values_.is_object()) throw usage_error("the arguments must be an object of named values");
    for (const auto& [key, value] : values_.items()) {
        auto it = std::find_if(op.params.begin(), op.params.end(),
                               [&](const Param& p) { return p.name == key; });
        if (it == op.params.end()) {
            std::vector<std::string> known;
            for (const auto& p : op.params) known.emplace_back(p.name);
            throw usage_error("unknown parameter " + quote(key) + " of " + std::string(op.name) +
                                  did_you_mean(key, known),
                              key);
        }
        if (value.is_null()) continue;  // null is "not given"
        if (!fits(it->type, value)) {
            throw usage_error(label(key) + " must be " + type_word(it->type), key);
        }
    }
    for (const auto& p : op.params) {
        if (p.required && !has(p.name)) {
            throw usage_error(label(p.name) + " is required", std::string(p.name));
        }
        // Values are checked before anything is looked up, so a malformed one is a usage error
        // whoever asks and whatever it names.
        if (p.type == Type::duration) duration(p.name);
        if (p.type == Type::integer) integer(p.name);
        if (p.type == Type::integers) integers(p.name);
    }
}

const Param& Args::param(std::string_view name) const {
    for (const auto& p : op_.params) {
        if (p.name == name) return p;
    }
    // A body asking for a parameter its operation does not declare: a bug, not a user's error.
    throw std::logic_error("operation " + std::string(op_.name) + " has no parameter " +
                           std::string(name));
}

bool Args::has(std::string_view name) const {
    param(name);
    auto it = values_.find(name);
    return it != values_.end() && !it->is_null();
}

std::optional<nlohmann::json> Args::value(std::string_view name) const {
    if (has(name)) return values_.at(std::string(name));
    const Param& p = param(name);
    if (p.default_text.empty()) return std::nullopt;
    return nlohmann::json(std::string(p.default_text));
}

std::string Args::string(std::string_view name) const {
    return optional_string(name).value_or("");
}

std::optional<std::string> Args::optional_string(std::string_view name) const {
    auto v = value(name);
    if (!v) return std::nullopt;
    return v->get<std::string>();
}

bool Args::flag(std::string_view name) const {
    return has(name) && values_.at(std::string(name)).get<bool>();
}

bool Args::flag_if_declared(std::string_view name) const {
    for (const auto& p : op_.params) {
        if (p.name == name) return flag(name);
    }
    return false;
}

namespace {

// A whole number from `min`, given as a JSON integer or as its digits (the command line), for
// the parameter `param`.
long long whole_number(const nlohmann::json& v, long long min, const std::string& label,
                       std::string_view param) {
    auto refuse = [&](const std::string& shown) {
        return usage_error(label + ": must be a whole number of at least " + std::to_string(min) +
                               ", not " + shown,
                           std::string(param));
    };
    long long n = 0;
    if (v.is_number_integer()) {
        if (v.is_number_unsigned() && v.get<unsigned long long>() > 999'999'999'999'999'999ULL) {
            throw refuse(v.dump());
        }
        n = v.get<long long>();
    } else {
        auto text = v.get<std::string>();
        bool digits = !text.empty() && text.size() <= 18 &&
                      text.find_first_not_of("0123456789") == std::string::npos;
        if (!digits) throw refuse(quote(text));
        n = std::stoll(text);
    }
    if (n < min) throw refuse(std::to_string(n));
    return n;
}

}  // namespace

std::optional<long long> Args::integer(std::string_view name) const {
    auto v = value(name);
    if (!v) return std::nullopt;
    return whole_number(*v, param(name).min, label(name), name);
}

std::vector<std::int64_t> Args::integers(std::string_view name) const {
    std::vector<std::int64_t> out;
    if (!has(name)) return out;
    for (const auto& v : values_.at(std::string(name))) {
        out.push_back(whole_number(v, param(name).min, label(name), name));
    }
    return out;
}

std::optional<std::chrono::milliseconds> Args::duration(std::string_view name) const {
    auto v = value(name);
    if (!v) return std::nullopt;
    try {
        return parse_duration(v->get<std::string>(), label(name));
    } catch (const Error& e) {
        throw Error(e.code(), e.what(), std::string(name));  // base/duration knows no parameter
    }
}

std::vector<std::string> Args::strings(std::string_view name) const {
    if (!has(name)) return {};
    return values_.at(std::string(name)).get<std::vector<std::string>>();
}

std::string Args::label(std::string_view name) const {
    std::string text(name);
    if (naming_ == Naming::json) return text;
    for (const auto& p : op_.params) {
        if (p.name == name && p.positional) {
            return std::string(p.placeholder.empty() ? name : p.placeholder);
        }
    }
    std::replace(text.begin(), text.end(), '_', '-');
    return "--" + text;
}

std::string help_of(const Param& p) {
    std::string help(p.help);
    if (!p.default_text.empty()) help += " (default " + std::string(p.default_text) + ")";
    return help;
}

const Caller& Request::caller() {
    if (!team) throw std::logic_error("operation " + std::string(op.name) + " has no team");
    if (!caller_) caller_ = core.caller(*team);
    return *caller_;
}

nlohmann::json error_document(const Error& error, nlohmann::json shape) {
    shape["success"] = false;
    shape["error"] = error.what();
    shape["code"] = code_name(error.code());
    return shape;
}

Result error_result(const Operation& op, const nlohmann::json& values, const Error& error) {
    Result r;
    r.exit_code = exit_code(error.code());
    r.error = error;
    r.doc = error_document(
        error, op.error_shape
                   ? op.error_shape(values.is_object() ? values : nlohmann::json::object())
                   : nlohmann::json::object());
    return r;
}

Result invoke(Core& core, const Operation& op, const nlohmann::json& values, Naming naming,
              Progress progress) {
    ActivityVia via(core.identity().via);
    std::optional<Args> args;
    try {
        try {
            args.emplace(op, values, naming);
            Request request(core, op, *args);
            request.progress = std::move(progress);
            if (op.validate) op.validate(*args);
            if (op.scope != Scope::none) {
                std::optional<std::string> named;
                if (!op.team_param.empty()) named = args->optional_string(op.team_param);
                if (op.scope == Scope::team) {
                    request.team = core.team(named);
                } else {
                    request.team = core.named_team(named);
                }
            }
            if (op.leader_only) require_leader(request.caller(), std::string(op.leader_action));
            // What runs on another host is run there, by that host's team (SPEC 16).
            if (auto remote = run_on_host(core, op, *args, request.team)) return std::move(*remote);
            if (op.reconcile && request.team) {
                // Agents are checked against tmux and the OS before they are looked at.
                Agents(core.store(), core.clock(), core.tmux()).reconcile(*request.team);
            }
            return op.body(request);
        } catch (const Error&) {
            throw;
        } catch (const WaitCancelled& e) {
            // Ended by a stopping server: a wait that ran out early, answered as such. Withdrawn
            // by the client: answered by no one (the faces drop it), failed as any other.
            if (e.wound_down()) throw Error(ErrorCode::timeout, e.what());
            throw failed(e.what());
        } catch (const std::exception& e) {
            rethrow_store_error(e);  // busy, read-only, full: the one translation (state/store)
        }
    } catch (const Error& e) {
        return error_result(op, values, e);
    }
}

}  // namespace team::ops
