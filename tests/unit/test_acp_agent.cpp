// acp/ against a real ACP agent: tests/acp/agent.mjs, a scripted agent on the official
// TypeScript SDK, run by node as the client's child. Tagged [acp] (ctest label `acp`); when
// tests/acp/node_modules is missing (scripts/setup installs it) each test says so and passes
// as skipped (ctest's SKIP_REGULAR_EXPRESSION).
#include <signal.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>

#include "acp/client.hpp"
#include "base/error.hpp"
#include "proc/terminate.hpp"
#include "tests/support/process.hpp"

using namespace team::acp;
using namespace std::chrono_literals;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

fs::path peer_dir() {
    return team::test::source_dir() / "tests" / "acp";
}

// True when the scripted agent can run; otherwise the skip line ctest looks for.
bool peer_ready() {
    if (fs::exists(peer_dir() / "node_modules" / "@agentclientprotocol" / "sdk" / "package.json"))
        return true;
    WARN("acp: skipped, tests/acp/node_modules is missing (scripts/setup installs it)");
    return false;
}

// A host that records what it is told, and lets the test wait for it.
struct TestHost final : Host {
    LocalTerminals local;
    std::mutex mutex;
    std::condition_variable changed;
    std::vector<PermissionRequest> asked;
    std::vector<std::pair<std::int64_t, std::string>> closed;
    std::vector<std::string> activities, ends;
    std::vector<AuthMethod> auth;
    std::vector<std::chrono::steady_clock::time_point> messages;  // when each message chunk came

    void permission_requested(const PermissionRequest& r) override {
        note([&] { asked.push_back(r); });
    }
    void permission_closed(std::int64_t n, const std::string& how) override {
        note([&] { closed.emplace_back(n, how); });
    }
    Terminals& terminals() override { return local; }
    void activity(const std::string& what) override {
        note([&] { activities.push_back(what); });
    }
    void needs_auth(const std::vector<AuthMethod>& m) override {
        note([&] { auth = m; });
    }
    void ended(const std::string& reason) override {
        note([&] { ends.push_back(reason); });
    }
    void updated(const Update& u) override {
        auto now = std::chrono::steady_clock::now();
        if (u.kind == UpdateKind::agent_message) note([&] { messages.push_back(now); });
    }

    template <class F>
    void note(F f) {
        std::lock_guard lock(mutex);
        f();
        changed.notify_all();
    }
    PermissionRequest wait_asked(std::size_t count) {
        std::unique_lock lock(mutex);
        REQUIRE(changed.wait_for(lock, 30s, [&] { return asked.size() >= count; }));
        return asked[count - 1];
    }
    std::string wait_end() {
        std::unique_lock lock(mutex);
        REQUIRE(changed.wait_for(lock, 30s, [&] { return !ends.empty(); }));
        return ends.front();
    }
};

struct Rig {
    team::test::TempDir tmp;
    fs::path root = fs::canonical(tmp.path());
    TestHost host;
    std::unique_ptr<Client> client;

    explicit Rig(std::vector<std::string> flags = {}, Policy policy = Policy::ask,
                 std::vector<std::string> command = {},
                 std::optional<std::string> load_session = std::nullopt) {
        ClientOptions o;
        o.command = command.empty()
                        ? std::vector<std::string>{"node", (peer_dir() / "agent.mjs").string()}
                        : command;
        o.command.insert(o.command.end(), flags.begin(), flags.end());
        o.cwd = root;
        o.policy = policy;
        o.mcp_servers = json::array(
            {{{"name", "team"}, {"command", "team"}, {"args", {"mcp"}}, {"env", json::array()}}});
        o.cancel_deadline = 1500ms;
        o.close_grace = 500ms;
        o.load_session = std::move(load_session);
        client = std::make_unique<Client>(std::move(o), host);
    }
    TurnResult turn(const std::string& script) {
        int n = client->prompt(script);
        auto r = client->wait_turn(n, 60s);
        REQUIRE(r);
        return *r;
    }
    // The text of the last agent message of the transcript.
    std::string said() {
        json records = client->transcript_records();
        for (auto it = records.rbegin(); it != records.rend(); ++it)
            if ((*it)["kind"] == "agent_message") return (*it)["text"];
        return "";
    }
};

std::size_t alive_with(const std::string& marker) {
    team::proc::TreeTarget t;
    t.marker = {marker};
    return team::proc::find_tree(t).size();
}

}  // namespace

namespace {
long rss_kib() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
    return 0;
}
}  // namespace

TEST_CASE("acp: the handshake, turns in order with their stop reasons, a queued prompt", "[acp]") {
    if (!peer_ready()) return;
    long before = rss_kib();
    Rig rig;
    auto started = std::chrono::steady_clock::now();
    rig.client->start();
    WARN("acp: start and handshake in "
         << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                  started)
                .count()
         << " ms; the client's resident memory at idle +" << rss_kib() - before << " KiB");
    CHECK(rig.client->state() == ClientState::ready);
    CHECK(rig.client->session_id() == "session-1");
    CHECK(rig.client->agent_info()["name"] == "team-acp-test-agent");

    int first =
        rig.client->prompt("echo-session\nplan read|write\ntool c1 read Read a file\nsay done");
    int second = rig.client->prompt("say second\nstop max_tokens");  // queued behind the first
    auto r2 = rig.client->wait_turn(second, 60s);
    auto r1 = rig.client->wait_turn(first, 0ms);
    REQUIRE(r1);
    REQUIRE(r2);
    CHECK(r1->stop_reason == "end_turn");
    CHECK(r2->stop_reason == "max_tokens");

    json records = rig.client->transcript_records();
    json session = json::parse(records[1]["text"].get<std::string>());
    CHECK(session["cwd"] == rig.root.string());
    CHECK(session["mcpServers"][0]["name"] == "team");
    std::string text = rig.client->transcript_text();
    CHECK(text.find("plan:\n  [x] read\n  [ ] write\n") != std::string::npos);
    CHECK(text.find("[read] Read a file — completed\n    c1 done\n") != std::string::npos);
    // The second turn starts after the first one's stop: in that order in the transcript.
    CHECK(text.find("— end_turn\n> say second") != std::string::npos);
    CHECK(text.find("second\n— max_tokens") != std::string::npos);
}

TEST_CASE("acp: unknown update kinds, fields and methods, and _meta tolerated", "[acp]") {
    if (!peer_ready()) return;
    Rig rig;
    rig.client->start();
    auto r = rig.turn("unknown-update\ncall x/unknown_method\nmode plan\nusage 5 100");
    CHECK(r.stop_reason == "end_turn");
    json records = rig.client->transcript_records();
    CHECK(records[1]["kind"] == "other");
    CHECK(records[1]["updateKind"] == "future_kind");
    CHECK(records[2]["text"] ==
          "still readerror -32601");  // a chunk with unknown fields, then the call's answer
    CHECK(rig.client->transcript_text().find("mode: plan") != std::string::npos);
}

TEST_CASE("acp: allow, deny picks the reject option, cancel answers cancelled", "[acp]") {
    if (!peer_ready()) return;
    Rig rig;
    rig.client->start();
    using K = PermissionChoice::Kind;

    int t1 = rig.client->prompt("permission edit");
    auto asked = rig.host.wait_asked(1);
    CHECK(asked.tool_call.kind == std::optional<std::string>("edit"));
    REQUIRE(asked.options.size() == 4);
    CHECK_THROWS_AS(rig.client->answer_permission(asked.number, {K::option, "nope"}), team::Error);
    auto answered = std::chrono::steady_clock::now();
    rig.client->answer_permission(asked.number, {K::allow, ""});
    CHECK(rig.client->wait_turn(t1, 30s)->stop_reason == "end_turn");
    CHECK(rig.said() == "permission: allow");
    {
        // The answer's round trip: from answer_permission to the agent's first chunk after it.
        std::lock_guard lock(rig.host.mutex);
        auto after = std::find_if(rig.host.messages.begin(), rig.host.messages.end(),
                                  [&](auto t) { return t >= answered; });
        REQUIRE(after != rig.host.messages.end());
        WARN("acp: permission answer -> the agent's next message in "
             << std::chrono::duration_cast<std::chrono::microseconds>(*after - answered).count()
             << " us");
    }

    int t2 = rig.client->prompt("permission execute");
    asked = rig.host.wait_asked(2);
    rig.client->answer_permission(asked.number, {K::deny, ""});
    CHECK(rig.client->wait_turn(t2, 30s)->stop_reason == "end_turn");
    CHECK(rig.said() == "permission: reject");  // a deny is the agent's reject option

    int t3 = rig.client->prompt("permission delete");
    asked = rig.host.wait_asked(3);
    auto started = std::chrono::steady_clock::now();
    CHECK(rig.client->cancel());
    auto r3 = rig.client->wait_turn(t3, 30s);
    auto took = std::chrono::steady_clock::now() - started;
    CHECK(r3->stop_reason == "cancelled");
    CHECK(rig.said() == "permission: cancelled");
    CHECK(rig.client->open_permissions().empty());
    CHECK_THROWS_AS(rig.client->answer_permission(asked.number, {K::allow, ""}),
                    team::Error);  // gone
    std::lock_guard lock(rig.host.mutex);
    REQUIRE_FALSE(rig.host.closed.empty());
    CHECK(rig.host.closed.back() == std::make_pair(asked.number, std::string("cancelled")));
    WARN("acp: cancel -> cancelled stop reason in "
         << std::chrono::duration_cast<std::chrono::microseconds>(took).count() << " us");
}

TEST_CASE("acp: the policies answer by themselves", "[acp]") {
    if (!peer_ready()) return;
    SECTION("allow-reads allows a read and asks for an edit") {
        Rig rig({}, Policy::allow_reads);
        rig.client->start();
        CHECK(rig.turn("permission read").stop_reason == "end_turn");
        CHECK(rig.said() == "permission: allow");
        int t = rig.client->prompt("permission edit");
        auto asked = rig.host.wait_asked(1);
        rig.client->answer_permission(asked.number, {PermissionChoice::Kind::deny_always, ""});
        CHECK(rig.client->wait_turn(t, 30s)->stop_reason == "end_turn");
        CHECK(rig.said() == "permission: reject-always");
        std::lock_guard lock(rig.host.mutex);
        REQUIRE(rig.host.activities.size() == 1);
        CHECK(rig.host.activities[0].find("by the policy allow-reads") != std::string::npos);
    }
    SECTION("deny rejects, never cancels") {
        Rig rig({}, Policy::deny);
        rig.client->start();
        CHECK(rig.turn("permission edit").stop_reason == "end_turn");
        CHECK(rig.said() == "permission: reject");
    }
}

TEST_CASE("acp: terminals: exit code, signal, tail on a multibyte character, release", "[acp]") {
    if (!peer_ready()) return;
    Rig rig;
    rig.client->start();
    rig.turn("terminal - sh -c echo${IFS}$ACP_TEST;exit${IFS}3");
    json exit3 = json::parse(rig.said());
    CHECK(exit3 ==
          json{{"exitCode", 3}, {"signal", nullptr}, {"output", "1\n"}, {"truncated", false}});

    rig.turn("terminal - sh -c kill$IFS-TERM$IFS$$");
    json signalled = json::parse(rig.said());
    CHECK(signalled["exitCode"] == nullptr);
    CHECK(signalled["signal"] == "SIGTERM");

    // "aé€": 6 bytes; the last 4 start inside é, so only € is handed back.
    rig.turn("terminal 4 printf a\\303\\251\\342\\202\\254");
    json tail = json::parse(rig.said());
    CHECK(tail["output"] == "€");
    CHECK(tail["truncated"] == true);

    rig.turn("terminal-kill sleep 600");
    CHECK(json::parse(rig.said())["signal"] == "SIGTERM");

    rig.turn("terminal-release sleep 600");
    CHECK(rig.said() == "released: -32002");
    CHECK(rig.host.local.size() == 0);  // nothing held, nothing running
}

TEST_CASE("acp: fs inside the root is served, outside refused", "[acp]") {
    if (!peer_ready()) return;
    Rig rig;
    team::test::TempDir other;
    std::ofstream(other.path() / "secret") << "s";
    std::ofstream(rig.root / "notes") << "one\ntwo\nthree\n";
    rig.client->start();
    rig.turn("read " + (rig.root / "notes").string() + " 2 1");
    CHECK(rig.said() == "two\n");
    rig.turn("write " + (rig.root / "out/new.txt").string() + " hello there");
    CHECK(rig.said() == "written");
    std::ifstream written(rig.root / "out/new.txt");
    CHECK(std::string(std::istreambuf_iterator<char>(written), {}) == "hello there");
    rig.turn("read " + (fs::canonical(other.path()) / "secret").string());
    CHECK(rig.said().find("outside the agent's roots") != std::string::npos);
    rig.turn("write " + (fs::canonical(other.path()) / "x").string() + " no");
    CHECK(rig.said().find("error -32602") == 0);
    CHECK_FALSE(fs::exists(other.path() / "x"));
}

TEST_CASE("acp: an agent that ignores cancel is ended after the deadline", "[acp]") {
    if (!peer_ready()) return;
    Rig rig;
    rig.client->start();
    int t = rig.client->prompt("say working\nignore-cancel");
    REQUIRE(rig.client->wait_turn(t, 300ms) == std::nullopt);
    CHECK(rig.client->cancel());
    auto r = rig.client->wait_turn(t, 30s);
    REQUIRE(r);
    CHECK(r->error.find("did not end its turn within 1500 ms of session/cancel") !=
          std::string::npos);
    CHECK(rig.client->state() == ClientState::ended);
    CHECK(alive_with(rig.client->marker()) == 0);
    CHECK_THROWS_AS(rig.client->prompt("say more"), team::Error);
}

TEST_CASE("acp: a crash mid-turn, garbage and a line over 16 MiB end the connection clearly",
          "[acp]") {
    if (!peer_ready()) return;
    auto ends_with = [](const std::string& script, const std::string& reason) {
        Rig rig;
        rig.client->start();
        int first = rig.client->prompt(script);
        int queued = rig.client->prompt("say never");
        auto r = rig.client->wait_turn(first, 60s);
        REQUIRE(r);
        CHECK(r->error.find(reason) != std::string::npos);
        CHECK(rig.client->wait_turn(queued, 10s)->error.find(reason) != std::string::npos);
        CHECK(rig.host.wait_end().find(reason) != std::string::npos);
        CHECK(rig.client->state() == ClientState::ended);
        CHECK(alive_with(rig.client->marker()) == 0);
    };
    SECTION("crash") {
        ends_with("say partial\ncrash", "agent exited with 3");
    }
    SECTION("garbage") {
        ends_with("garbage\nwait-cancel", "agent sent a line that is not JSON: this is not json");
    }
    SECTION("huge") {
        ends_with("huge\nwait-cancel", "agent sent a line over 16 MiB");
    }
    SECTION("a crash with a permission open expires it") {
        Rig rig;
        rig.client->start();
        int t = rig.client->prompt("permission edit");
        auto asked = rig.host.wait_asked(1);
        ::kill(rig.client->agent_pid(), SIGKILL);
        CHECK(rig.client->wait_turn(t, 30s)->error.find("killed by SIGKILL") != std::string::npos);
        rig.host.wait_end();
        std::lock_guard lock(rig.host.mutex);
        REQUIRE_FALSE(rig.host.closed.empty());
        CHECK(rig.host.closed.back() == std::make_pair(asked.number, std::string("expired")));
    }
}

TEST_CASE("acp: authentication needed, and a protocol version we did not offer", "[acp]") {
    if (!peer_ready()) return;
    {
        Rig rig({"--auth"});
        rig.client->start();
        CHECK(rig.client->state() == ClientState::needs_auth);
        REQUIRE(rig.host.auth.size() == 1);
        CHECK(rig.host.auth[0].id == "token");
        CHECK_THROWS_AS(rig.client->prompt("say hi"), team::Error);
        rig.client->authenticate("token");
        CHECK(rig.client->state() == ClientState::ready);
        CHECK(rig.turn("say hi").stop_reason == "end_turn");
    }
    {
        Rig rig({"--version", "2"});
        CHECK_THROWS_WITH(rig.client->start(), Catch::Contains("protocol version 2; we offered 1"));
        CHECK(rig.client->state() == ClientState::ended);
        CHECK(alive_with(rig.client->marker()) == 0);
    }
    {
        Rig rig({}, Policy::ask, {"no-such-agent-program"});
        CHECK_THROWS_WITH(rig.client->start(),
                          Catch::Contains("cannot run 'no-such-agent-program'"));
    }
}

TEST_CASE("acp: a wrapper that ignores EOF and SIGTERM leaves no orphan after close", "[acp]") {
    if (!peer_ready()) return;
    std::string agent = (peer_dir() / "agent.mjs").string();
    Rig rig({}, Policy::ask,
            {"sh", "-c", "trap '' TERM; node '" + agent + "' --ignore-eof; sleep 600"});
    rig.client->start();
    CHECK(rig.turn("say alive").stop_reason == "end_turn");
    CHECK(alive_with(rig.client->marker()) >= 3);  // sh, node, and node's detached sleep
    rig.client->close();
    CHECK(alive_with(rig.client->marker()) == 0);
    CHECK(rig.client->state() == ClientState::ended);
}

// A resume's session/load (SPEC 19): the scripted agent with --load-sessions keeps each session's
// history in a directory, so a second agent process loads what the first one was told.
TEST_CASE("acp: session/load when offered, its replay dropped, else a new session and why",
          "[acp]") {
    if (!peer_ready()) return;
    team::test::TempDir kept;
    std::vector<std::string> loads{"--load-sessions", kept.path().string()};
    std::string id;
    {
        Rig rig(loads);
        rig.client->start();
        CHECK(rig.client->agent_capabilities()["loadSession"] == true);
        CHECK(!rig.client->session_loaded());
        CHECK(rig.client->why_fresh().empty());
        id = rig.client->session_id();
        CHECK(rig.turn("say remember the walrus").ok());
    }
    {
        Rig rig(loads, Policy::ask, {}, id);
        rig.client->start();
        REQUIRE(rig.client->session_loaded());
        CHECK(rig.client->state() == ClientState::ready);
        CHECK(rig.client->session_id() == id);
        CHECK(rig.client->why_fresh().empty());
        // The replay (the prompt and its answer) neither in the transcript nor told to the host.
        CHECK(rig.client->replayed_updates() == 2);
        CHECK(rig.client->transcript_records().empty());
        {
            std::lock_guard lock(rig.host.mutex);
            CHECK(rig.host.messages.empty());
        }
        CHECK(rig.turn("history").ok());
        CHECK(rig.said() == "history: 1 earlier turns: say remember the walrus");
    }
    {
        // A session the agent does not know: session/load answers an error, a new session.
        Rig rig(loads, Policy::ask, {}, "session-gone");
        rig.client->start();
        CHECK(!rig.client->session_loaded());
        CHECK(rig.client->state() == ClientState::ready);
        CHECK(rig.client->session_id() != "session-gone");
        CHECK_THAT(rig.client->why_fresh(), Catch::Contains("session/load failed"));
        CHECK(rig.turn("history").ok());
        CHECK(rig.said() == "history: 0 earlier turns");
    }
    {
        // An agent that does not offer it is never asked.
        Rig rig({}, Policy::ask, {}, id);
        rig.client->start();
        CHECK(!rig.client->session_loaded());
        CHECK(rig.client->state() == ClientState::ready);
        CHECK(rig.client->why_fresh() == "the agent does not offer session/load");
    }
}
