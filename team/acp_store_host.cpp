// The ACP client's Host over the store (team/acp_store_host.hpp).
#include "team/acp_store_host.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "state/acp_rows.hpp"
#include "state/activity.hpp"
#include "state/members.hpp"
#include "state/usage_rows.hpp"
#include "team/agent_activity.hpp"
#include "team/messages.hpp"

namespace team {

using nlohmann::json;

namespace {

json option_json(const acp::PermissionOption& o) {
    return {{"optionId", o.id}, {"name", o.name}, {"kind", o.kind}};
}

json tool_call_json(const acp::ToolCallPatch& t) {
    auto opt = [](const auto& v) { return v ? json(*v) : json(nullptr); };
    return {{"toolCallId", t.id},      {"title", opt(t.title)},        {"kind", opt(t.kind)},
            {"status", opt(t.status)}, {"rawInput", opt(t.raw_input)}, {"content", opt(t.content)}};
}

}  // namespace

StoreHost::StoreHost(Store& store, const TeamRecord& team, const AgentRecord& agent)
    : store_(store),
      team_(team),
      agent_(agent),
      terminals_(store.home(), team.id, agent.id_string(), agent.cwd.value_or("/")),
      wake_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
      writer_(store, store_mutex_, team.id, agent.id, agent.id_string()) {}

StoreHost::~StoreHost() {
    writer_.stop();
    if (wake_ >= 0) ::close(wake_);
}

void StoreHost::attach(acp::Client& client, std::int64_t first_seq) {
    writer_.start(client, first_seq);
}

bool StoreHost::ended() const {
    std::lock_guard lock(mutex_);
    return ended_;
}

std::string StoreHost::end_reason() const {
    std::lock_guard lock(mutex_);
    return end_reason_;
}

void StoreHost::prompt(acp::Client& client, const std::string& text, std::int64_t row) {
    std::lock_guard prompting(prompt_mutex_);
    int number = client.prompt(text);
    std::lock_guard lock(mutex_);
    turn_rows_[number] = row;
}

void StoreHost::permission_requested(const acp::PermissionRequest& request) {
    json options = json::array();
    for (const auto& o : request.options) options.push_back(option_json(o));
    json tool = tool_call_json(request.tool_call);
    std::string title = request.tool_call.title.value_or(request.tool_call.id);
    with_store([&] {
        store_.write([&] {
            AcpPermissionRow row;
            row.team_id = team_.id;
            row.agent_id = agent_.id;
            row.number = request.number;
            row.tool_call = tool;
            row.options = options;
            row.created_at = clock_.now();
            std::int64_t id = insert_acp_permission(store_, row);
            // The agent waits for a person (SPEC 17): the leader's one needs_input message
            // carries the request, and what answers it.
            ActivityReport waiting;
            waiting.state = "waiting";
            waiting.source = "acp";
            waiting.event = "session/request_permission";
            waiting.waiting_on = {{"kind", "permission"},
                                  {"tool", title},
                                  {"permission", id},
                                  {"answer", "team permission allow|deny " + std::to_string(id)}};
            if (tool.is_object() && tool.contains("kind"))
                waiting.waiting_on["toolKind"] = tool["kind"];
            waiting.data = {{"permission", id}, {"toolCall", tool}, {"options", options}};
            AgentActivity(store_, clock_).report_in_write(agent_.id, waiting);
            append_activity(
                store_.db(), team_.id, row.created_at, agent_.id_string(), "permission_requested",
                {{"agentId", agent_.id_string()}, {"permission", id}, {"title", title}});
        });
    });
    note("? permission asked: " + title + " (team permission list)");
}

void StoreHost::permission_closed(std::int64_t number, const std::string& how) {
    with_store([&] {
        store_.write([&] {
            auto row = acp_permission_by_number(store_, agent_.id, number);
            if (!row) return;
            std::string state = how == "cancelled" ? "cancelled"
                                : how == "expired" ? "expired"
                                                   : "answered";
            std::optional<std::string> answer;
            if (state == "answered") answer = how;
            close_acp_permission(store_, row->id, state, answer, clock_.now());
            // Answered or not, the turn goes on (or ends, and says so).
            ActivityReport going_on;
            going_on.state = "working";
            going_on.source = "acp";
            going_on.event = "permission " + state;
            AgentActivity(store_, clock_).report_in_write(agent_.id, going_on);
            append_activity(store_.db(), team_.id, clock_.now(), agent_.id_string(),
                            state == "answered" ? "permission_answered" : "permission_closed",
                            {{"agentId", agent_.id_string()},
                             {"permission", row->id},
                             {"answer", how},
                             {"by", row->answered_by ? json(*row->answered_by) : json(nullptr)}});
        });
    });
}

void StoreHost::turn_started(int number) {
    auto row = turn_row(number);
    if (!row) return;
    with_store([&] {
        store_.write([&] {
            set_acp_turn_running(store_, *row);
            ActivityReport working;
            working.state = "working";
            working.source = "acp";
            working.event = "turn started";
            working.prompt_taken = true;
            working.unless_waiting = true;
            AgentActivity(store_, clock_).report_in_write(agent_.id, working);
            add_usage_turn(store_, agent_.id);
            append_activity(store_.db(), team_.id, clock_.now(), agent_.id_string(),
                            "acp_turn_started", {{"agentId", agent_.id_string()}, {"turn", *row}});
        });
    });
    writer_.dirty();
}

void StoreHost::turn_ended(int number, const acp::TurnResult& result) {
    auto row = turn_row(number);
    // The transcript first, its stop entry included: whoever sees the turn ended (prompt
    // --wait) then reads all of it.
    writer_.flush();
    if (!row) return;
    std::optional<std::string> reason, error;
    if (result.ok())
        reason = result.stop_reason;
    else
        error = result.error;
    with_store([&] {
        store_.write([&] {
            end_acp_turn(store_, *row, reason, error, clock_.now());
            // Its turn over, it waits for the next prompt: idle, unless another is queued
            // (that turn's start says working again).
            ActivityReport idle;
            idle.state = "idle";
            idle.source = "acp";
            idle.event = "turn ended";
            AgentActivity(store_, clock_).report_in_write(agent_.id, idle);
            // What the turn spent, as its reply says (SPEC 18): the turn's tokens, once (its
            // row is its key). ACP names no model: priced only by the agent's own cost.
            if (result.usage.is_object()) {
                auto tokens = [&](const char* field) -> std::int64_t {
                    auto it = result.usage.find(field);
                    return it != result.usage.end() && it->is_number_integer() && *it >= 0
                               ? it->get<std::int64_t>()
                               : 0;
                };
                UsageCall call{"acp-turn-" + std::to_string(*row),
                               "",
                               clock_.now(),
                               tokens("inputTokens"),
                               tokens("outputTokens"),
                               tokens("cachedReadTokens"),
                               tokens("cachedWriteTokens")};
                add_usage_calls(store_, agent_.id, {call}, nullptr);
            }
            append_activity(store_.db(), team_.id, clock_.now(), agent_.id_string(),
                            "acp_turn_ended",
                            {{"agentId", agent_.id_string()},
                             {"turn", *row},
                             {"stopReason", reason ? json(*reason) : json(nullptr)},
                             {"error", error ? json(*error) : json(nullptr)}});
        });
    });
}

void StoreHost::updated(const acp::Update& update) {
    writer_.dirty();
    // The session's cost so far (`usage_update`), the agent's own figure when in US dollars.
    if (update.kind != acp::UpdateKind::usage || !update.usage.is_object()) return;
    auto cost = update.usage.find("cost");
    if (cost == update.usage.end() || !cost->is_object()) return;
    auto amount = cost->find("amount");
    if (cost->value("currency", std::string()) != "USD" || amount == cost->end() ||
        !amount->is_number() || amount->get<double>() < 0) {
        return;
    }
    double usd = amount->get<double>();
    {
        std::lock_guard lock(mutex_);
        if (last_cost_ && *last_cost_ == usd) return;
        last_cost_ = usd;
    }
    with_store([&] { store_.write([&] { save_agent_cost(store_, agent_.id, usd); }); });
}

void StoreHost::activity(const std::string& what) {
    with_store([&] {
        store_.write([&] {
            append_activity(store_.db(), team_.id, clock_.now(), agent_.id_string(), "acp_activity",
                            {{"agentId", agent_.id_string()}, {"what", what}});
        });
    });
    note("· " + what);
}

void StoreHost::needs_auth(const std::vector<acp::AuthMethod>& methods) {
    json list = json::array();
    std::string names;
    for (const auto& m : methods) {
        list.push_back({{"id", m.id}, {"name", m.name}, {"description", m.description}});
        names += (names.empty() ? "" : ", ") + m.id;
    }
    with_store([&] {
        store_.write([&] {
            set_acp_session_state(store_, agent_.id, "needs_auth", std::nullopt, nullptr, list);
            if (auto leader = find_leader(store_, team_.id)) {
                post_message(store_.db(), team_, agent_.name, *leader, "acp_needs_auth",
                             agent_.name + " needs authentication before a session (" +
                                 (names.empty() ? "no method offered" : names) + ")",
                             {{"agent", agent_.name}, {"methods", list}}, clock_.now());
            }
            append_activity(store_.db(), team_.id, clock_.now(), agent_.id_string(),
                            "acp_needs_auth", {{"agentId", agent_.id_string()}, {"methods", list}});
        });
    });
    note("! the agent needs authentication: " + names);
}

void StoreHost::ended(const std::string& reason) {
    {
        std::lock_guard lock(mutex_);
        ended_ = true;
        end_reason_ = reason;
    }
    std::uint64_t one = 1;
    (void)!::write(wake_, &one, sizeof one);
}

std::optional<std::int64_t> StoreHost::turn_row(int number) {
    std::lock_guard prompting(prompt_mutex_);
    std::lock_guard lock(mutex_);
    auto it = turn_rows_.find(number);
    if (it == turn_rows_.end()) return std::nullopt;
    return it->second;
}

}  // namespace team
