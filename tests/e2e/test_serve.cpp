// team serve (SPEC 13) against the running server: each test starts `team serve` on a free port
// of its own temporary home (its own tmux server), talks to it over plain sockets
// (tests/support/http_client.hpp), and ends it.

#include <catch2/catch.hpp>
#include <filesystem>

#include "tests/support/agents_home.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/http_client.hpp"

using team::test::AgentsHome;
using team::test::bound;
using team::test::connect_to;
using team::test::connect_unix;
using team::test::EventStream;
using team::test::eventually;
using team::test::exchange;
using team::test::Headers;
using team::test::parse_response;
using team::test::raw_request;
using team::test::read_until;
using team::test::request_text;
using team::test::response_complete;
using team::test::Serve;
using Json = nlohmann::json;

namespace {

// The JSON of `team --json ARGS` as the command line prints it, whatever its exit.
Json cli_json(const AgentsHome& h, std::vector<std::string> args) {
    auto r = h.json_run(std::move(args));
    INFO("stdout: " << r.out << " stderr: " << r.err);
    return r.json();
}

// The activity log's length, to prove that a refused request changed nothing.
// The entries a request could have written: not the watchers' observations (an agent's activity,
// a worktree's state), which come in the background whatever the request does.
std::size_t activity_count(const AgentsHome& h) {
    std::size_t n = 0;
    for (const auto& e : cli_json(h, {"activity", "--all"})) {
        if (e["type"] != "agent_state" && e["type"] != "worktree_state") ++n;
    }
    return n;
}

}  // namespace

TEST_CASE(
    "serve: the token by Bearer or by the cookie of /?token= else 401 and the Host and CSRF checks",
    "[serve][sanitize]") {
    AgentsHome h("srv-auth");
    Serve s(h);
    int port = s.port();

    // No token, a wrong one: 401 in SPEC 1.4's shape.
    auto r = s.request("GET", "/api/teams", "", {}, false);
    CHECK(r.status == 401);
    CHECK(r.json()["code"] == "refused");
    r = s.request("GET", "/api/teams", "", {{"Authorization", "Bearer " + std::string(64, 'a')}},
                  false);
    CHECK(r.status == 401);

    r = s.get("/api/teams");
    CHECK(r.status == 200);
    CHECK(r.header("cache-control") == "no-store");
    CHECK(r.header("content-security-policy") == "default-src 'self'");
    CHECK(r.header("x-content-type-options") == "nosniff");
    CHECK(r.header("referrer-policy") == "no-referrer");

    // The page opened with the token: a cookie, then the address without it.
    auto open = raw_request(port, request_text("GET", "/?token=" + s.token(), {}, "", port));
    CHECK(open.status == 303);
    CHECK(open.header("location") == "/");
    auto cookie = open.header("set-cookie");
    CHECK(cookie.find("HttpOnly") != std::string::npos);
    CHECK(cookie.find("SameSite=Strict") != std::string::npos);
    std::string pair = cookie.substr(0, cookie.find(';'));
    r = s.request("GET", "/api/teams", "", {{"Cookie", pair}}, false);
    CHECK(r.status == 200);
    auto page = s.request("GET", "/", "", {{"Cookie", pair}}, false);
    CHECK(page.status == 200);
    CHECK(page.header("content-type").find("text/html") == 0);
    CHECK(raw_request(port, request_text("GET", "/?token=nope", {}, "", port)).status == 401);

    // Another site's name for us (DNS rebinding): 403.
    r = s.request("GET", "/api/teams", "", {{"Host", "evil.example:" + std::to_string(port)}});
    CHECK(r.status == 403);
    // A change without the CSRF header: 403, and nothing made.
    auto no_csrf = raw_request(
        port, request_text("POST", "/api/teams", s.auth(), R"({"name": "made"})", port));
    CHECK(no_csrf.status == 403);
    CHECK(cli_json(h, {"list"}).size() == 1);
    s.stop();
    h.finish();
}

TEST_CASE("serve: the same JSON as the command line for list and status and agents",
          "[serve][sanitize]") {
    AgentsHome h("srv-same");
    h.spawn("w1", {"sleep", "300"});
    Serve s(h);
    auto same = [&](const std::string& target, std::vector<std::string> args) {
        auto r = s.get(target);
        INFO(target << " -> " << r.status << " " << r.body);
        CHECK(r.status == 200);
        CHECK(team::test::steady(r.json()) == team::test::steady(cli_json(h, std::move(args))));
    };
    same("/api/teams", {"list"});
    same("/api/teams/srv-same", {"status", "srv-same"});
    same("/api/teams/srv-same/agents", {"agents"});
    same("/api/teams/srv-same/agents?all=true", {"agents", "--all"});
    same("/api/teams/srv-same/tasks", {"task", "list"});
    auto one = s.get("/api/teams/srv-same/agents/w1");
    CHECK(one.status == 200);
    CHECK(one.json()["agentId"] == "w1@srv-same");
    // The one agent is its row of the list, with all it carries (host, and a worktree's or an
    // ACP session's object when it has one).
    for (const auto& row : cli_json(h, {"agents"})) {
        if (row["name"] == "w1") CHECK(team::test::steady(one.json()) == team::test::steady(row));
    }
    // A refusal in the same shape and code as the command line's.
    auto r = s.get("/api/teams/srv-same/agents/nobody");
    CHECK(r.status == 404);
    CHECK(r.json()["code"] == "not_found");
    CHECK(s.get("/api/teams/nosuch").json() == cli_json(h, {"status", "nosuch"}));
    s.stop();
    h.finish();
}

TEST_CASE("serve: every route's happy path and a refusal with its status and code",
          "[serve][sanitize]") {
    AgentsHome h("srv-routes");
    Serve s(h);
    const std::string t = "/api/teams/srv-routes";

    auto made = s.post("/api/teams", {{"name", "srv-other"}, {"cwd", h.env.dir().string()}});
    CHECK(made.status == 200);
    CHECK(made.json()["leader"] == "leader@srv-other");
    CHECK(s.post("/api/teams", {{"name", "srv-other"}}).status == 409);  // exists
    CHECK(s.post("/api/teams", {{"name", "bad name"}}).json()["code"] == "usage");
    CHECK(s.request("DELETE", "/api/teams/srv-other").status == 200);
    CHECK(s.request("DELETE", "/api/teams/srv-other").status == 404);

    // Tasks: add, list, show, update, claim, done.
    auto task = s.post(t + "/tasks", {{"subject", "write \"docs\"; $(x)"}});
    REQUIRE(task.status == 200);
    std::string id = task.json()["id"];
    CHECK(s.get(t + "/tasks/" + id).json()["subject"] == "write \"docs\"; $(x)");
    auto updated = s.request("PATCH", t + "/tasks/" + id, R"({"description": "more"})");
    CHECK(updated.status == 200);
    CHECK(updated.json()["description"] == "more");
    CHECK(s.post(t + "/tasks/" + id + "/claim", Json::object()).json()["status"] == "in_progress");
    auto twice = s.post(t + "/tasks/" + id + "/claim", Json::object());
    CHECK(twice.status == 409);  // in progress already
    CHECK(twice.json()["code"] == "refused");
    CHECK(s.post(t + "/tasks/" + id + "/done", Json::object()).json()["status"] == "completed");
    CHECK(s.get(t + "/tasks/99").status == 404);
    CHECK(s.request("PATCH", t + "/tasks/" + id, R"({"status": "nonsense"})").status == 400);

    // Agents: spawn, get, logs, prompt, kill; the leader cannot be killed (409).
    auto spawned =
        s.post(t + "/agents", {{"name", "cat1"}, {"command", {"cat"}}, {"env", {h.mark.entry()}}});
    INFO(spawned.body);
    REQUIRE(spawned.status == 200);
    CHECK(s.get(t + "/agents/cat1").json()["status"] == "active");
    CHECK(s.post(t + "/agents/cat1/prompt", {{"text", "hello from the web"}}).status == 200);
    CHECK(eventually([&] {
        auto logs = s.get(t + "/agents/cat1/logs");
        return logs.status == 200 && logs.body.find("hello from the web") != std::string::npos;
    }));
    CHECK(s.post(t + "/agents/leader/kill", Json::object()).status == 409);
    CHECK(s.post(t + "/agents/nobody/kill", Json::object()).status == 404);
    auto killed = s.post(t + "/agents/cat1/kill", {{"force", true}, {"grace", "1s"}});
    CHECK(killed.status == 200);
    CHECK(killed.json()["phase"] == "force_killed");
    CHECK(s.get(t + "/shutdowns").status == 200);

    // Messages: send to the leader, read the inbox; an unknown recipient is 404.
    CHECK(s.post(t + "/messages", {{"to", "leader"}, {"text", "note"}}).status == 200);
    auto inbox = s.get(t + "/messages?agent=leader&unread=true");
    CHECK(inbox.status == 200);
    CHECK(inbox.json().back()["text"] == "note");
    CHECK(s.post(t + "/messages", {{"to", "ghost"}, {"text", "x"}}).status == 404);

    // Shells: start, list, status, output, kill.
    auto shell = s.post(t + "/shells", {{"command", {"sh", "-c", "echo out; sleep 60"}}});
    REQUIRE(shell.status == 200);
    std::string sid = shell.json()["shell_id"];
    CHECK(s.get(t + "/shells").json().size() == 1);
    CHECK(s.get(t + "/shells/" + sid).json()["status"] == "running");
    CHECK(eventually(
        [&] { return s.get(t + "/shells/" + sid + "/output").json()["output"] == "out\n"; }));
    auto shell_kill = s.post(t + "/shells/" + sid + "/kill", {{"signal", "SIGKILL"}});
    CHECK(shell_kill.status == 200);
    CHECK(shell_kill.json()["success"] == true);
    auto unknown_shell = s.post(t + "/shells/bg-000000/kill", Json::object());
    CHECK(unknown_shell.status == 404);
    CHECK(unknown_shell.json()["error"] == "Shell not found: bg-000000");

    // Activity, marked as asked through the web.
    auto activity = s.get(t + "/activity?type=task_created");
    REQUIRE(activity.json().size() == 1);
    CHECK(activity.json()[0]["details"]["via"] == "web");
    CHECK(s.get("/api/activity").status == 200);

    // Wrong method, unknown resource, malformed values.
    CHECK(s.request("PUT", "/api/teams").status == 405);
    CHECK(s.get("/api/nothing").json()["code"] == "not_found");
    CHECK(s.get(t + "/messages?limit=zero").status == 400);

    // Teardown ends the team.
    auto down = s.post(t + "/teardown", {{"grace", "1s"}});
    CHECK(down.status == 200);
    s.stop();
    h.finish();
}

TEST_CASE("serve: the execution routes answer by the operations they name", "[serve][sanitize]") {
    AgentsHome h("srv-exec");
    Serve s(h);
    // Until the operations exist they are unknown (404); once they do, an unknown id is 404 too.
    auto r = s.post("/api/executions/bg-000000/terminate", Json::object());
    CHECK(r.status == 404);
    CHECK(r.json()["code"] == "not_found");
    CHECK(s.get("/api/executions/bg-000000/status").status == 404);
    auto running = s.get("/api/executions/running");
    CHECK((running.status == 200 || running.status == 404));
    s.stop();
    h.finish();
}

TEST_CASE("serve: events of commits by other processes resumed with Last-Event-ID",
          "[serve][sanitize]") {
    AgentsHome h("srv-events");
    Serve s(h);
    EventStream stream(s.port(), "/api/events", s.auth());
    CHECK(stream.head().find("text/event-stream") != std::string::npos);

    REQUIRE(h.run({"send", "leader", "from the command line"}).exit_code == 0);
    auto e = stream.next();
    REQUIRE(e);
    CHECK(e->type == "message_sent");
    auto row = Json::parse(e->data);
    CHECK(row["id"] == std::stoll(e->id));
    CHECK(row["team"] == "srv-events");

    REQUIRE(h.run({"create", "srv-events2", "--cwd", h.env.dir().string()}).exit_code == 0);
    auto created = stream.next();
    REQUIRE(created);
    CHECK(created->type == "team_created");

    // Resuming after the first event gives the second, then live ones.
    EventStream resumed(s.port(), "/api/events", s.auth({{"Last-Event-ID", e->id}}));
    auto again = resumed.next();
    REQUIRE(again);
    CHECK(again->id == created->id);
    // A team filter.
    EventStream only(s.port(), "/api/events?team=srv-events2", s.auth());
    REQUIRE(h.run({"task", "add", "one"}).exit_code == 0);
    REQUIRE(h.run({"task", "add", "two"}, {{"TEAM_NAME", "srv-events2"}}).exit_code == 0);
    auto filtered = only.next();
    REQUIRE(filtered);
    CHECK(Json::parse(filtered->data)["team"] == "srv-events2");
    auto live = resumed.next();
    REQUIRE(live);
    CHECK(live->type == "task_created");
    s.stop();
    h.finish();
}

TEST_CASE("serve: garbage and oversized bodies and slow clients do not stop it",
          "[serve][sanitize]") {
    AgentsHome h("srv-robust");
    Serve s(h, {}, {{"TEAM_SERVE_HEADER_TIMEOUT_MS", "500"}});
    int port = s.port();

    auto garbage = raw_request(port, "\x01\x02 nonsense\r\n\r\n");
    CHECK(garbage.status == 400);
    CHECK(raw_request(port, "GET /api/teams HTTP/9.9\r\n\r\n").status == 400);
    CHECK(s.get("/api/teams").status == 200);

    // Over 1 MiB: 413, by its Content-Length or by what is sent.
    std::string big(1024 * 1024 + 10, 'x');
    auto large = s.request("POST", "/api/teams/srv-robust/messages", big);
    CHECK(large.status == 413);
    auto chunked = raw_request(port,
                               "POST /api/teams/srv-robust/messages HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                               "Authorization: Bearer " +
                                   s.token() +
                                   "\r\nX-Team-CSRF: 1\r\n"
                                   "Transfer-Encoding: chunked\r\n\r\n100010\r\n" +
                                   big + "\r\n0\r\n\r\n");
    CHECK(chunked.status == 413);

    // A client that sends half a request and waits: others are answered meanwhile, and it is
    // cut off at the header timeout.
    int slow = connect_to(port);
    REQUIRE(slow >= 0);
    team::test::send_all(slow, "GET /api/teams HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    CHECK(s.get("/api/teams").status == 200);
    auto rest = team::test::read_until(
        slow, [](const std::string&) { return false; }, bound(5000));
    CHECK(rest.empty());  // closed, nothing answered
    char c;
    CHECK(::recv(slow, &c, 1, MSG_DONTWAIT) == 0);
    ::close(slow);

    // Many connections at once.
    std::vector<int> many;
    for (int i = 0; i < 100; ++i) many.push_back(connect_to(port));
    CHECK(s.get("/api/teams").status == 200);
    for (int fd : many) ::close(fd);
    s.stop();
    h.finish();
}

TEST_CASE("serve: hostile strings are refused (400) and change nothing", "[serve][sanitize]") {
    AgentsHome h("srv-hostile");
    Serve s(h);
    auto before_teams = cli_json(h, {"list"});
    auto before = activity_count(h);
    std::vector<std::string> names{"a\"b",
                                   "a;b",
                                   "$(touch x)",
                                   "a\nb",
                                   "ünïcode",
                                   "a b",
                                   std::string(1024 * 1024 - 100, 'n'),
                                   "../etc",
                                   ""};
    for (const auto& name : names) {
        INFO("name of " << name.size() << " bytes");
        auto r = s.post("/api/teams", {{"name", name}});
        CHECK(r.status == 400);
        CHECK(r.json()["code"] == "usage");
        auto spawn =
            s.post("/api/teams/srv-hostile/agents", {{"name", name}, {"command", {"true"}}});
        CHECK(spawn.status == 400);
    }
    // Not JSON, not an object, a value of the wrong type.
    CHECK(s.request("POST", "/api/teams", "{\"name\":").status == 400);
    CHECK(s.request("POST", "/api/teams", "[\"x\"]").status == 400);
    CHECK(s.post("/api/teams", {{"name", 5}}).status == 400);
    CHECK(s.post("/api/teams", {{"name", "ok"}, {"unknown", 1}}).status == 400);
    // A prompt's control characters are refused before any lookup.
    CHECK(s.post("/api/teams/srv-hostile/agents/x/prompt", {{"text", "a\x1b[2Jb"}}).status == 400);
    CHECK(cli_json(h, {"list"}) == before_teams);
    CHECK(activity_count(h) == before);
    CHECK_FALSE(std::filesystem::exists(h.env.dir() / "x"));
    s.stop();
    h.finish();
}

TEST_CASE("serve: a kill through the API ends the agent's whole tree", "[serve][sanitize]") {
    AgentsHome h("srv-kill");
    auto doc = h.spawn("tree", {"sh", "-c", "sleep 300 & setsid sleep 301 & wait"});
    pid_t pid = doc["pid"];
    Serve s(h);
    std::vector<pid_t> tree;
    REQUIRE(eventually([&] {
        tree = h.mark.alive();
        return tree.size() >= 4;  // sh, two sleeps and the pane supervisor at least
    }));
    auto killed =
        s.post("/api/teams/srv-kill/agents/tree/kill", {{"force", true}, {"grace", "1s"}});
    REQUIRE(killed.status == 200);
    CHECK(killed.json()["phase"] == "force_killed");
    CHECK_FALSE(team::test::alive(pid));
    CHECK(s.get("/api/teams/srv-kill/agents/tree").json()["exitReason"] == "force_killed");
    s.stop();
    h.finish();
}

TEST_CASE("serve: SIGTERM stops it within a second with streams and waits open",
          "[serve][sanitize]") {
    AgentsHome h("srv-term");
    Serve s(h);
    EventStream stream(s.port(), "/api/events", s.auth());
    // A request that waits (an inbox wait of a minute) on a thread of its own.
    int waiting = connect_to(s.port());
    team::test::send_all(waiting, request_text("GET", "/api/teams/srv-term/messages?wait=60s",
                                               s.auth(), "", s.port()));
    CHECK(s.get("/api/teams").status == 200);
    double ms = s.terminate();
    CHECK(ms < 1000);
    CHECK(stream.closed_within(1000));
    // The wait was answered before the server went: as a wait that ran out early.
    auto answer = parse_response(read_until(waiting, response_complete, bound(2000)));
    ::close(waiting);
    CHECK(answer.status == 504);
    INFO(answer.body);
    CHECK(Json::parse(answer.body)["code"] == "timeout");
    CHECK(answer.body.find("ended early: the server is stopping") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(h.env.home() / "serve.json"));
    s.stop();
    h.finish();
}

// Issue 38: what the server took is carried out and answered before it stops. A shell kill whose
// shell ignores SIGTERM runs its grace (1 s) to SIGKILL while SIGTERM comes: the kill's answer
// arrives, then the server exits 0, and no process of the shell is left.
TEST_CASE("serve: SIGTERM answers the work under way before it stops", "[serve][sanitize]") {
    AgentsHome h("srv-drain");
    auto got = h.env.home() / "got-term";
    auto started =
        h.json_run({"shell", "start", "--json", "--", "sh", "-c",
                    "trap 'echo term > \"$0\"' TERM; while :; do sleep 0.1; done", got.string()});
    INFO("stdout: " << started.out << " stderr: " << started.err);
    REQUIRE(started.exit_code == 0);
    std::string id = started.json()["shell_id"].get<std::string>();
    Serve s(h);
    int killing = connect_to(s.port());
    std::string body = R"({"timeout":"1s"})";
    Headers headers = s.auth({{"X-Team-CSRF", "1"}, {"Content-Type", "application/json"}});
    team::test::send_all(
        killing, request_text("POST", "/api/teams/srv-drain/shells/" + id + "/kill", headers, body,
                              s.port()));
    // The kill is under way once the shell has had its SIGTERM (and goes on).
    REQUIRE(eventually([&] { return std::filesystem::exists(got); }, bound(5000)));
    s.terminate();
    auto answer = parse_response(read_until(killing, response_complete, bound(3000)));
    ::close(killing);
    INFO(answer.body);
    CHECK(answer.status == 200);
    auto doc = Json::parse(answer.body);
    CHECK(doc["success"] == true);
    CHECK(doc["force_killed"] == true);
    CHECK(cli_json(h, {"shell", "status", id})["status"] == "killed");
    h.finish();
}

TEST_CASE("serve: a port in use is a clear error and --url names the running one",
          "[serve][sanitize]") {
    AgentsHome h("srv-port");
    auto none = h.run({"serve", "--url"});
    CHECK(none.exit_code == 3);
    Serve s(h);
    auto url = h.run({"serve", "--url"});
    CHECK(url.exit_code == 0);
    CHECK(url.out ==
          "http://127.0.0.1:" + std::to_string(s.port()) + "/?token=" + s.token() + "\n");
    // A second server of the same home is refused; one of another home on the same port fails.
    auto again = h.run({"serve", "--listen", "127.0.0.1:0"});
    CHECK(again.exit_code == 4);
    AgentsHome other("srv-port2");
    auto busy = other.run({"serve", "--listen", "127.0.0.1:" + std::to_string(s.port())});
    CHECK(busy.exit_code == 1);
    CHECK(busy.err.find("in use") != std::string::npos);
    auto remote = other.run({"serve", "--listen", "0.0.0.0:0"});
    CHECK(remote.exit_code == 2);
    CHECK(remote.err.find("--allow-remote") != std::string::npos);
    s.terminate();
    CHECK(h.run({"serve", "--url"}).exit_code == 3);
    other.finish();
    s.stop();
    h.finish();
}

TEST_CASE("serve: --unix serves the same API on a private socket and removes it at the end",
          "[serve][sanitize]") {
    AgentsHome h("srv-unix");
    auto socket = h.env.home() / "api.sock";
    Serve s(h, {"--unix", socket.string()});
    REQUIRE(std::filesystem::is_socket(socket));
    auto perms = std::filesystem::status(socket).permissions();
    CHECK((perms & std::filesystem::perms::all) ==
          (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write));
    // A token is asked for here too; with it, the answer is the TCP listener's.
    auto refused =
        exchange(connect_unix(socket), "GET /api/teams HTTP/1.1\r\nHost: localhost\r\n\r\n");
    CHECK(refused.status == 401);
    auto answer = exchange(connect_unix(socket),
                           "GET /api/teams HTTP/1.1\r\nHost: localhost\r\n"
                           "Authorization: Bearer " +
                               s.token() + "\r\n\r\n");
    REQUIRE(answer.status == 200);
    CHECK(answer.json() == s.get("/api/teams").json());
    CHECK(answer.json()[0]["name"] == "srv-unix");
    s.terminate();
    CHECK_FALSE(std::filesystem::exists(socket));
    s.stop();
    h.finish();
}

TEST_CASE("serve: wait and the settings (SPEC 17), the same as the command line, and bad input",
          "[serve]") {
    AgentsHome h("srv-attn");
    Serve s(h);
    const std::string t = "/api/teams/srv-attn";
    const std::map<std::string, std::string> home_env{{"TEAM_NAME", ""}};
    auto put = [&](const std::string& target, const Json& body) {
        return s.request("PUT", target, body.dump());
    };
    auto team_set = put(t + "/config/idle-after", {{"value", "200ms"}});
    INFO(team_set.body);
    CHECK(team_set.status == 200);
    CHECK(team_set.json()["from"] == "team");
    CHECK(team_set.json()["setBy"] == "leader@srv-attn");
    CHECK(put("/api/config/notify", {{"value", "true"}}).json()["from"] == "home");
    CHECK(s.get("/api/config").json() == h.json_run({"config"}, home_env).json());
    CHECK(s.get(t + "/config").json() == cli_json(h, {"config"}));
    CHECK(s.get(t + "/config/idle-after").json() == cli_json(h, {"config", "get", "idle-after"}));

    h.spawn("w1", {"sh", "-c", "echo up; exec sleep 600"});
    auto waited = s.post(t + "/wait", {{"names", {"w1"}}, {"until", "idle"}, {"timeout", "20s"}});
    INFO(waited.body);
    CHECK(waited.status == 200);
    CHECK(waited.json()["reached"] == true);
    // The agents carry it, as the command line's do.
    auto rows = s.get(t + "/agents").json();
    CHECK(team::test::steady(rows) == team::test::steady(cli_json(h, {"agents"})));
    CHECK(rows[0]["activity"]["state"] == "idle");
    auto late =
        s.post(t + "/wait", {{"names", {"w1"}}, {"until", "working"}, {"timeout", "300ms"}});
    CHECK(late.status == 504);
    CHECK(late.json()["code"] == "timeout");
    CHECK(late.json()["reached"] == false);

    // Bad input: its status and code, nothing changed, the server goes on.
    auto before = s.get("/api/config").json();
    CHECK(s.post(t + "/wait", {{"names", {"w1"}}, {"until", "asleep"}}).status == 400);
    CHECK(s.post(t + "/wait", {{"names", {"nobody"}}, {"until", "idle"}}).status == 404);
    CHECK(s.post(t + "/wait", {{"until", "idle"}}).status == 400);
    CHECK(s.post(t + "/wait", {{"names", "w1"}, {"until", "idle"}}).status == 400);
    CHECK(put("/api/config/nope", {{"value", "1"}}).status == 400);
    CHECK(put("/api/config/notify", {{"value", "a\nb"}}).status == 400);
    CHECK(put("/api/config/notify", Json::object()).status == 400);
    CHECK(put(t + "/config/notify", {{"value", "x"}}).status == 400);
    CHECK(put("/api/teams/nosuch/config/idle-after", {{"value", "1s"}}).status == 404);
    CHECK(s.request("PUT", "/api/config/notify", "{not json").status == 400);
    CHECK(s.get("/api/config").json() == before);

    auto removed = s.request("DELETE", t + "/config/idle-after");
    CHECK(removed.json()["removed"] == true);
    CHECK(removed.json()["from"] == "default");
    CHECK(s.request("DELETE", "/api/config/notify").json()["from"] == "unset");
    s.stop();
    h.finish();
}

TEST_CASE("serve: usage and limits (SPEC 18), the same as the command line, and bad input",
          "[serve]") {
    AgentsHome h("srv-usage");
    Serve s(h);
    const std::string t = "/api/teams/srv-usage";
    // A spawn with limits through HTTP, as the command line's.
    auto spawned = s.post(t + "/agents", {{"name", "w1"},
                                          {"command", {"sleep", "600"}},
                                          {"env", {h.mark.entry()}},
                                          {"max_tokens", 1000000},
                                          {"max_cost", "2.50"},
                                          {"max_memory", "1G"},
                                          {"max_runtime", "1h"},
                                          {"limit_grace", "5s"}});
    INFO(spawned.body);
    REQUIRE(spawned.status == 200);
    auto doc = s.get(t + "/usage");
    CHECK(doc.status == 200);
    CHECK(team::test::steady(doc.json()) == team::test::steady(cli_json(h, {"usage"})));
    auto limits = doc.json()["agents"][0]["limits"];
    CHECK(limits["maxTokens"] == 1000000);
    CHECK(limits["maxCost"] == 2.5);
    CHECK(limits["maxMemory"] == 1LL << 30);
    CHECK(limits["maxRuntimeMs"] == 3600000);
    CHECK(limits["limitGraceMs"] == 5000);
    // (`since` is an hour before each answer: a moment apart)
    auto windowed = team::test::steady(s.get(t + "/usage?names=w1&since=1h").json());
    auto cli_windowed = team::test::steady(cli_json(h, {"usage", "w1", "--since", "1h"}));
    CHECK(windowed["since"].is_string());
    windowed.erase("since");
    cli_windowed.erase("since");
    CHECK(windowed == cli_windowed);
    // Bad input: its status, nothing changed, the server goes on.
    auto agents = team::test::steady(cli_json(h, {"agents"}));
    CHECK(s.get(t + "/usage?since=soon").status == 400);
    CHECK(s.get(t + "/usage?names=nobody").status == 404);
    CHECK(s.get("/api/teams/nosuch/usage").status == 404);
    CHECK(s.post(t + "/agents", {{"name", "w2"}, {"command", {"sleep", "1"}}, {"max_cost", "-1"}})
              .status == 400);
    CHECK(s.post(t + "/agents", {{"name", "w2"}, {"command", {"sleep", "1"}}, {"max_memory", "x"}})
              .status == 400);
    CHECK(s.post(t + "/agents", {{"name", "w2"}, {"command", {"sleep", "1"}}, {"max_tokens", 0}})
              .status == 400);
    CHECK(team::test::steady(cli_json(h, {"agents"})) == agents);
    // A team at its max-agents: the spawn refused (409), with the count.
    CHECK(s.request("PUT", t + "/config/max-agents", Json{{"value", "1"}}.dump()).status == 200);
    auto refused = s.post(t + "/agents", {{"name", "w2"}, {"command", {"sleep", "600"}}});
    CHECK(refused.status == 409);
    CHECK_THAT(refused.json()["error"].get<std::string>(), Catch::Contains("max-agents 1"));
    CHECK(s.get(t + "/usage").json()["limits"]["maxAgents"] == 1);
    s.stop();
    h.finish();
}
