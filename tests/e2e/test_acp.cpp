// ACP agents (SPEC 15) end to end: the real binary, real tmux, and a real ACP agent, the scripted
// one of tests/acp (node and the official TypeScript SDK; each line of a prompt is a step of its
// script: say, permission, terminal, wait-cancel, crash...), hosted by `team spawn --acp`. Tagged
// [acp] (ctest label `acp`); without tests/acp/node_modules each test says so and is skipped.
#include <signal.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/acp_peer.hpp"
#include "tests/support/agents_home.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/process.hpp"

using team::test::bound;
using team::test::eventually;
using Json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

using team::test::acp_peer_ready;

fs::path peer() {
    return team::test::acp_peer();
}

class AcpHome : public team::test::AgentsHome {
  public:
    explicit AcpHome(const std::string& team) : AgentsHome(team) {}

    // `team spawn NAME --acp [EXTRA...] -- node agent.mjs [FLAGS...]`, marked for the leftovers
    // check.
    Json spawn_acp(const std::string& name, std::vector<std::string> extra = {},
                   std::vector<std::string> flags = {}) const {
        std::vector<std::string> args{"spawn", name, "--acp", "--env", mark.entry()};
        args.insert(args.end(), extra.begin(), extra.end());
        args.insert(args.end(), {"--", "node", peer().string()});
        args.insert(args.end(), flags.begin(), flags.end());
        auto doc = ok(args);
        REQUIRE(doc["name"] == name);
        // Its session is up once the handshake is done.
        REQUIRE(eventually([&] { return acp(name)["state"] == "ready"; }, bound(20000)));
        return doc;
    }

    // Everything a refused ACP command could change, straight from the database.
    std::string snapshot() const {
        return rows({"SELECT agent_id, policy, state, cancels FROM acp_agents ORDER BY agent_id",
                     "SELECT id, agent_id, state, stop_reason FROM acp_turns ORDER BY id",
                     "SELECT id, state, answer, answered_by FROM acp_permissions ORDER BY id",
                     "SELECT id, name, status FROM agents ORDER BY id",
                     "SELECT id, recipient_id, type, text FROM messages ORDER BY id"});
    }

    Json acp(const std::string& name) const { return agent(name).value("acp", Json()); }

    Json records(const std::string& name) const { return ok({"logs", name})["records"]; }

    // The text the agent said (its message chunks, merged) in every turn.
    std::string said(const std::string& name) const {
        std::string out;
        for (const auto& r : records(name))
            if (r["kind"] == "agent_message") out += r["text"].get<std::string>() + "\n";
        return out;
    }

    // Waits until the agent has said `text`.
    void wait_said(const std::string& name, const std::string& text, int ms = 15000) const {
        std::string last;
        bool ok = eventually(
            [&] {
                last = said(name);
                return last.find(text) != std::string::npos;
            },
            bound(ms));
        INFO("said so far: " << last);
        REQUIRE(ok);
    }

    // The open permission requests, waiting until there are `count`.
    Json wait_permissions(std::size_t count) const {
        Json list;
        REQUIRE(eventually(
            [&] {
                list = ok({"permission", "list"});
                return list.size() >= count;
            },
            bound(15000)));
        return list;
    }

    // A reboot as the agents see it: every process of the test (the home's tmux server, the pane
    // supervisors, the ACP hosts and the agents) SIGKILLed, nothing of team told, each waited
    // for until it has exited (a look meanwhile would see a dying supervisor still running).
    void reboot() const { REQUIRE(mark.kill_all_within(10000)); }

    // `team resume --all`: the one agent's outcome, and its session ready again.
    Json resume_one(const std::string& name) const {
        auto doc = ok({"resume", "--all"});
        INFO("resume: " << doc.dump());
        // When it took none: how the agent's end was recorded, and what the log says (a flake
        // seen twice in 150 runs under load, not yet explained).
        if (doc["agents"].size() != 1) {
            INFO("agents: " << agents().dump());
            INFO("activity: " << ok({"activity"}).dump());
            REQUIRE(doc["agents"].size() == 1);
        }
        REQUIRE(doc["agents"].size() == 1);
        auto outcome = doc["agents"][0];
        REQUIRE(outcome["name"] == name);
        REQUIRE(eventually([&] { return acp(name)["state"] == "ready"; }, bound(20000)));
        return outcome;
    }

    // The kinds of the stored transcript's entries, in order.
    std::vector<std::string> kinds(const Json& records) const {
        std::vector<std::string> out;
        for (const auto& r : records) out.push_back(r["kind"]);
        return out;
    }

    // `team prompt NAME TEXT --wait`: its exit code and document.
    std::pair<int, Json> prompt_wait(const std::string& name, const std::string& text,
                                     const std::string& timeout = "60s") const {
        auto r = json_run({"prompt", name, text, "--wait", "--timeout", timeout});
        INFO("prompt " << text << " -> " << r.exit_code << " " << r.out << r.err);
        return {r.exit_code, r.json()};
    }
};

}  // namespace

TEST_CASE("acp: spawn, the handshake, turns in order with their stop reasons, the transcript",
          "[acp]") {
    if (!acp_peer_ready()) return;
    AcpHome h("acp-turns");
    h.spawn_acp("a1");
    auto a = h.agent("a1");
    CHECK(a["status"] == "active");
    CHECK(a["acp"]["policy"] == "ask");
    CHECK(a["acp"]["sessionId"].is_string());

    // session/new got the agent's cwd and `team mcp` acting as that agent.
    auto [code, doc] = h.prompt_wait("a1", "echo-session");
    CHECK(code == 0);
    CHECK(doc["stopReason"] == "end_turn");
    auto session = Json::parse(h.said("a1"));
    CHECK(session["cwd"] == fs::canonical(h.env.dir()).string());
    auto server = session["mcpServers"][0];
    CHECK(server["name"] == "team");
    auto args = server["args"].get<std::vector<std::string>>();
    CHECK(args == std::vector<std::string>{"mcp", "--home", h.env.home().string(), "--team",
                                           "acp-turns", "--as", "a1"});

    // A second prompt queued behind a slow first one runs after it; each has its stop reason.
    auto first = h.ok({"prompt", "a1", "sleep 300\nsay one\nstop max_tokens"});
    CHECK(first["state"] == "queued");
    auto [code2, second] = h.prompt_wait("a1", "say two");
    CHECK(code2 == 0);
    CHECK(second["stopReason"] == "end_turn");
    auto records = h.records("a1");
    std::vector<std::string> kinds;
    std::vector<Json> stops;
    for (const auto& r : records) {
        kinds.push_back(r["kind"]);
        if (r["kind"] == "stop") stops.push_back(r["stopReason"]);
    }
    REQUIRE(stops.size() == 3);
    CHECK(stops[1] == "max_tokens");
    CHECK(stops[2] == "end_turn");
    CHECK(h.said("a1").find("one\ntwo") != std::string::npos);
    // A stop reason other than end_turn has its own exit code.
    auto [code3, third] = h.prompt_wait("a1", "stop refusal");
    CHECK(code3 == 5);
    CHECK(third["stopReason"] == "refusal");

    // The readable transcript, and the pane drew it too.
    auto logs = h.ok({"logs", "a1"});
    CHECK_THAT(logs["output"].get<std::string>(), Catch::Contains("> say two"));
    CHECK(eventually([&] {
        return h.run({"logs", "a1", "--raw"}).out.find("— end_turn") != std::string::npos;
    }));

    // A message to the agent is a turn too; so is a message of any other type, its data after
    // its text (each line a step of the scripted agent's, which says the ones it does not know).
    h.ok({"send", "a1", "hello there"});
    h.wait_said("a1", "unknown step [message");
    h.ok({"send", "a1", "task 7 is yours", "--type", "task_notice", "--data", R"({"task":7})"});
    h.wait_said("a1", "unknown step [task_notice");
    h.wait_said("a1", "unknown step [data]");
    auto turns =
        h.rows({"SELECT source, text FROM acp_turns WHERE source LIKE 'message %' "
                "ORDER BY id"});
    CHECK_THAT(turns, Catch::Contains("[message from leader] hello there"));
    CHECK_THAT(turns, Catch::Contains("[task_notice from leader] task 7 is yours\n[data] "
                                      "{\"task\":7}"));
    // Each was marked read as it became a turn: none is left unread, none dropped.
    CHECK(h.ok({"inbox", "--agent", "a1", "--unread"}).empty());
    CHECK(h.ok({"inbox", "--agent", "a1"}).size() == 2);
    // The turn's end is stored after its transcript: waited for, not read at once.
    CHECK(eventually([&] { return h.activity("acp_turn_ended").size() >= 6; }));
    h.ok({"kill-agent", "a1", "--force"});
    h.check_nothing_left();
}

TEST_CASE("acp: permission requests reach the leader: allow, deny (reject), cancel", "[acp]") {
    if (!acp_peer_ready()) return;
    AcpHome h("acp-perm");
    h.spawn_acp("a1");

    // Allow: the leader's inbox has the request, the answer reaches the agent.
    h.ok({"prompt", "a1", "permission edit\nsay after-allow"});
    auto inbox = h.ok({"inbox", "--type", "needs_input", "--wait", "20s"});
    REQUIRE(inbox.size() == 1);
    auto data = inbox[0]["data"];
    CHECK(data["agent"] == "a1");
    CHECK(data["toolCall"]["kind"] == "edit");
    CHECK(data["options"].size() == 4);
    auto id = data["permission"].get<int>();
    auto list = h.wait_permissions(1);
    CHECK(list[0]["id"] == id);
    CHECK(list[0]["state"] == "open");
    // Bad answers change nothing.
    team::test::check_refused(h, {"permission", "answer", std::to_string(id), "no-such-option"}, 2);
    team::test::check_refused(h, {"permission", "allow", "999999"}, 3);
    team::test::check_refused(h, {"permission", "allow", std::to_string(id)}, 4, h.as("a1"));
    team::test::check_refused(
        h, {"permission", "answer", std::to_string(id), "allow", "--decision", "deny"}, 2);
    CHECK(h.ok({"permission", "list"})[0]["state"] == "open");
    // It waits for a person (SPEC 17), on that request, and the message says what answers it.
    auto find_a1 = [&] {
        for (const auto& a : h.ok({"agents"}))
            if (a["name"] == "a1") return a["activity"];
        return Json();
    };
    auto act = find_a1();
    CHECK(act["state"] == "waiting");
    CHECK(act["source"] == "acp");
    CHECK(act["waitingOn"]["permission"] == id);
    CHECK(act["waitingOn"]["answer"] == "team permission allow|deny " + std::to_string(id));
    CHECK(data["answer"] == "team permission allow|deny " + std::to_string(id));
    auto answered = h.ok({"permission", "allow", std::to_string(id)});
    CHECK(answered["answer"] == "allow");
    h.wait_said("a1", "permission: allow");
    h.wait_said("a1", "after-allow");
    // Its turn went on, then ended: idle, and told only once.
    h.ok({"wait", "a1", "--until", "idle", "--timeout", "20s"});
    CHECK(h.ok({"inbox", "--type", "needs_input"}).size() == 1);
    team::test::check_refused(h, {"permission", "deny", std::to_string(id)}, 4);

    // Deny picks the agent's reject option, never `cancelled`: the turn goes on.
    h.ok({"prompt", "a1", "permission execute\nsay after-deny"});
    auto second = h.wait_permissions(1)[0]["id"].get<int>();
    CHECK(h.ok({"permission", "deny", std::to_string(second), "--always"})["answer"] ==
          "reject-always");
    h.wait_said("a1", "permission: reject-always");
    h.wait_said("a1", "after-deny");

    // A cancel while a request waits answers it `cancelled` and ends the turn so (exit 130).
    auto waiting = h.env.start(
        {"--json", "prompt", "a1", "permission edit", "--wait", "--timeout", "60s"}, h.extra());
    auto pending = h.wait_permissions(1)[0]["id"].get<int>();
    CHECK(h.ok({"cancel", "a1"})["cancelled"] == true);
    auto ended = waiting.wait();
    CHECK(ended.exit_code == 130);
    CHECK(ended.json()["stopReason"] == "cancelled");
    CHECK(eventually([&] {
        auto all = h.ok({"permission", "list", "--all"});
        for (const auto& p : all)
            if (p["id"] == pending) return p["state"] == "cancelled";
        return false;
    }));
    CHECK(h.ok({"permission", "list"}).empty());
    // Nothing runs now: a cancel has nothing to cancel.
    CHECK(h.ok({"cancel", "a1"})["cancelled"] == false);

    auto history = h.ok({"permission", "list", "--all"});
    CHECK(history[0]["state"] == "answered");
    CHECK(history[0]["answeredBy"] == "leader@acp-perm");
    CHECK(history[1]["answer"] == "reject-always");
    h.ok({"kill-agent", "a1", "--force"});
    h.check_nothing_left();
}

TEST_CASE("acp: terminals are the agent's background shells", "[acp]") {
    if (!acp_peer_ready()) return;
    AcpHome h("acp-term");
    h.spawn_acp("a1");

    // Exit code and output, through a team shell the leader can list; PAGER=cat.
    auto [code, doc] = h.prompt_wait("a1", "terminal - sh -c echo${IFS}out-$PAGER;exit${IFS}3");
    CHECK(code == 0);
    auto last = [&] { return Json::parse(team::test::lines_of(h.said("a1")).back()); };
    auto result = last();
    CHECK(result["exitCode"] == 3);
    CHECK(result["output"] == "out-cat\n");
    CHECK(result["truncated"] == false);
    auto shells = h.ok({"shell", "list", "--all"});
    REQUIRE(shells.size() == 1);
    CHECK(shells[0]["agent"] == "a1@acp-term");
    CHECK(shells[0]["exitCode"] == 3);

    // The tail, cut on a character boundary: of "aé€" (1+2+3 bytes) 4 bytes keep only "€".
    h.prompt_wait("a1", "terminal 4 printf a\\303\\251\\342\\202\\254");
    auto cut = last();
    CHECK(cut["truncated"] == true);
    CHECK(cut["output"] == "\xE2\x82\xAC");

    // kill ends the whole tree (a grandchild too), and the shell records it.
    auto pid_file = (h.env.dir() / "grandchild").string();
    h.prompt_wait("a1", "terminal-kill sh -c sleep${IFS}600&echo${IFS}$!>" + pid_file + ";wait");
    auto killed = last();
    CHECK(killed["signal"].is_string());
    std::string grandchild;
    REQUIRE(eventually([&] {
        grandchild = team::test::slurp(pid_file);
        return !grandchild.empty();
    }));
    CHECK(eventually(
        [&] { return !fs::exists("/proc/" + team::test::lines_of(grandchild).front()); }));
    // Release while it runs: ended, and the id is gone for the agent (its shell stays listed).
    h.prompt_wait("a1", "terminal-release sleep 600");
    CHECK(team::test::lines_of(h.said("a1")).back() == "released: -32002");
    CHECK(eventually([&] {
        for (const auto& s : h.ok({"shell", "list", "--all"}))
            if (s["command"][0] == "sleep" && s["status"] == "running") return false;
        return true;
    }));

    // 200 MB of output: the agent gets its tail, the file keeps the shell's limit.
    auto [big, doc2] = h.prompt_wait("a1", "terminal 1000 head -c 200000000 /dev/zero", "120s");
    CHECK(big == 0);
    auto tail = last();
    CHECK(tail["truncated"] == true);
    CHECK(tail["output"].get<std::string>().size() == 1000);
    h.ok({"kill-agent", "a1", "--force"});
    h.check_nothing_left();
}

TEST_CASE(
    "acp: a graceful stop answers the handshake, a crash mid-turn, no orphan behind a "
    "wrapper that ignores EOF",
    "[acp][acp-sanitize]") {
    if (!acp_peer_ready()) return;
    AcpHome h("acp-stop");

    // Graceful: requested -> approved -> confirmed, through the host.
    h.spawn_acp("a1");
    h.ok({"prompt", "a1", "wait-cancel"});
    auto kill = h.ok({"kill-agent", "a1", "--wait", "--timeout", "30s"});
    CHECK(kill["success"] == true);
    auto gone = h.wait_terminated("a1");
    CHECK(gone["exitReason"] == "confirmed");
    auto status = h.ok({"shutdown", "status", "a1"});
    CHECK(status["phase"] == "confirmed");
    CHECK(status["respondedAt"].is_string());
    CHECK(h.ok({"agents", "--all"})[0]["acp"]["state"] == "ended");

    // A crash mid-turn fails that turn with a clear reason and ends the agent.
    h.spawn_acp("a2");
    auto [code, doc] = h.prompt_wait("a2", "say before\ncrash");
    CHECK(code == 1);
    CHECK(doc["state"] == "failed");
    CHECK_THAT(doc["error"].get<std::string>(), Catch::Contains("exited with 3"));
    h.wait_terminated("a2");

    // A wrapper that ignores EOF and SIGTERM and leaves a detached grandchild: a force kill
    // leaves nothing of it.
    // Its open turn and permission request end with it, though its host had no time to say so.
    h.spawn_acp("a3", {}, {"--ignore-eof"});
    h.ok({"prompt", "a3", "permission edit"});
    auto asked = h.wait_permissions(1)[0]["id"];
    h.ok({"kill-agent", "a3", "--force"});
    auto killed = h.wait_terminated("a3");
    CHECK(killed["acp"]["state"] == "ended");
    CHECK(h.ok({"permission", "list"}).empty());
    for (const auto& p : h.ok({"permission", "list", "--all"}))
        if (p["id"] == asked) CHECK(p["state"] == "expired");
    auto open = h.rows({"SELECT state FROM acp_turns WHERE state IN ('queued', 'running')"});
    CHECK(open.find("queued") == std::string::npos);
    CHECK(open.find("running") == std::string::npos);
    h.check_nothing_left();
}

TEST_CASE("acp: bad input is refused and changes nothing", "[acp]") {
    if (!acp_peer_ready()) return;
    AcpHome h("acp-bad");
    using team::test::check_refused;
    check_refused(h, {"spawn", "x", "--permissions", "ask", "--", "true"}, 2);
    check_refused(h, {"spawn", "x", "--acp", "--permissions", "sometimes", "--", "true"}, 2);
    check_refused(h, {"spawn", "x", "--acp", "--preset", "nope"}, 2);
    h.spawn("p1", {"sleep", "600"});
    check_refused(h, {"prompt", "p1", "hi", "--wait"}, 2);
    check_refused(h, {"cancel", "p1"}, 4);
    check_refused(h, {"cancel", "nobody"}, 3);
    check_refused(h, {"permission", "allow", "0"}, 2);
    check_refused(h, {"permission", "allow", "x"}, 2);
    check_refused(h, {"permission", "answer", "1"}, 2);
    check_refused(h, {"permission", "answer", "1", "allow"}, 3);

    // Hostile text reaches the agent verbatim, as data.
    h.spawn_acp("a1", {"--permissions", "deny"});
    std::string hostile = "say '\"; $(touch pwned) `id` é 日本 \\n";
    auto [code, doc] = h.prompt_wait("a1", hostile);
    CHECK(code == 0);
    CHECK(h.said("a1").find("'\"; $(touch pwned) `id` é 日本 \\n") != std::string::npos);
    CHECK(!fs::exists(h.env.dir() / "pwned"));
    // The policy deny answers by itself, with the reject option, and logs it.
    h.prompt_wait("a1", "permission edit");
    h.wait_said("a1", "permission: reject");
    CHECK(h.ok({"permission", "list", "--all"}).empty());
    CHECK(!h.activity("acp_activity").empty());
    // Garbage on the wire ends that agent with a clear reason; the home goes on.
    auto [code2, doc2] = h.prompt_wait("a1", "garbage");
    CHECK(code2 == 1);
    CHECK_THAT(doc2["error"].get<std::string>(), Catch::Contains("connection ended"));
    h.wait_terminated("a1");
    CHECK(h.ok({"agents"}).size() == 1);
    h.ok({"kill-agent", "p1", "--force"});
    h.check_nothing_left();
}

TEST_CASE("acp: an agent that ignores cancel is ended after 10 s, its terminal with it", "[acp]") {
    if (!acp_peer_ready()) return;
    AcpHome h("acp-ignore");
    h.spawn_acp("a1");
    h.ok({"prompt", "a1", "terminal - sleep 600"});
    REQUIRE(eventually([&] { return h.ok({"shell", "list"}).size() == 1; }, bound(15000)));
    CHECK(h.ok({"cancel", "a1"})["cancelled"] == true);
    // The scripted agent waits for its terminal whatever comes: the host ends it at the deadline.
    auto gone = h.wait_terminated("a1", 40000);
    CHECK(gone["acp"]["state"] == "ended");
    CHECK_THAT(gone["acp"]["endReason"].get<std::string>(), Catch::Contains("session/cancel"));
    CHECK(eventually([&] { return h.ok({"shell", "list"}).empty(); }));
    h.check_nothing_left();
}

TEST_CASE("acp: an agent that asks for authentication, one that answers another protocol version",
          "[acp]") {
    if (!acp_peer_ready()) return;
    AcpHome h("acp-auth");
    // needs_auth: recorded with its methods, the leader told, prompts refused.
    h.ok(
        {"spawn", "a1", "--acp", "--env", h.mark.entry(), "--", "node", peer().string(), "--auth"});
    REQUIRE(eventually([&] { return h.acp("a1")["state"] == "needs_auth"; }, bound(20000)));
    CHECK(h.acp("a1")["authMethods"][0]["id"].is_string());
    auto told = h.ok({"inbox", "--type", "acp_needs_auth", "--wait", "10s"});
    REQUIRE(told.size() == 1);
    CHECK(told[0]["data"]["agent"] == "a1");
    team::test::check_refused(h, {"prompt", "a1", "say hi"}, 4);

    // A protocol version we did not offer: the agent is ended, with the reason.
    h.ok({"spawn", "a2", "--acp", "--env", h.mark.entry(), "--", "node", peer().string(),
          "--version", "2"});
    auto gone = h.wait_terminated("a2", 20000);
    CHECK(gone["acp"]["state"] == "ended");
    CHECK_THAT(gone["acp"]["endReason"].get<std::string>(), Catch::Contains("protocol version"));
    h.ok({"kill-agent", "a1", "--force"});
    h.check_nothing_left();
}

// SPEC 19 for an ACP agent: after a reboot, `team resume` starts its host again, which loads its
// session with session/load when the agent offers it. The agent replays the conversation before
// its reply; the transcript kept from before is not written again, and the new turns follow it.
TEST_CASE("acp: a resume loads the agent's session: its conversation goes on, stored once",
          "[acp]") {
    if (!acp_peer_ready()) return;
    AcpHome h("acp-resume");
    fs::path kept = h.env.dir() / "acp-sessions";
    fs::create_directories(kept);
    h.spawn_acp("a1", {}, {"--load-sessions", kept.string()});
    std::string session = h.acp("a1")["sessionId"];
    auto [code, doc] = h.prompt_wait("a1", "say remember the walrus");
    REQUIRE(code == 0);
    auto first = h.records("a1");
    REQUIRE(h.kinds(first) == std::vector<std::string>{"prompt", "agent_message", "stop"});

    h.reboot();
    auto outcome = h.resume_one("a1");
    CHECK(outcome["outcome"] == "resumed");
    CHECK(outcome["conversation"] == "acp");
    CHECK(outcome["conversationId"] == session);
    CHECK(h.acp("a1")["sessionId"] == session);
    auto loaded = h.activity("acp_session_loaded");
    REQUIRE(loaded.size() == 1);
    CHECK(loaded[0]["details"]["sessionId"] == session);
    // The replay: the earlier prompt and what the agent said to it, dropped.
    CHECK(loaded[0]["details"]["replayedUpdates"] == 2);
    CHECK(h.activity("acp_session_fresh").empty());

    // The agent has the earlier conversation; the stored transcript has it once, then the new turn.
    auto [code2, doc2] = h.prompt_wait("a1", "history");
    REQUIRE(code2 == 0);
    auto records = h.records("a1");
    REQUIRE(h.kinds(records) == std::vector<std::string>{"prompt", "agent_message", "stop",
                                                         "prompt", "agent_message", "stop"});
    for (std::size_t i = 0; i < first.size(); ++i) CHECK(records[i] == first[i]);
    CHECK(records[4]["text"] == "history: 1 earlier turns: say remember the walrus");

    // A session the agent cannot load any more (its history gone): a new session, said so in
    // the activity, and the agent works without the earlier conversation.
    fs::remove(kept / (session + ".json"));
    h.reboot();
    outcome = h.resume_one("a1");
    CHECK(outcome["outcome"] == "resumed");
    auto fresh = h.activity("acp_session_fresh");
    REQUIRE(fresh.size() == 1);
    CHECK(fresh[0]["details"]["loadFrom"] == session);
    CHECK_THAT(fresh[0]["details"]["reason"].get<std::string>(),
               Catch::Contains("session/load failed"));
    std::string now = h.acp("a1")["sessionId"];
    CHECK(now != session);
    CHECK(fresh[0]["details"]["sessionId"] == now);
    auto [code3, doc3] = h.prompt_wait("a1", "history");
    REQUIRE(code3 == 0);
    records = h.records("a1");
    REQUIRE(records.size() == 9);
    CHECK(records[7]["text"] == "history: 0 earlier turns");
    h.ok({"kill-agent", "a1", "--force"});
    h.check_nothing_left();
}

TEST_CASE("acp: a resume of an agent without session/load starts it fresh, and it works", "[acp]") {
    if (!acp_peer_ready()) return;
    AcpHome h("acp-resume-fresh");
    h.spawn_acp("a1");
    std::string session = h.acp("a1")["sessionId"];
    auto [code, doc] = h.prompt_wait("a1", "say before the reboot");
    REQUIRE(code == 0);

    h.reboot();
    auto outcome = h.resume_one("a1");
    CHECK(outcome["outcome"] == "fresh");
    CHECK(outcome["why"] == "the agent does not offer session/load");
    auto [code2, doc2] = h.prompt_wait("a1", "say after the reboot");
    CHECK(code2 == 0);
    CHECK(doc2["stopReason"] == "end_turn");
    // The transcript from before is kept, the new session's after it.
    auto records = h.records("a1");
    REQUIRE(records.size() == 6);
    CHECK(records[1]["text"] == "before the reboot");
    CHECK(records[4]["text"] == "after the reboot");
    CHECK(h.activity("acp_session_loaded").empty());
    h.ok({"kill-agent", "a1", "--force"});
    h.check_nothing_left();
}
