// What agents spend, and the limits team holds them to (SPEC 18), end to end on real tmux and
// real processes: a team's max-agents, an agent past its --max-runtime (warned, asked, forced),
// a tree that allocates past its --max-memory, the tokens of an agent's own record counted
// exactly (read again, its reader SIGKILLed mid-read, a truncated last line, a window of
// --since), the agent's own cost over the price table's, and bad input to each.

#include <signal.h>

#include <SQLiteCpp/SQLiteCpp.h>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "tests/support/agents_home.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/probe.hpp"

using team::test::AgentsHome;
using team::test::bound;
using team::test::eventually;
using Env = std::map<std::string, std::string>;
using Json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

const Env kHome{{"TEAM_NAME", ""}};

Json usage_of(const AgentsHome& h, const std::string& name) {
    auto doc = h.ok({"usage", name});
    REQUIRE(doc["agents"].size() == 1);
    return doc["agents"][0];
}

// The leader's messages of one type.
Json messages(const AgentsHome& h, const std::string& type) {
    return h.ok({"inbox", "--type", type});
}

// The agent's numeric record id, as its supervisor knows it.
std::int64_t record_id(const AgentsHome& h, const std::string& name) {
    SQLite::Database db((h.env.home() / "team.db").string());
    SQLite::Statement s(db, R"sql(
        SELECT max(a.id) FROM agents a JOIN teams t ON t.id = a.team_id
        WHERE a.name = ? AND t.name = ?)sql");
    s.bind(1, name);
    s.bind(2, h.team());
    REQUIRE(s.executeStep());
    return s.getColumn(0).getInt64();
}

// A Claude Code transcript: each call one assistant entry per content block (the same id and
// usage), with the user's entries between; `hours_ago` dates them.
struct Transcript {
    fs::path path;
    long long input = 0, output = 0, cache_read = 0, cache_write = 0;
    int calls = 0;

    std::string entry(int n, int block, int hours_ago) const {
        auto at = std::chrono::system_clock::now() - std::chrono::hours(hours_ago);
        auto t = std::chrono::system_clock::to_time_t(at);
        char stamp[32];
        std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S.000Z", std::gmtime(&t));
        Json e = {{"type", "assistant"},
                  {"timestamp", stamp},
                  {"requestId", "req_" + std::to_string(n)},
                  {"message",
                   {{"id", "msg_" + std::to_string(n)},
                    {"model", "claude-sonnet-4-5-20250929"},
                    {"role", "assistant"},
                    {"content", {{{"type", "text"}, {"text", "block " + std::to_string(block)}}}},
                    {"usage",
                     {{"input_tokens", 1000 + 7 * n},
                      {"output_tokens", 50 + 3 * n},
                      {"cache_creation_input_tokens", 5 * n},
                      {"cache_read_input_tokens", 10 * n}}}}}};
        return e.dump();
    }

    // Appends calls [from, to): each in two blocks, and a user entry.
    void append(int from, int to, int hours_ago = 0) {
        std::ofstream out(path, std::ios::app);
        for (int n = from; n < to; ++n) {
            out << Json{{"type", "user"}, {"message", {{"role", "user"}, {"content", "go"}}}}.dump()
                << "\n";
            out << entry(n, 1, hours_ago) << "\n" << entry(n, 2, hours_ago) << "\n";
            input += 1000 + 7 * n;
            output += 50 + 3 * n;
            cache_write += 5 * n;
            cache_read += 10 * n;
            ++calls;
        }
    }
};

bool tokens_are(const Json& u, const Transcript& t) {
    const auto& k = u["tokens"];
    return k["input"] == t.input && k["output"] == t.output && k["cacheRead"] == t.cache_read &&
           k["cacheWrite"] == t.cache_write && k["calls"] == t.calls;
}

}  // namespace

TEST_CASE(
    "usage: a team's max-agents refuses the spawn beyond it with the count, and creates nothing",
    "[usage][pg]") {
    AgentsHome h("use-max-agents");
    h.ok({"config", "set", "max-agents", "2", "--team", h.team()});
    h.spawn("w1", {"sleep", "600"});
    h.spawn("w2", {"sleep", "600"});
    auto panes = h.panes();
    auto r = h.json_run({"spawn", "w3", "--", "sleep", "600"});
    CHECK(r.exit_code == 4);
    auto doc = r.json();
    CHECK(doc["code"] == "refused");
    CHECK_THAT(doc["error"].get<std::string>(),
               Catch::Contains("2 live agents of its max-agents 2"));
    CHECK(h.panes() == panes);
    CHECK(h.agents().size() == 2);  // w1, w2
    auto refused = h.activity("spawn_refused");
    REQUIRE(refused.size() == 1);
    CHECK(refused[0]["details"]["agent"] == "w3");
    // One stopped: room again.
    h.ok({"kill-agent", "w1", "--force"});
    h.spawn("w3", {"sleep", "600"});
    auto usage = h.ok({"usage"});
    CHECK(usage["limits"]["maxAgents"] == 2);
    CHECK(usage["limits"]["liveAgents"] == 2);
    // Set at the team's creation, as its config shows.
    h.ok({"create", "capped", "--cwd", h.env.dir().string(), "--max-agents", "1", "--max-cost",
          "$2.50"});
    auto config = h.ok({"config", "--team", "capped"});
    std::map<std::string, Json> by_key;
    for (const auto& e : config) by_key[e["key"]] = e;
    CHECK(by_key["max-agents"]["value"] == "1");
    CHECK(by_key["max-agents"]["from"] == "team");
    CHECK(by_key["max-cost"]["value"] == "2.5");
    h.ok({"delete", "capped"});
    h.finish();
}

TEST_CASE("usage: an agent past its max-runtime is warned, asked, then forced, its tree gone",
          "[usage]") {
    AgentsHome h("use-runtime");
    h.ok({"config", "set", "sample-every", "100ms", "--team", h.team()});
    // It ignores the request (a program that reads no inbox): the force comes after the grace.
    h.spawn("w1", {"sleep", "600"});
    auto spawned =
        h.ok({"spawn", "slow", "--env", h.mark.entry(), "--max-runtime", "2s", "--limit-grace",
              "1s", "--", "sh", "-c", "trap '' TERM; sleep 600 & wait"});
    auto ended = h.wait_terminated("slow", 20000);
    CHECK(ended["exitReason"] == "force_killed");
    auto u = usage_of(h, "slow");
    CHECK(u["stoppedBy"] == "max-runtime");
    CHECK(u["warned"] == Json::array({"max-runtime"}));
    CHECK(u["limits"]["maxRuntime"] == "2s");
    CHECK(u["limits"]["limitGrace"] == "1s");
    CHECK(u["wallMs"].get<long long>() >= 2000);
    // The leader was told once of each, with the figures; the request said why.
    auto warnings = messages(h, "budget_warning");
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0]["data"]["limit"] == "max-runtime");
    CHECK(warnings[0]["data"]["used"].get<double>() >= 1600);
    auto stops = messages(h, "budget_stop");
    REQUIRE(stops.size() == 1);
    CHECK(stops[0]["data"]["max"] == 2000);
    auto requested = h.activity("shutdown_requested");
    REQUIRE(requested.size() == 1);
    CHECK_THAT(requested[0]["details"]["reason"].get<std::string>(),
               Catch::StartsWith("budget: max-runtime"));
    CHECK(h.activity("budget_stop").size() == 1);
    // Its tree is gone, the other agent untouched.
    CHECK_FALSE(team::test::alive(spawned["pid"].get<pid_t>()));
    CHECK(h.agent("w1")["status"] == "active");
    h.finish();
}

TEST_CASE("usage: a tree that allocates past its max-memory is ended with nothing left",
          "[usage]") {
    AgentsHome h("use-memory");
    h.ok({"config", "set", "sample-every", "100ms", "--team", h.team()});
    // tail keeps a line that never ends: 300 MiB of zeros and no end of input, in a child of
    // the agent's shell.
    auto spawned =
        h.ok({"spawn", "big", "--env", h.mark.entry(), "--max-memory", "64M", "--limit-grace", "1s",
              "--", "sh", "-c", "(head -c 300M /dev/zero; exec sleep 600) | tail >/dev/null"});
    auto ended = h.wait_terminated("big", 20000);
    CHECK(ended["exitReason"] == "force_killed");
    auto u = usage_of(h, "big");
    CHECK(u["stoppedBy"] == "max-memory");
    CHECK(u["memory"]["peakPss"].get<long long>() >= 64LL << 20);
    auto stops = messages(h, "budget_stop");
    REQUIRE(stops.size() == 1);
    CHECK(stops[0]["data"]["used"].get<double>() >= 64.0 * (1 << 20));
    CHECK_FALSE(team::test::alive(spawned["pid"].get<pid_t>()));
    // Nothing of its tree is left (the marker is in every process it started).
    h.env.tmux({"kill-server"});
    CHECK(h.mark.none_alive_within(5000));
    h.finish();
}

TEST_CASE(
    "usage: an agent's record counted to the token, read again, its reader killed mid-read, "
    "a truncated last line, a window",
    "[usage]") {
    AgentsHome h("use-records");
    h.ok({"config", "set", "sample-every", "100ms", "--team", h.team()});
    h.spawn("w1", {"sleep", "600"});
    Transcript t{h.env.dir() / "transcript.jsonl"};
    t.append(0, 200, 3);  // three hours ago
    // Its hook names the record; the watcher reads it.
    h.report("w1", "PostToolUse", {{"transcript_path", t.path.string()}, {"tool_name", "Bash"}});
    CHECK(eventually([&] { return tokens_are(usage_of(h, "w1"), t); }, bound(20000)));
    auto u = usage_of(h, "w1");
    CHECK(u["records"] == t.path.string());
    CHECK(u["model"] == "claude-sonnet-4-5-20250929");
    CHECK(u["costSource"] == "prices");
    double expected =
        (t.input * 3.0 + t.output * 15.0 + t.cache_read * 0.3 + t.cache_write * 3.75) / 1e6;
    CHECK(std::abs(u["cost"].get<double>() - expected) < 1e-9);

    // Readers SIGKILLed at random moments while more is appended, a line cut short among it:
    // nothing counted twice, nothing dropped.
    auto id = std::to_string(record_id(h, "w1"));
    std::mt19937 random(42);
    for (int round = 0; round < 8; ++round) {
        t.append(200 + round * 500, 200 + (round + 1) * 500);
        auto reader = h.env.start({"__usage", id}, h.extra());
        std::this_thread::sleep_for(std::chrono::milliseconds(random() % 40));
        ::kill(reader.pid(), SIGKILL);
        reader.wait();
    }
    std::string cut = t.entry(99999, 1, 0);
    {
        std::ofstream out(t.path, std::ios::app);
        out << cut.substr(0, cut.size() / 2);  // half a line: not counted until it ends
    }
    Transcript whole = t;  // what is counted with the line whole
    whole.input += 1000 + 7 * 99999;
    whole.output += 50 + 3 * 99999;
    whole.cache_write += 5 * 99999;
    whole.cache_read += 10 * 99999;
    whole.calls += 1;
    CHECK(eventually([&] { return tokens_are(usage_of(h, "w1"), t); }, bound(30000)));
    {
        std::ofstream out(t.path, std::ios::app);
        out << cut.substr(cut.size() / 2) << "\n";
    }
    CHECK(eventually([&] { return tokens_are(usage_of(h, "w1"), whole); }, bound(20000)));
    // A window: the calls of the last hour alone (the first 200 were three hours ago).
    auto window = h.ok({"usage", "w1", "--since", "1h"});
    CHECK(window["agents"][0]["tokens"]["calls"] == whole.calls - 200);
    CHECK(window["since"].is_string());

    // The agent's own figure wins over the price table's.
    h.report("w1", "StatusLine", {{"cost", {{"total_cost_usd", 0.4242}}}});
    u = usage_of(h, "w1");
    CHECK(u["costSource"] == "agent");
    CHECK(u["cost"] == 0.4242);
    // Kept after its end.
    h.ok({"kill-agent", "w1", "--force"});
    u = usage_of(h, "w1");
    CHECK(u["status"] == "terminated");
    CHECK(tokens_are(u, whole));
    auto total = h.ok({"usage"})["total"];
    CHECK(total["tokens"]["calls"] == whole.calls);
    h.finish();
}

TEST_CASE(
    "usage: a team over its max-cost has its agents stopped and refuses spawns, warned once first",
    "[usage][pg]") {
    AgentsHome h("use-team-cost");
    h.ok({"config", "set", "sample-every", "100ms", "--team", h.team()});
    h.ok({"config", "set", "max-cost", "1.00", "--team", h.team()});
    h.spawn("w1", {"sleep", "600"});
    h.spawn("w2", {"sleep", "600"});
    // w1's calls: $0.85 at the table's prices (a million input tokens of claude-haiku-4-5 at $1
    // would be $1; 850,000 are $0.85), 85 % of the team's max-cost: warned, not stopped.
    auto path = h.env.dir() / "t.jsonl";
    auto call = [&](const std::string& id, int input) {
        std::ofstream(path, std::ios::app)
            << Json{{"type", "assistant"},
                    {"message",
                     {{"id", id},
                      {"model", "claude-haiku-4-5"},
                      {"usage", {{"input_tokens", input}, {"output_tokens", 0}}}}}}
                   .dump()
            << "\n";
    };
    call("m1", 850000);
    h.report("w1", "Stop", {{"transcript_path", path.string()}});
    CHECK(eventually([&] { return !messages(h, "budget_warning").empty(); }, bound(20000)));
    auto warned = messages(h, "budget_warning");
    REQUIRE(warned.size() == 1);
    CHECK(warned[0]["data"]["limit"] == "team max-cost");
    CHECK(h.agent("w1")["status"] == "active");
    // Past it: every agent asked to stop (they ignore it: forced after the 30 s grace is not
    // waited for here), and no spawn.
    call("m2", 200000);
    CHECK(eventually(
        [&] {
            auto doc = h.ok({"usage"});
            return doc["agents"].size() == 2 && doc["agents"][0]["stoppedBy"] == "team max-cost" &&
                   doc["agents"][1]["stoppedBy"] == "team max-cost";
        },
        bound(20000)));
    CHECK(h.ok({"usage"})["limits"]["costStopped"] == true);
    for (const char* name : {"w1", "w2"}) CHECK(h.agent(name)["status"] == "shutting_down");
    auto r = h.json_run({"spawn", "w3", "--", "sleep", "600"});
    CHECK(r.exit_code == 4);
    CHECK_THAT(r.json()["error"].get<std::string>(), Catch::Contains("of its max-cost $1.00"));
    CHECK(messages(h, "budget_warning").size() == 1);  // once for the team, not per agent
    CHECK(messages(h, "budget_stop").size() == 2);
    h.ok({"kill-agent", "w1", "--force"});
    h.ok({"kill-agent", "w2", "--force"});
    h.finish();
}

TEST_CASE("usage: a price table of the home's own, and an unknown model", "[usage]") {
    AgentsHome h("use-prices");
    h.ok({"config", "set", "sample-every", "100ms", "--team", h.team()});
    h.spawn("w1", {"sleep", "600"});
    auto path = h.env.dir() / "t.jsonl";
    std::ofstream(path)
        << R"({"type":"assistant","message":{"id":"m1","model":"acme-coder-20260101","usage":{"input_tokens":1000000,"output_tokens":1000000}}})"
        << "\n";
    h.report("w1", "Stop", {{"transcript_path", path.string()}});
    CHECK(eventually([&] { return usage_of(h, "w1")["tokens"]["calls"] == 1; }, bound(20000)));
    // Not priced: unknown, never guessed.
    auto u = usage_of(h, "w1");
    CHECK(u["cost"].is_null());
    CHECK(u["costUnknownModels"] == Json::array({"acme-coder-20260101"}));
    CHECK(h.ok({"usage"})["total"]["costUnknownAgents"] == 1);
    auto prices = h.env.dir() / "prices.json";
    std::ofstream(prices) << R"({"taken": "2026-11-01", "source": "test",
        "models": {"acme-coder": {"input": 2, "output": 8}}})";
    h.ok({"config", "set", "prices", prices.string()}, kHome);
    u = usage_of(h, "w1");
    CHECK(u["cost"] == 10.0);  // 1M in at $2 + 1M out at $8: a dated release of acme-coder
    CHECK(u["costSource"] == "prices");
    CHECK(h.ok({"usage"})["prices"]["taken"] == "2026-11-01");
    h.finish();
}

TEST_CASE("usage: bad limits, sizes, sums and price files are refused and change nothing",
          "[usage]") {
    AgentsHome h("use-bad");
    auto before = h.agents();
    auto refused = [&](std::vector<std::string> args, int code, const Env& env = {}) {
        auto r = h.json_run(args, env);
        std::string shown;
        for (const auto& a : args) shown += (a.size() > 40 ? a.substr(0, 40) + "..." : a) + " ";
        INFO("team " << shown << "-> " << r.exit_code << " " << r.out << r.err);
        CHECK(r.exit_code == code);
        auto doc = r.json();
        CHECK(doc["success"] == false);
        CHECK(doc["error"].get<std::string>().size() > 0);
    };
    for (std::string size : {"lots", "0", "-1G", "2048T", "12X", "1..5G", "", "$(reboot)"}) {
        refused({"spawn", "w1", "--max-memory", size, "--", "sleep", "600"}, 2);
    }
    for (std::string usd : {"-1", "0", "abc", "1e9", "$", "2000000", "5;rm -rf /", "１"}) {
        refused({"spawn", "w1", "--max-cost", usd, "--", "sleep", "600"}, 2);
    }
    for (std::string n : {"0", "-5", "x", "1.5", "99999999999999999999999"}) {
        refused({"spawn", "w1", "--max-tokens", n, "--", "sleep", "600"}, 2);
    }
    refused({"spawn", "w1", "--max-runtime", "soon", "--", "sleep", "600"}, 2);
    refused({"spawn", "w1", "--max-runtime", "0s", "--", "sleep", "600"}, 2);
    refused({"spawn", "w1", "--limit-grace", "-1s", "--", "sleep", "600"}, 2);
    CHECK(h.agents() == before);
    CHECK(h.panes().empty());

    refused({"config", "set", "max-agents", "0", "--team", h.team()}, 2);
    refused({"config", "set", "max-agents", "1.5", "--team", h.team()}, 2);
    refused({"config", "set", "max-agents", "3; reboot", "--team", h.team()}, 2);
    refused({"config", "set", "max-cost", "-3", "--team", h.team()}, 2);
    refused({"config", "set", "max-cost", "5"}, 2, kHome);  // a team's
    refused({"config", "set", "sample-every", "10ms"}, 2, kHome);
    refused({"config", "set", "prices", (h.env.dir() / "none.json").string()}, 2, kHome);
    refused({"config", "set", "prices", h.env.dir().string()}, 2, kHome);
    auto garbage = h.env.dir() / "garbage";
    std::ofstream(garbage) << std::string(1 << 20, '\x07');
    refused({"config", "set", "prices", garbage.string()}, 2, kHome);
    auto bad = h.env.dir() / "bad.json";
    for (std::string text :
         {R"([1,2])", R"({"models": []})", R"({"models": {"m": {"input": -1}}})",
          R"({"models": {"m": {"input": "cheap"}}})", R"({"models": {"m": 3}})"}) {
        std::ofstream(bad, std::ios::trunc) << text;
        refused({"config", "set", "prices", bad.string()}, 2, kHome);
    }
    refused({"create", "t2", "--cwd", h.env.dir().string(), "--max-agents", "0"}, 2);
    refused({"create", "t2", "--cwd", h.env.dir().string(), "--max-cost", "free"}, 2);
    refused({"usage", "--since", "soon"}, 2);
    refused({"usage", "nobody"}, 3);
    refused({"usage", "x;$(reboot)"}, 2);
    auto config = h.ok({"config"});
    for (const auto& e : config) {
        if (e["key"] == "max-agents" || e["key"] == "max-cost" || e["key"] == "prices") {
            CHECK(e["from"] == "unset");
        }
    }
    CHECK(h.ok({"list"}).size() == 1);
    h.finish();
}
