// The main loop of `team __acp ID` (team/acp_host.hpp): the agent started through the client,
// its session recorded, then, woken by the store's changes and the agent's end, the inbox and
// the queued turns handed to the client, the answered permissions and cancels passed on, a
// shutdown request answered for the agent, and the end recorded.
#include "team/acp_host.hpp"

#include <cstdio>
#include <exception>
#include <functional>

#include "acp/client.hpp"
#include "base/error.hpp"
#include "base/programs.hpp"
#include "state/acp_rows.hpp"
#include "state/activity.hpp"
#include "state/agent_activity_rows.hpp"
#include "state/change_watch.hpp"
#include "state/members.hpp"
#include "state/messages.hpp"
#include "state/teams.hpp"
#include "team/acp_store_host.hpp"
#include "team/acp_transcript_writer.hpp"
#include "team/agent_activity.hpp"
#include "team/messages.hpp"
#include "team/shutdown.hpp"
#include "tmux/server.hpp"

namespace team {

using nlohmann::json;

namespace {

// A message of the agent's inbox as the prompt it becomes. The host answers a shutdown request
// itself; every other type (a message, a type a sender chose with `send --type`, whatever a
// later verb sends) is the agent's to read, never dropped: its type and sender first, then its
// text, then its data when it has any.
std::string message_prompt(const Message& m) {
    std::string text = "[" + m.type + " from " + m.from + "] " + m.text;
    if (!m.data.is_null())
        text += "\n[data] " + m.data.dump(-1, ' ', false, json::error_handler_t::replace);
    return text;
}

// How the session a resume asked for came back, in the team's activity: loaded, or a new one in
// its place (`acp_session_fresh`, with the reason), so that nobody takes a fresh session for the
// old conversation.
void record_load(Store& store, EpochMs now, const TeamRecord& team, const AgentRecord& agent,
                 const std::string& load_from, const acp::Client& client) {
    if (client.session_loaded()) {
        append_activity(store.db(), team.id, now, agent.id_string(), "acp_session_loaded",
                        {{"agentId", agent.id_string()},
                         {"sessionId", client.session_id()},
                         {"replayedUpdates", client.replayed_updates()}});
        return;
    }
    append_activity(store.db(), team.id, now, agent.id_string(), "acp_session_fresh",
                    {{"agentId", agent.id_string()},
                     {"sessionId", client.session_id()},
                     {"loadFrom", load_from},
                     {"reason", client.why_fresh()}});
}

// The same in the pane.
std::string load_line(const std::string& load_from, const acp::Client& client) {
    if (client.session_loaded())
        return "team: session " + load_from + " loaded: the agent replayed its conversation (" +
               std::to_string(client.replayed_updates()) +
               " updates, already in the transcript, not stored again)\n";
    return "team: session " + load_from + " not loaded (" + client.why_fresh() +
           "): a new session, without the earlier conversation\n";
}

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
    // A resume (SPEC 19) asks for its session back: session/load, or a new one when the agent
    // cannot (acp/client.hpp).
    options.load_session = session->load_from;
    acp::Client client(options, host);
    // After the transcript an earlier session left (a resume), which stays as it was.
    host.attach(client, host.with_store([&] { return next_acp_transcript_seq(store, agent_id); }));

    std::string command_line;
    for (const auto& a : options.command) command_line += (command_line.empty() ? "" : " ") + a;
    print_in_pane("team: hosting ACP agent " + agent->id_string() + ": " + command_line + "\n");

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
        print_in_pane("\nteam: the ACP agent's connection ended: " + reason + "\n");
        std::string tail = client.stderr_tail();
        if (!tail.empty()) print_in_pane("its stderr ended with:\n" + tail + "\n");
    };

    try {
        client.start();
    } catch (const std::exception& e) {
        record_end(e.what());
        return 1;
    }
    if (client.state() == acp::ClientState::ready) {
        // Kept as the store keeps it: initialize's agentInfo with its agentCapabilities, which a
        // resume reads (whether the agent can load this session again).
        json info = client.agent_info().is_object() ? client.agent_info() : json::object();
        info["agentCapabilities"] = client.agent_capabilities();
        host.with_store([&] {
            store.write([&] {
                set_acp_session_state(store, agent_id, "ready", client.session_id(), info, nullptr);
                if (session->load_from) {
                    clear_acp_session_load(store, agent_id);
                    record_load(store, clock.now(), *team, *agent, *session->load_from, client);
                }
                append_activity(
                    store.db(), team->id, clock.now(), agent->id_string(), "acp_ready",
                    {{"agentId", agent->id_string()}, {"sessionId", client.session_id()}});
                // Ready for a prompt: idle, unless a queued turn has started already.
                auto now = load_agent_activity(store, agent_id);
                if (!now || now->state == "starting") {
                    ActivityReport ready;
                    ready.state = "idle";
                    ready.source = "acp";
                    ready.event = "session ready";
                    AgentActivity(store, clock).report_in_write(agent_id, ready);
                }
            });
        });
        if (session->load_from) print_in_pane(load_line(*session->load_from, client));
        print_in_pane("team: session " + client.session_id() + " ready\n");
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
                // Messages to the agent: a shutdown request is answered by the host; every other
                // becomes a prompt turn (message_prompt), in the same transaction as it is marked
                // read.
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
                                continue;
                            }
                            AcpTurnRow t;
                            t.agent_id = agent_id;
                            t.text = message_prompt(m);
                            t.source = "message " + std::to_string(m.id);
                            t.created_at = clock.now();
                            insert_acp_turn(store, t);
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
            print_in_pane(std::string("team: the store could not be read: ") + e.what() + "\n");
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
        print_in_pane(std::string("team: the shutdown could not be approved: ") + e.what() + "\n");
    }
    print_in_pane("team: shutting down: the turn cancelled, the session closed\n");
    client.close();
    record_end("closed for a shutdown");
    try {
        std::function<void()> after_reply;
        host.with_store([&] { shutdowns.confirm(*team, me, std::nullopt, &after_reply); });
        if (after_reply) after_reply();
    } catch (const std::exception& e) {
        print_in_pane(std::string("team: the shutdown could not be confirmed: ") + e.what() + "\n");
    }
    return 0;
}

}  // namespace team
