#include "mcp/tools.hpp"

#include <algorithm>
#include <cctype>
#include <mutex>
#include <optional>
#include <set>

#include "base/duration.hpp"
#include "base/error.hpp"
#include "mcp/schema.hpp"

namespace team::mcp {

namespace {

// How a tool's field becomes an operation's value.
enum class Convert {
    same,        // as given
    millis,      // a whole number of milliseconds -> a duration ("1500ms")
    negate,      // a boolean -> its opposite (kill_shell's force -> no_force)
    env_object,  // {"K": "V"} -> ["K=V"]
    team,        // the team to act on, not a value of the operation
};

struct Field {
    std::string_view tool;   // as the tool spells it
    std::string_view param;  // the operation's parameter ("" for the team)
    Convert convert = Convert::same;
    std::string_view help = "";  // else the parameter's
};

// How a tool differs from its operation's parameters, where SPEC 12 gives its input in another
// shape: the fields renamed or converted, the key a list answer is put under, and the parameter
// that bounds its wait. The tool names are the operations' (ops/operation.hpp, `tool`); a tool
// that is its operation's parameters as they are needs no shape, so a verb that joins the table
// with a tool needs nothing here.
struct Shape {
    std::string_view tool;
    std::vector<Field> fields = {};
    std::string_view list_key = "";
    // The parameter that bounds the tool's wait: set to 10 minutes when not given (when the
    // operation has a wait flag, only when it is set), refused beyond (SPEC 12).
    std::string_view bound = "";
};

const Field kTeam{
    .tool = "team",
    .param = "",
    .convert = Convert::team,
    .help = "the team to act on (default: the server's team, else the only live one)"};

const Field kShellId{.tool = "shell_id", .param = "id"};

const std::vector<Shape>& shapes() {
    static const std::vector<Shape> kShapes{
        {.tool = "team_list", .list_key = "teams"},
        {.tool = "agent_spawn",
         .fields = {{.tool = "env",
                     .param = "env",
                     .convert = Convert::env_object,
                     .help = "environment variables for the agent, {\"NAME\": \"value\"}"}}},
        {.tool = "agent_list", .list_key = "agents"},
        // An ACP agent's turn waited for (wait): 10 minutes at most, as every wait (SPEC 12).
        {.tool = "agent_prompt", .bound = "timeout"},
        {.tool = "kill_agent",
         .fields = {{.tool = "teamName",
                     .param = "",
                     .convert = Convert::team,
                     .help = "the team (default: the server's team, else the only live one)"},
                    {.tool = "agentId", .param = "name", .help = "the agent to stop (its name)"},
                    {.tool = "timeoutMs",
                     .param = "timeout",
                     .convert = Convert::millis,
                     .help = "with wait (implied): give up after this many milliseconds, phase "
                             "as it stands (at most 600000; wait alone waits that long)"},
                    {.tool = "forceAfterMs",
                     .param = "force_after",
                     .convert = Convert::millis,
                     .help = "a deadline in milliseconds: not confirmed by then, the agent is "
                             "force-killed by its pane's supervisor"},
                    {.tool = "graceMs", .param = "grace", .convert = Convert::millis},
                    {.tool = "reassignTo", .param = "reassign_to"},
                    {.tool = "noNotify", .param = "no_notify"}},
         .bound = "timeout"},
        {.tool = "inbox_read",
         .fields = {{.tool = "sinceId", .param = "since"},
                    {.tool = "markRead", .param = "mark_read"},
                    {.tool = "waitMs",
                     .param = "wait",
                     .convert = Convert::millis,
                     .help = "block until at least one matching message exists, at most this "
                             "many milliseconds (at most 600000); an empty list when it runs out"}},
         .list_key = "messages",
         .bound = "wait"},
        {.tool = "task_list", .list_key = "tasks"},
        {.tool = "shell_list", .list_key = "shells"},
        // The shell tools name a shell as kill_shell does (shell_id, after Claude Code's tools).
        {.tool = "shell_status", .fields = {kShellId}},
        {.tool = "shell_output", .fields = {kShellId}},
        {.tool = "shell_wait", .fields = {kShellId}, .bound = "timeout"},
        {.tool = "kill_shell",
         .fields = {kShellId,
                    {.tool = "force",
                     .param = "no_force",
                     .convert = Convert::negate,
                     .help = "SIGKILL what is left when timeout runs out (default true)"},
                    {.tool = "timeout", .param = "timeout", .convert = Convert::millis}}},
        {.tool = "shell_release", .fields = {kShellId}},
        {.tool = "run", .bound = "timeout"},
        {.tool = "activity", .list_key = "activity"},
        // A wait for agents' activity (SPEC 17): 10 minutes at most, as every wait.
        {.tool = "agent_wait", .bound = "timeout"},
        {.tool = "config_list", .list_key = "settings"},
    };
    return kShapes;
}

// Parameters a call cannot use: a stream that never ends (--follow) does not fit one answer.
bool offered(const ops::Param& p) {
    return p.name != "follow";
}

// A parameter's name in camelCase with `Ms` after it (force_after -> forceAfterMs), kept for the
// program's life so that a Field can point at it.
std::string_view millis_name(std::string_view param) {
    static std::mutex mutex;
    static std::set<std::string, std::less<>> names;
    std::string name;
    bool upper = false;
    for (char c : param) {
        if (c == '_') {
            upper = true;
            continue;
        }
        name += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
        upper = false;
    }
    name += "Ms";
    std::lock_guard lock(mutex);
    return *names.insert(std::move(name)).first;
}

// How a tool takes a parameter when it differs from the operation: the shape's field, else, for
// a duration, a whole number of milliseconds named ...Ms (SPEC 12's one convention); nothing when
// the tool takes it as the operation does.
std::optional<Field> field_of(const Shape& spec, const ops::Param& p) {
    for (const auto& f : spec.fields) {
        if (f.param == p.name && f.convert != Convert::team) return f;
    }
    if (p.type == ops::Type::duration) {
        return Field{.tool = millis_name(p.name), .param = p.name, .convert = Convert::millis};
    }
    return std::nullopt;
}

std::optional<Field> field_of(const Shape& spec, const ops::Operation& op, std::string_view param) {
    for (const auto& p : op.params) {
        if (p.name == param) return field_of(spec, p);
    }
    return std::nullopt;
}

nlohmann::json field_schema(const Field& f, const ops::Param* p) {
    nlohmann::json s;
    switch (f.convert) {
        case Convert::same:
            s = param_schema(*p);
            break;
        case Convert::millis:
            s = {{"type", "integer"}, {"minimum", 1}};
            break;
        case Convert::negate:
            s = {{"type", "boolean"}};
            break;
        case Convert::env_object:
            s = {{"type", "object"}, {"additionalProperties", {{"type", "string"}}}};
            break;
        case Convert::team:
            s = {{"type", "string"}};
            break;
    }
    if (!f.help.empty()) {
        s["description"] = std::string(f.help);
    } else if (p && f.convert == Convert::millis) {
        s["description"] = millis_help(*p);
    } else if (p) {
        s["description"] = param_help(*p);
    }
    return s;
}

nlohmann::json input_schema(const Shape& spec, const ops::Operation& op) {
    nlohmann::json properties = nlohmann::json::object();
    nlohmann::json required = nlohmann::json::array();
    bool own_team = std::any_of(spec.fields.begin(), spec.fields.end(),
                                [](const Field& f) { return f.convert == Convert::team; });
    for (const auto& f : spec.fields) {
        if (f.convert == Convert::team) properties[std::string(f.tool)] = field_schema(f, nullptr);
    }
    for (const auto& p : op.params) {
        if (!offered(p)) continue;
        auto f = field_of(spec, p);
        std::string name(f ? f->tool : p.name);
        properties[name] = f ? field_schema(*f, &p) : param_schema(p);
        if (p.required) required.push_back(name);
    }
    if (!own_team && op.scope != ops::Scope::none) {
        properties["team"] = field_schema(kTeam, nullptr);
    }
    nlohmann::json schema = {
        {"type", "object"}, {"properties", properties}, {"additionalProperties", false}};
    if (!required.empty()) schema["required"] = required;
    return schema;
}

// shutdown_respond: approve, reject or confirm, one tool for the three answers.
nlohmann::json respond_schema() {
    const auto* reject = ops::find_command("shutdown reject");
    nlohmann::json reason = {{"type", "string"}};
    if (reject) reason["description"] = "why (required to reject)";
    return {
        {"type", "object"},
        {"properties",
         {{"action",
           {{"type", "string"},
            {"enum", {"approve", "reject", "confirm"}},
            {"description",
             "approve: accept the shutdown request addressed to you (then finish your step "
             "and confirm); reject: refuse it, saying why; confirm: you are done, end now"}}},
          {"reason", reason},
          {"requestId",
           {{"type", "string"}, {"description", "the request (default: your newest open one)"}}},
          {"team", field_schema(kTeam, nullptr)}}},
        {"required", {"action"}},
        {"additionalProperties", false}};
}

nlohmann::json output_schema(std::string_view tool, const Shape& spec) {
    auto nullable = [](const char* type) { return nlohmann::json{{"type", {type, "null"}}}; };
    if (tool == "kill_agent") {
        return {{"type", "object"},
                {"properties",
                 {{"success", {{"type", "boolean"}}},
                  {"method", {{"type", "string"}, {"enum", {"graceful", "force"}}}},
                  {"phase", nullable("string")},
                  {"reassignedTasks", {{"type", "array"}, {"items", {{"type", "string"}}}}},
                  {"requestId", nullable("string")},
                  {"error", nullable("string")}}},
                {"required", {"success"}}};
    }
    if (tool == "kill_shell") {
        return {{"type", "object"},
                {"properties",
                 {{"success", {{"type", "boolean"}}},
                  {"shell_id", {{"type", "string"}}},
                  {"signal_sent", {{"type", "string"}}},
                  {"force_killed", {{"type", "boolean"}}},
                  {"exit_code", nullable("integer")},
                  {"error", nullable("string")}}},
                {"required", {"success"}}};
    }
    nlohmann::json schema = {{"type", "object"}};
    if (!spec.list_key.empty()) {
        schema["properties"] = {
            {std::string(spec.list_key), {{"type", "array"}, {"items", {{"type", "object"}}}}}};
    }
    return schema;
}

Call respond_call(const nlohmann::json& arguments) {
    Call call;
    std::string action = arguments.at("action").get<std::string>();
    call.op = ops::find_command("shutdown " + action);
    if (!call.op) throw ArgumentError{"action", "action " + quote(action) + " is not served"};
    call.values = nlohmann::json::object();
    auto reason = arguments.find("reason");
    bool has_reason = reason != arguments.end() && !reason->is_null();
    if (action == "reject") {
        if (!has_reason) throw ArgumentError{"reason", "reason is required to reject"};
        call.values["reason"] = *reason;
    } else if (has_reason) {
        throw ArgumentError{"reason", "reason is only taken with action reject"};
    }
    if (auto id = arguments.find("requestId"); id != arguments.end() && !id->is_null()) {
        call.values["request"] = *id;
    }
    if (auto team = arguments.find("team"); team != arguments.end() && !team->is_null()) {
        call.team = team->get<std::string>();
    }
    return call;
}

// A tool's shape: its own, else none (the operation's parameters as they are).
const Shape& shape_of(std::string_view tool) {
    static const Shape kNone{};
    for (const auto& shape : shapes()) {
        if (shape.tool == tool) return shape;
    }
    return kNone;
}

}  // namespace

nlohmann::json Tool::listing() const {
    std::string description(op->summary);
    if (name == "shutdown_respond") {
        description =
            "answer the shutdown request addressed to you: approve, reject (with a "
            "reason) or confirm (you are done: end now)";
    }
    return {{"name", name},
            {"description", description},
            {"inputSchema", input_schema},
            {"outputSchema", output_schema}};
}

Call Tool::call(const nlohmann::json& arguments_in) const {
    nlohmann::json arguments = arguments_in.is_null() ? nlohmann::json::object() : arguments_in;
    if (!arguments.is_object()) throw ArgumentError{"arguments", "arguments must be an object"};
    check_arguments(input_schema, arguments);
    if (name == "shutdown_respond") return respond_call(arguments);
    const Shape& spec = shape_of(name);
    Call call;
    call.op = op;
    call.values = nlohmann::json::object();
    for (const auto& [key, value] : arguments.items()) {
        if (value.is_null()) continue;
        std::optional<Field> f;
        for (const auto& field : spec.fields) {
            if (field.tool == key) f = field;
        }
        for (const auto& p : op->params) {
            if (f) break;
            if (auto implied = field_of(spec, p); implied && implied->tool == key) f = implied;
        }
        if (!f && key == "team") f = kTeam;
        if (!f) {
            call.values[key] = value;
            continue;
        }
        std::string param(f->param);
        switch (f->convert) {
            case Convert::same:
                call.values[param] = value;
                break;
            case Convert::millis: {
                long long ms = value.get<long long>();
                if (ms > kMaxWaitMs && param == spec.bound) {
                    throw ArgumentError{key, key + " must be at most " +
                                                 std::to_string(kMaxWaitMs) + " (10 minutes)"};
                }
                call.values[param] = std::to_string(ms) + "ms";
                break;
            }
            case Convert::negate:
                call.values[param] = !value.get<bool>();
                break;
            case Convert::env_object: {
                nlohmann::json list = nlohmann::json::array();
                for (const auto& [k, v] : value.items()) {
                    if (k.empty() || k.find('=') != std::string::npos) {
                        throw ArgumentError{key, key + ": " + quote(k) + " is not a variable name"};
                    }
                    list.push_back(k + "=" + v.get<std::string>());
                }
                call.values[param] = list;
                break;
            }
            case Convert::team:
                call.team = value.get<std::string>();
                break;
        }
    }
    // SPEC 12: a wait lasts at most 10 minutes, also when the caller gives no bound.
    std::string bound(spec.bound);
    if (std::none_of(op->params.begin(), op->params.end(),
                     [&](const ops::Param& p) { return p.name == bound; })) {
        bound.clear();
    }
    bool waits = !bound.empty();
    for (const auto& p : op->params) {
        if (p.name == "wait" && p.type == ops::Type::boolean && bound != "wait") {
            waits = call.values.value("wait", nlohmann::json(false)) == true;
        }
    }
    if (waits && bound != "wait" && !call.values.contains(bound)) {
        call.values[bound] = std::to_string(kMaxWaitMs) + "ms";
    }
    // The operation's own checks of its values (durations, whole numbers), as -32602.
    try {
        ops::Args args(*op, call.values, ops::Naming::json);
    } catch (const Error& e) {
        // The field the error is about, as this tool spells its parameter.
        std::string field = e.param();
        auto f = field.empty() ? std::nullopt : field_of(spec, *op, field);
        if (f) field = f->tool;
        throw ArgumentError{field, e.what()};
    }
    if (!bound.empty() && call.values.contains(bound)) {
        auto ms = parse_duration(call.values[bound].get<std::string>(), bound);
        if (ms.count() > kMaxWaitMs) {
            auto f = field_of(spec, *op, bound);
            std::string field(f ? f->tool : bound);
            throw ArgumentError{field, field + " must be at most 10 minutes"};
        }
    }
    return call;
}

nlohmann::json Tool::structured(const nlohmann::json& doc) const {
    if (doc.is_object()) return doc;
    return {{list_key.empty() ? "items" : std::string(list_key), doc}};
}

const std::vector<Tool>& tools() {
    static const std::vector<Tool> kTools = [] {
        std::vector<Tool> out;
        // In the table's order, so the listing follows SPEC 3-10 as the command line's does.
        for (const auto* op : ops::operations()) {
            if (op->tool.empty()) continue;
            const Shape& shape = shape_of(op->tool);
            Tool tool;
            tool.name = std::string(op->tool);
            tool.op = op;
            tool.input_schema =
                tool.name == "shutdown_respond" ? respond_schema() : input_schema(shape, *op);
            tool.output_schema = output_schema(op->tool, shape);
            tool.list_key = shape.list_key;
            out.push_back(std::move(tool));
        }
        return out;
    }();
    return kTools;
}

const Tool* find_tool(std::string_view name) {
    for (const auto& t : tools()) {
        if (t.name == name) return &t;
    }
    return nullptr;
}

std::vector<std::string> missing_tools() {
    std::vector<std::string> out;
    for (const auto& shape : shapes()) {
        if (!find_tool(shape.tool)) out.emplace_back(shape.tool);
    }
    return out;
}

}  // namespace team::mcp
