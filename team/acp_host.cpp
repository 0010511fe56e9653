#include "team/acp_host.hpp"

#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <thread>

#include "acp/client.hpp"
#include "base/error.hpp"
#include "base/programs.hpp"
#include "proc/signals.hpp"
#include "shells/shells.hpp"
#include "state/acp_rows.hpp"
#include "state/activity.hpp"
#include "state/members.hpp"
#include "state/messages.hpp"
#include "state/teams.hpp"
#include "team/messages.hpp"
#include "team/shutdown.hpp"
#include "tmux/server.hpp"

namespace team {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

// How often at most the transcript is written while it streams.
constexpr auto kTranscriptPace = 100ms;

void print(const std::string& text) {
    if (text.empty()) return;
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
}

// The agent's terminals (SPEC 15) as section 8's background shells of that agent: `team shell
// list`, the executions API and the dashboard's Stop see them. Each call opens the store of its
// own (they run on the client's worker threads, and wait_for_exit blocks). A released terminal
// is ended but its shell stays, with its whole output, until `team shell gc`.
class ShellTerminals final : public acp::Terminals {
  public:
    ShellTerminals(fs::path home, std::int64_t team_id, std::string agent, std::string cwd)
        : home_(std::move(home)),
          team_id_(team_id),
          agent_(std::move(agent)),
          cwd_(std::move(cwd)) {}

    std::string create(const acp::TerminalSpec& spec) override {
        Store store(home_);
        SystemClock clock;
        shells::Shells shells(store, clock);
        shells::ShellStart start;
        start.argv.push_back(spec.command);
        start.argv.insert(start.argv.end(), spec.args.begin(), spec.args.end());
        start.cwd = spec.cwd.empty() ? cwd_ : spec.cwd.string();
        for (const auto& [k, v] : spec.env) start.env.push_back(k + "=" + v);
        start.env.push_back("PAGER=cat");
        start.team_id = team_id_;
        start.agent = agent_;
        start.actor = agent_;
        ShellRecord shell = shells.start(start);
        std::lock_guard lock(mutex_);
        limits_[shell.id] = spec.output_byte_limit;
        return shell.id;
    }

    acp::TerminalOutput output(const std::string& id) override {
        auto limit = known(id);
        Store store(home_);
        SystemClock clock;
        shells::Shells shells(store, clock);
        ShellRecord shell = shells.get(id);
        acp::TerminalOutput out;
        auto slice =
            shells.output(shell, limit ? std::optional<std::size_t>(*limit) : std::nullopt);
        out.output = std::move(slice.output);
        out.truncated = slice.truncated || shell.output_truncated;
        if (!shell.running()) out.exit = exit_of(shell);
        return out;
    }

    acp::ExitStatus wait_for_exit(const std::string& id) override {
        known(id);
        Store store(home_);
        SystemClock clock;
        shells::Shells shells(store, clock);
        auto shell = shells.wait(id, std::nullopt);
        known(id);  // released meanwhile: not_found
        return shell ? exit_of(*shell) : acp::ExitStatus{};
    }

    void kill(const std::string& id) override {
        known(id);
        end(id);
    }

    void release(const std::string& id) override {
        known(id);
        {
            std::lock_guard lock(mutex_);
            limits_.erase(id);
        }
        end(id);
    }

    void release_all() override {
        std::vector<std::string> ids;
        {
            std::lock_guard lock(mutex_);
            for (const auto& [id, limit] : limits_) ids.push_back(id);
            limits_.clear();
        }
        for (const auto& id : ids) end(id);
    }

  private:
    std::optional<std::uint64_t> known(const std::string& id) {
        std::lock_guard lock(mutex_);
        auto it = limits_.find(id);
        if (it == limits_.end()) throw not_found("no terminal " + quote(id));
        return it->second;
    }

    // Its whole tree: SIGTERM, 2 s, SIGKILL (a shell that ended already is left as it is).
    void end(const std::string& id) {
        try {
            Store store(home_);
            SystemClock clock;
            shells::Shells shells(store, clock);
            if (shells.get(id).running()) shells.kill(id, SIGTERM, 2000ms, true, agent_);
        } catch (const std::exception&) {
        }
    }

    static acp::ExitStatus exit_of(const ShellRecord& shell) {
        acp::ExitStatus status;
        status.exit_code = shell.exit_code;
        if (shell.signal) {
            try {
                status.signal = proc::parse_signal(*shell.signal, "signal", false);
            } catch (const std::exception&) {
            }
        }
        return status;
    }

    fs::path home_;
    std::int64_t team_id_;
    std::string agent_, cwd_;
    std::mutex mutex_;
    std::map<std::string, std::optional<std::uint64_t>> limits_;
};

json option_json(const acp::PermissionOption& o) {
    return {{"optionId", o.id}, {"name", o.name}, {"kind", o.kind}};
}

json tool_call_json(const acp::ToolCallPatch& t) {
    auto opt = [](const auto& v) { return v ? json(*v) : json(nullptr); };
    return {{"toolCallId", t.id},      {"title", opt(t.title)},        {"kind", opt(t.kind)},
            {"status", opt(t.status)}, {"rawInput", opt(t.raw_input)}, {"content", opt(t.content)}};
}

// The Host over the store: everything the client cannot decide, written where the verbs and
// the faces read it. Every store access holds `store_mutex_` (the client calls from its reader
// and worker threads; the main loop reads too).
class StoreHost final : public acp::Host {
  public:
    StoreHost(Store& store, const TeamRecord& team, const AgentRecord& agent)
        : store_(store),
          team_(team),
          agent_(agent),
          terminals_(store.home(), team.id, agent.id_string(), agent.cwd.value_or("/")),
          wake_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}
    ~StoreHost() override {
        stop_writer();
        if (wake_ >= 0) ::close(wake_);
    }

    void attach(acp::Client& client) {
        client_ = &client;
        writer_ = std::thread([this] { write_loop(); });
    }

    // The main loop's wake-up besides the store: the agent ended, or the writer has news.
    int wake_fd() const { return wake_; }
    bool ended() const {
        std::lock_guard lock(mutex_);
        return ended_;
    }
    std::string end_reason() const {
        std::lock_guard lock(mutex_);
        return end_reason_;
    }

    template <class Fn>
    auto with_store(Fn&& fn) -> decltype(fn()) {
        std::lock_guard lock(store_mutex_);
        return fn();
    }
    Store& store() { return store_; }

    // Queues a turn on the client, for its row. The client may start it before prompt()
    // returns: turn_row() waits on prompt_mutex_ for the number to be mapped.
    void prompt(acp::Client& client, const std::string& text, std::int64_t row) {
        std::lock_guard prompting(prompt_mutex_);
        int number = client.prompt(text);
        std::lock_guard lock(mutex_);
        turn_rows_[number] = row;
    }

    void permission_requested(const acp::PermissionRequest& request) override {
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
                if (auto leader = find_leader(store_, team_.id)) {
                    post_message(store_.db(), team_, agent_.name, *leader, "permission_request",
                                 agent_.name + " asks permission: " + title +
                                     " (team permission allow|deny " + std::to_string(id) + ")",
                                 {{"permission", id},
                                  {"agent", agent_.name},
                                  {"toolCall", tool},
                                  {"options", options}},
                                 row.created_at);
                }
                append_activity(
                    store_.db(), team_.id, row.created_at, agent_.id_string(),
                    "permission_requested",
                    {{"agentId", agent_.id_string()}, {"permission", id}, {"title", title}});
            });
        });
        note("? permission asked: " + title + " (team permission list)");
    }

    void permission_closed(std::int64_t number, const std::string& how) override {
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
                append_activity(
                    store_.db(), team_.id, clock_.now(), agent_.id_string(),
                    state == "answered" ? "permission_answered" : "permission_closed",
                    {{"agentId", agent_.id_string()},
                     {"permission", row->id},
                     {"answer", how},
                     {"by", row->answered_by ? json(*row->answered_by) : json(nullptr)}});
            });
        });
    }

    acp::Terminals& terminals() override { return terminals_; }

    void turn_started(int number) override {
        auto row = turn_row(number);
        if (!row) return;
        with_store([&] {
            store_.write([&] {
                set_acp_turn_running(store_, *row);
                append_activity(store_.db(), team_.id, clock_.now(), agent_.id_string(),
                                "acp_turn_started",
                                {{"agentId", agent_.id_string()}, {"turn", *row}});
            });
        });
        dirty();
    }

    void turn_ended(int number, const acp::TurnResult& result) override {
        auto row = turn_row(number);
        // The transcript first, its stop entry included: whoever sees the turn ended (prompt
        // --wait) then reads all of it.
        flush();
        if (!row) return;
        std::optional<std::string> reason, error;
        if (result.ok())
            reason = result.stop_reason;
        else
            error = result.error;
        with_store([&] {
            store_.write([&] {
                end_acp_turn(store_, *row, reason, error, clock_.now());
                append_activity(store_.db(), team_.id, clock_.now(), agent_.id_string(),
                                "acp_turn_ended",
                                {{"agentId", agent_.id_string()},
                                 {"turn", *row},
                                 {"stopReason", reason ? json(*reason) : json(nullptr)},
                                 {"error", error ? json(*error) : json(nullptr)}});
            });
        });
    }

    void updated(const acp::Update&) override { dirty(); }

    void activity(const std::string& what) override {
        with_store([&] {
            store_.write([&] {
                append_activity(store_.db(), team_.id, clock_.now(), agent_.id_string(),
                                "acp_activity", {{"agentId", agent_.id_string()}, {"what", what}});
            });
        });
        note("· " + what);
    }

    void needs_auth(const std::vector<acp::AuthMethod>& methods) override {
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
                                "acp_needs_auth",
                                {{"agentId", agent_.id_string()}, {"methods", list}});
            });
        });
        note("! the agent needs authentication: " + names);
    }

    void ended(const std::string& reason) override {
        {
            std::lock_guard lock(mutex_);
            ended_ = true;
            end_reason_ = reason;
        }
        std::uint64_t one = 1;
        (void)!::write(wake_, &one, sizeof one);
    }

    // Writes the rest of the transcript and stops the writer.
    void stop_writer() {
        {
            std::lock_guard lock(mutex_);
            if (!writer_.joinable()) return;
            stopping_ = true;
            changed_.notify_all();
        }
        writer_.join();
    }

  private:
    std::optional<std::int64_t> turn_row(int number) {
        std::lock_guard prompting(prompt_mutex_);
        std::lock_guard lock(mutex_);
        auto it = turn_rows_.find(number);
        if (it == turn_rows_.end()) return std::nullopt;
        return it->second;
    }

    void dirty() {
        std::lock_guard lock(mutex_);
        dirty_ = true;
        changed_.notify_all();
    }

    // The transcript writer: whatever changed since the last batch, one transaction, and the
    // same drawn in the pane; at most one batch per kTranscriptPace.
    void write_loop() {
        std::unique_lock lock(mutex_);
        for (;;) {
            changed_.wait(lock, [&] { return dirty_ || stopping_; });
            bool last = stopping_;
            dirty_ = false;
            lock.unlock();
            flush();
            draw_notes();
            lock.lock();
            if (last && !dirty_) return;
            changed_.wait_for(lock, kTranscriptPace, [&] { return stopping_; });
        }
    }

    // Called by the writer, and by turn_ended on the client's turn thread.
    void flush() {
        std::lock_guard flushing(flush_mutex_);
        if (!client_) return;
        json records = client_->transcript_records();
        std::vector<std::pair<std::size_t, json>> changed;
        for (std::size_t i = 0; i < records.size(); ++i) {
            std::string text = records[i].dump();
            if (i < written_.size() && written_[i] == text) continue;
            changed.emplace_back(i, records[i]);
            if (i < written_.size())
                written_[i] = std::move(text);
            else
                written_.push_back(std::move(text));
        }
        if (changed.empty()) return;
        try {
            with_store([&] {
                store_.write([&] {
                    for (const auto& [seq, record] : changed)
                        put_acp_transcript(store_, agent_.id, static_cast<std::int64_t>(seq),
                                           record);
                    append_activity(store_.db(), team_.id, clock_.now(), agent_.id_string(),
                                    "acp_transcript",
                                    {{"agentId", agent_.id_string()}, {"entries", records.size()}});
                });
            });
        } catch (const std::exception& e) {
            // Kept in memory; the next batch writes it again.
            for (const auto& [seq, record] : changed) written_[seq].clear();
            print(std::string("team: the transcript could not be stored: ") + e.what() + "\n");
        }
        draw(changed);
    }

    // The pane: a record that grew at its end gets only what was added; any other change is
    // drawn whole, on lines of its own.
    void draw(const std::vector<std::pair<std::size_t, json>>& changed) {
        std::lock_guard lock(draw_mutex_);
        std::string out;
        for (const auto& [seq, record] : changed) {
            std::string text = acp::render_record(record);
            if (seq >= drawn_.size()) drawn_.resize(seq + 1);
            std::string& before = drawn_[seq];
            bool growing = seq == last_drawn_ && !before.empty() && !lines_between_ &&
                           text.compare(0, before.size() - 1, before, 0, before.size() - 1) == 0;
            if (growing && before.back() == '\n' && text.size() >= before.size()) {
                // The record's text grew: what is new, after the newline render put at its end.
                out += text.substr(before.size() - 1);
                if (!out.empty() && out.back() == '\n') out.pop_back();
                out_pending_newline_ = true;
            } else {
                if (out_pending_newline_) out += "\n";
                out += text;
                if (!out.empty() && out.back() == '\n') {
                    out.pop_back();
                    out_pending_newline_ = true;
                }
            }
            before = text;
            last_drawn_ = seq;
        }
        lines_between_ = false;
        print(out);
    }

  public:
    // A line of the host's own in the pane, drawn by the writer after the transcript as it
    // stands (so a permission request shows below what led to it).
    void note(const std::string& line) {
        std::lock_guard lock(mutex_);
        notes_.push_back(line);
        dirty_ = true;
        changed_.notify_all();
    }

  private:
    void draw_notes() {
        std::vector<std::string> notes;
        {
            std::lock_guard lock(mutex_);
            notes.swap(notes_);
        }
        if (notes.empty()) return;
        std::lock_guard lock(draw_mutex_);
        std::string out = out_pending_newline_ ? "\n" : "";
        for (const auto& n : notes) out += n + "\n";
        out_pending_newline_ = false;
        lines_between_ = true;
        print(out);
    }

    Store& store_;
    TeamRecord team_;
    AgentRecord agent_;
    SystemClock clock_;
    ShellTerminals terminals_;
    acp::Client* client_ = nullptr;
    int wake_ = -1;
    std::mutex store_mutex_;

    mutable std::mutex mutex_;  // below
    std::condition_variable changed_;
    std::map<int, std::int64_t> turn_rows_;
    std::vector<std::string> notes_;
    bool ended_ = false, dirty_ = false, stopping_ = false;
    std::string end_reason_;
    std::thread writer_;
    // What was written and drawn (under flush_mutex_).
    std::vector<std::string> written_, drawn_;
    std::size_t last_drawn_ = 0;
    std::mutex prompt_mutex_;  // a turn queued and mapped to its row, as one
    std::mutex flush_mutex_;   // written_ and drawn_: one flush at a time
    std::mutex draw_mutex_;    // the pane's lines: the writer's and note()'s
    bool out_pending_newline_ = false;
    bool lines_between_ = false;  // a note came after the last record drawn
};

}  // namespace

int host_acp_agent(Store& store, std::int64_t agent_id) {
    auto agent = load_agent(store, agent_id);
    auto session = load_acp_session(store, agent_id);
    auto team = agent ? find_team_by_id(store, agent->team_id) : std::nullopt;
    if (!agent || !session || !team) {
        std::fprintf(stderr, "team: no ACP agent %lld to host\n", static_cast<long long>(agent_id));
        return 2;
    }
    SystemClock clock;
    StoreHost host(store, *team, *agent);

    acp::ClientOptions options;
    options.command = agent->command.get<std::vector<std::string>>();
    options.cwd = agent->cwd.value_or("/");
    options.policy = acp::parse_policy(session->policy);
    // `team mcp` acting as this agent, named explicitly: agents may start their MCP servers
    // with a scrubbed environment (as team/presets does for the pane agents).
    options.mcp_servers =
        json::array({{{"name", "team"},
                      {"command", own_binary()},
                      {"args", json::array({"mcp", "--home", store.home().string(), "--team",
                                            team->name, "--as", agent->name})},
                      {"env", json::array()}}});
    acp::Client client(options, host);
    host.attach(client);

    std::string command_line;
    for (const auto& a : options.command) command_line += (command_line.empty() ? "" : " ") + a;
    print("team: hosting ACP agent " + agent->id_string() + ": " + command_line + "\n");

    auto record_end = [&](const std::string& reason) {
        host.stop_writer();
        host.with_store([&] {
            store.write([&] {
                EpochMs now = clock.now();
                set_acp_session_ended(store, agent_id, reason, client.stderr_tail());
                fail_open_acp_turns(store, agent_id, "the agent's connection ended: " + reason,
                                    now);
                expire_acp_permissions(store, agent_id, now);
                append_activity(store.db(), team->id, now, agent->id_string(), "acp_ended",
                                {{"agentId", agent->id_string()}, {"reason", reason}});
            });
        });
        print("\nteam: the ACP agent's connection ended: " + reason + "\n");
        std::string tail = client.stderr_tail();
        if (!tail.empty()) print("its stderr ended with:\n" + tail + "\n");
    };

    try {
        client.start();
    } catch (const std::exception& e) {
        record_end(e.what());
        return 1;
    }
    if (client.state() == acp::ClientState::ready) {
        host.with_store([&] {
            store.write([&] {
                set_acp_session_state(store, agent_id, "ready", client.session_id(),
                                      client.agent_info(), nullptr);
                append_activity(
                    store.db(), team->id, clock.now(), agent->id_string(), "acp_ready",
                    {{"agentId", agent->id_string()}, {"sessionId", client.session_id()}});
            });
        });
        print("team: session " + client.session_id() + " ready\n");
    }

    Caller me{agent->name, team->name, false, agent->id};
    std::int64_t turn_cursor = 0;
    std::int64_t cancels_seen = session->cancels;
    bool closed_by_us = false;
    ChangeWatch watch(store.home());
    for (;;) {
        if (host.ended()) break;
        struct Work {
            std::vector<AcpTurnRow> turns;
            std::vector<AcpPermissionRow> answers;
            bool cancel = false;
            bool shutdown = false;
        } work;
        try {
            host.with_store([&] {
                // Messages to the agent: a shutdown request is answered by the host; any other
                // becomes a prompt turn (in the same transaction as it is marked read).
                // Looked at first outside a write: a write commits, and a commit wakes every
                // watcher of the home, this host included.
                InboxSelection unread;
                unread.unread = true;
                if (!inbox_of(store, *team, agent_id, unread).empty())
                    store.write([&] {
                        auto inbox = inbox_of(store, *team, agent_id, unread);
                        for (const auto& m : inbox) {
                            if (m.type == "shutdown_request") {
                                work.shutdown = true;
                            } else if (m.type == "message" || m.type == "broadcast") {
                                AcpTurnRow t;
                                t.agent_id = agent_id;
                                t.text = "[message from " + m.from + "] " + m.text;
                                t.source = "message " + std::to_string(m.id);
                                t.created_at = clock.now();
                                insert_acp_turn(store, t);
                            }
                        }
                        mark_unread_read(store, inbox, clock.now());
                    });
                work.turns = queued_acp_turns(store, agent_id, turn_cursor);
                work.answers = answering_acp_permissions(store, agent_id);
                auto now = load_acp_session(store, agent_id);
                if (now && now->cancels > cancels_seen) {
                    cancels_seen = now->cancels;
                    work.cancel = true;
                }
            });
        } catch (const std::exception& e) {
            print(std::string("team: the store could not be read: ") + e.what() + "\n");
        }
        if (work.cancel) client.cancel();
        for (const auto& t : work.turns) {
            turn_cursor = t.id;
            try {
                host.prompt(client, t.text, t.id);
            } catch (const Error& e) {
                host.with_store([&] {
                    store.write(
                        [&] { end_acp_turn(store, t.id, std::nullopt, e.what(), clock.now()); });
                });
            }
        }
        for (const auto& p : work.answers) {
            try {
                client.answer_permission(p.number,
                                         {acp::PermissionChoice::Kind::option, *p.answer});
            } catch (const Error& e) {
                // Not open in the client any more (cancelled, expired meanwhile): the row says so.
                host.with_store([&] {
                    store.write([&] {
                        close_acp_permission(store, p.id, "expired", std::nullopt, clock.now());
                    });
                });
            }
        }
        if (work.shutdown) {
            closed_by_us = true;
            break;
        }
        watch.wait_until(std::chrono::steady_clock::time_point::max(), {host.wake_fd()});
    }
    if (!closed_by_us) {
        record_end(client.end_reason());
        return 1;
    }
    // A shutdown request: the agent cannot answer the handshake itself, so its host does, for
    // it, as SPEC 15 has a graceful stop: approved, its turn cancelled and its session closed
    // (stdin closed, a grace, its tree ended), then confirmed. Confirmed from inside the agent's
    // tree, the pane supervisor then ends what is left, this host included.
    tmux::TmuxClient tmux_client(tmux::TmuxServer::socket_args(store.home()),
                                 tmux::TmuxServer::ensure_config(store.home()));
    Shutdowns shutdowns(store, clock, tmux_client);
    try {
        host.with_store([&] { shutdowns.approve(*team, me, std::nullopt); });
    } catch (const std::exception& e) {
        print(std::string("team: the shutdown could not be approved: ") + e.what() + "\n");
    }
    print("team: shutting down: the turn cancelled, the session closed\n");
    client.close();
    record_end("closed for a shutdown");
    try {
        std::function<void()> after_reply;
        host.with_store([&] { shutdowns.confirm(*team, me, std::nullopt, &after_reply); });
        if (after_reply) after_reply();
    } catch (const std::exception& e) {
        print(std::string("team: the shutdown could not be confirmed: ") + e.what() + "\n");
    }
    return 0;
}

}  // namespace team
