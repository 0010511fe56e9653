// team send / inbox / inbox ack (SPEC 5), run as a user would, each test on its own temporary
// home with its own private tmux server. Recipients other than the leader are real agents
// (`sleep` or `cat` in a pane); every process a test starts carries the test's marker, and every
// test proves at its end that none of them is left alive.
//
// Each test uses a team name of its own, since tests run in parallel (see test_agents.cpp).
#include <SQLiteCpp/SQLiteCpp.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "tests/support/helpers.hpp"
#include "tests/support/marker.hpp"
#include "tests/support/probe.hpp"
#include "tests/support/process.hpp"
#include "tests/support/team_home.hpp"

using team::test::alive;
using team::test::bound;
using team::test::Child;
using team::test::eventually;
using team::test::Marker;
using team::test::RunResult;
using team::test::slurp;
using team::test::sq;
using team::test::TeamEnv;
using team::test::watching;
using Env = std::map<std::string, std::string>;
using Json = nlohmann::json;
using Ms = std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;
namespace fs = std::filesystem;

namespace {

// Several JSON documents one after the other (the outputs of a loop of `team ... --json`).
std::vector<Json> json_stream(const std::string& text, bool* ok = nullptr) {
    std::vector<Json> out;
    std::istringstream in(text);
    if (ok) *ok = true;
    while (in >> std::ws, in.peek() != std::char_traits<char>::eof()) {
        Json doc;
        try {
            in >> doc;
        } catch (const std::exception&) {
            if (ok) *ok = false;
            break;
        }
        out.push_back(std::move(doc));
    }
    return out;
}

// Rows in the messages table of the home (0 when there is no store yet).
int message_rows(const TeamEnv& env) {
    if (!fs::exists(env.home() / "team.db")) return 0;
    SQLite::Database db((env.home() / "team.db").string());
    return db.execAndGet("SELECT count(*) FROM messages").getInt();
}

const std::set<std::string> kMessageFields{"id",   "team", "from",      "to",    "type",
                                           "text", "data", "createdAt", "readAt"};

std::set<std::string> keys_of(const Json& doc) {
    std::set<std::string> out;
    for (const auto& [k, v] : doc.items()) out.insert(k);
    return out;
}

// One test's home, with a team in it, its marker, and helpers that run `team` there.
class Home : public team::test::TeamHome {
  public:
    using TeamHome::TeamHome;

    // The environment of a call made by that agent (as its pane would set it).
    Env as(const std::string& name) const { return {{"TEAM_AGENT_ID", name + "@" + team()}}; }

    // `team ARGS...` with `input` on its standard input (a pipe). The input must not be longer
    // than what `team` reads (1 MiB + 1 byte), or writing the rest would raise SIGPIPE here.
    RunResult run_with_input(const std::vector<std::string>& args, const std::string& input,
                             const Env& more = {}) const {
        return env.start(args, extra(more), input).wait();
    }

    // `team ARGS...` with its standard input from a file that holds `input`: for inputs longer
    // than what `team` reads.
    RunResult run_with_file(const std::vector<std::string>& args, const std::string& input,
                            const Env& more = {}) const {
        auto file = env.dir() / ("input-" + std::to_string(++inputs_));
        std::ofstream(file, std::ios::binary) << input;
        std::vector<std::string> argv{"/bin/sh", "-c", "exec \"$@\" < \"$TEAM_TEST_INPUT\"", "sh",
                                      team::test::team_binary()};
        argv.insert(argv.end(), args.begin(), args.end());
        Env vars = extra(more);
        vars["TEAM_HOME"] = env.home().string();
        vars["TEAM_TEST_INPUT"] = file.string();
        return Child(argv, team::test::clean_env(vars)).wait();
    }

    Json spawn(const std::string& name, const std::vector<std::string>& command,
               const std::vector<std::string>& options = {}) const {
        std::vector<std::string> args{"spawn", name, "--json", "--env", mark.entry()};
        args.insert(args.end(), options.begin(), options.end());
        args.push_back("--");
        args.insert(args.end(), command.begin(), command.end());
        auto r = run(args);
        INFO("spawn " << name << " stdout: " << r.out << " stderr: " << r.err);
        REQUIRE(r.exit_code == 0);
        auto doc = r.json();
        REQUIRE(doc["name"] == name);
        return doc;
    }

    // `team send --json OPTIONS -- TO TEXT` (the text may start with a dash).
    RunResult try_send(const std::string& to, const std::string& text,
                       const std::vector<std::string>& options = {}, const Env& more = {}) const {
        std::vector<std::string> args{"send", "--json"};
        args.insert(args.end(), options.begin(), options.end());
        args.insert(args.end(), {"--", to, text});
        return run(args, more);
    }

    Json send(const std::string& to, const std::string& text,
              const std::vector<std::string>& options = {}, const Env& more = {}) const {
        auto r = try_send(to, text, options, more);
        INFO("send to " << to << " stdout: " << r.out << " stderr: " << r.err);
        REQUIRE(r.exit_code == 0);
        auto doc = r.json();
        REQUIRE(doc.is_object());
        REQUIRE(doc["id"].is_number_integer());
        return doc;
    }

    // `team inbox --json OPTIONS`, which must succeed; returns the list.
    Json inbox(const std::vector<std::string>& options = {}, const Env& more = {}) const {
        std::vector<std::string> args{"inbox", "--json"};
        args.insert(args.end(), options.begin(), options.end());
        auto r = run(args, more);
        INFO("inbox stdout: " << r.out << " stderr: " << r.err);
        REQUIRE(r.exit_code == 0);
        auto doc = r.json();
        REQUIRE(doc.is_array());
        return doc;
    }

    // The ids of a list of messages, in order.
    static std::vector<long> ids(const Json& list) {
        std::vector<long> out;
        for (const auto& m : list) out.push_back(m["id"].get<long>());
        return out;
    }

    // Polls `team agents --all` until the agent is terminated.
    void wait_terminated(const std::string& name, int ms = 5000) const {
        Json last;
        eventually(
            [&] {
                auto r = run({"agents", "--all", "--json"});
                if (r.exit_code != 0) return false;
                for (const auto& a : r.json()) {
                    if (a["name"] == name) last = a;
                }
                return last.is_object() && last["status"] == "terminated";
            },
            ms);
        INFO("agent " << name << ": " << last.dump());
        REQUIRE(last.is_object());
        REQUIRE(last["status"] == "terminated");
    }

  private:
    mutable int inputs_ = 0;
};

}  // namespace

TEST_CASE("messages: send stores a message that inbox returns, oldest first, in the SPEC's shape",
          "[messages][sanitize]") {
    Home h("msg-basic");
    h.spawn("worker", {"sleep", "600"});

    auto first = h.send("worker", "please rebase on main");
    CHECK(keys_of(first) == kMessageFields);
    CHECK(first["team"] == "msg-basic");
    CHECK(first["from"] == "leader");
    CHECK(first["to"] == "worker");
    CHECK(first["type"] == "message");
    CHECK(first["text"] == "please rebase on main");
    CHECK(first["data"].is_null());
    std::string created = first["createdAt"];
    CHECK(created.size() == 24);  // 2026-11-22T10:04:05.123Z
    CHECK(created.back() == 'Z');
    CHECK(first["readAt"].is_null());

    // name@team names the same member; --type and --data are kept.
    auto second = h.send("worker@msg-basic", "done with #3",
                         {"--type", "status", "--data", R"({"task": "3", "n": [1, 2.5, null]})"});
    CHECK(second["to"] == "worker");
    CHECK(second["type"] == "status");
    CHECK(second["data"] == Json::parse(R"({"task": "3", "n": [1, 2.5, null]})"));
    CHECK(second["id"].get<long>() > first["id"].get<long>());
    // Data without a text.
    auto third = h.send("worker", "", {"--data", "[1,2]"});
    CHECK(third["text"] == "");
    CHECK(third["data"] == Json::array({1, 2}));

    // An agent writes to the leader, by the leader's name, as itself.
    auto up = h.send("leader", "from the worker", {}, h.as("worker"));
    CHECK(up["from"] == "worker");
    CHECK(up["to"] == "leader");
    auto up2 = h.send("leader@msg-basic", "with --as", {"--as", "worker"});
    CHECK(up2["from"] == "worker");

    // The worker's inbox, oldest first, exactly what send returned.
    auto mine = h.inbox({}, h.as("worker"));
    REQUIRE(mine.size() == 3);
    CHECK(mine[0] == first);
    CHECK(mine[1] == second);
    CHECK(mine[2] == third);
    CHECK(h.inbox({"--agent", "worker"}) == mine);  // the leader reads it too
    auto leaders = h.inbox();
    CHECK(Home::ids(leaders) == std::vector<long>{up["id"].get<long>(), up2["id"].get<long>()});
    CHECK(leaders[0] == up);

    // Human output.
    auto human = h.run({"send", "worker", "hello there"});
    CHECK(human.exit_code == 0);
    CHECK_THAT(human.out,
               Catch::StartsWith("sent message ") && Catch::Contains(" to worker@msg-basic"));
    auto listing = h.run({"inbox"}, h.as("worker"));
    CHECK(listing.exit_code == 0);
    CHECK_THAT(listing.out, Catch::Contains("leader -> worker") &&
                                Catch::Contains("please rebase on main") &&
                                Catch::Contains("hello there") && Catch::Contains("status") &&
                                Catch::Contains("unread"));
    CHECK(listing.out.find('\x1b') == std::string::npos);  // no colour off a terminal
    h.finish();
}

TEST_CASE("messages: inbox filters --unread, --type, --since, --limit and marks with --mark-read",
          "[messages][pg]") {
    Home h("msg-filters");
    h.spawn("w", {"sleep", "600"});
    std::vector<long> ids;
    for (int i = 0; i < 6; ++i) {
        auto doc = h.send("w", "m" + std::to_string(i), {"--type", i % 2 ? "odd" : "even"});
        ids.push_back(doc["id"].get<long>());
    }
    auto w = h.as("w");
    CHECK(Home::ids(h.inbox({}, w)) == ids);
    CHECK(Home::ids(h.inbox({"--type", "odd"}, w)) == std::vector<long>{ids[1], ids[3], ids[5]});
    CHECK(h.inbox({"--type", "none-of-these"}, w).empty());
    CHECK(Home::ids(h.inbox({"--since", std::to_string(ids[3])}, w)) ==
          std::vector<long>{ids[4], ids[5]});
    CHECK(Home::ids(h.inbox({"--limit", "2"}, w)) == std::vector<long>{ids[0], ids[1]});
    CHECK(Home::ids(h.inbox({"--since", std::to_string(ids[0]), "--type", "even", "--limit", "1"},
                            w)) == std::vector<long>{ids[2]});

    // --mark-read marks what it returns, in the same call: readAt is set in its output.
    auto taken = h.inbox({"--unread", "--mark-read", "--limit", "2"}, w);
    REQUIRE(Home::ids(taken) == std::vector<long>{ids[0], ids[1]});
    for (const auto& m : taken) {
        CHECK(m["readAt"].is_string());
        CHECK(m["readAt"].get<std::string>().size() == 24);
    }
    CHECK(Home::ids(h.inbox({"--unread"}, w)) == std::vector<long>{ids[2], ids[3], ids[4], ids[5]});
    // Reading without --mark-read marks nothing.
    CHECK(h.inbox({"--unread"}, w).size() == 4);
    // The leader marks the worker's odd ones.
    auto odd = h.inbox({"--agent", "w", "--type", "odd", "--unread", "--mark-read"});
    CHECK(Home::ids(odd) == std::vector<long>{ids[3], ids[5]});
    CHECK(Home::ids(h.inbox({"--unread"}, w)) == std::vector<long>{ids[2], ids[4]});

    // --mark-read over read and unread messages keeps the old readAt of the read ones.
    auto all = h.inbox({"--mark-read"}, w);
    REQUIRE(all.size() == 6);
    CHECK(all[0]["readAt"] == taken[0]["readAt"]);
    CHECK(all[3]["readAt"] == odd[0]["readAt"]);
    for (const auto& m : all) CHECK(m["readAt"].is_string());
    CHECK(h.inbox({"--unread"}, w).empty());
    auto none = h.run({"inbox", "--unread"}, w);
    CHECK(none.exit_code == 0);
    CHECK_THAT(none.out, Catch::Contains("no unread messages"));
    CHECK(h.inbox().empty());  // the leader's own inbox
    h.finish();
}

TEST_CASE("messages: a send to an unknown or terminated recipient is refused and stores nothing",
          "[messages]") {
    Home h("msg-recipients");
    h.spawn("worker", {"sleep", "600"});
    h.spawn("gone", {"sh", "-c", "echo bye"});
    h.wait_terminated("gone");

    // Unknown: exit 3 with a did-you-mean.
    auto unknown = h.run({"send", "wroker", "hello"});
    CHECK(unknown.exit_code == 3);
    CHECK_THAT(unknown.err, Catch::Contains("did you mean 'worker'"));
    auto unknown_json = h.try_send("nobody-like-that", "hello");
    CHECK(unknown_json.exit_code == 3);
    CHECK(unknown_json.json()["code"] == "not_found");
    CHECK(unknown_json.json()["success"] == false);

    // Terminated: exit 4.
    auto terminated = h.run({"send", "gone", "hello"});
    CHECK(terminated.exit_code == 4);
    CHECK_THAT(terminated.err, Catch::Contains("terminated"));
    auto terminated_json = h.try_send("gone@msg-recipients", "hello");
    CHECK(terminated_json.exit_code == 4);
    CHECK(terminated_json.json()["code"] == "refused");
    CHECK(h.try_send("gone", "hello", {"--notify"}).exit_code == 4);

    // An agent whose process has just ended, before any command looked: send looks first.
    auto victim = h.spawn("victim", {"sleep", "600"});
    auto pid = static_cast<pid_t>(victim["pid"].get<long>());
    REQUIRE(::kill(pid, SIGKILL) == 0);
    REQUIRE(eventually([&] { return !alive(pid); }));
    auto ended = h.try_send("victim", "are you there?");
    CHECK(ended.exit_code == 4);
    CHECK(ended.json()["code"] == "refused");

    // Another team's member, bad names, and a caller who is not a member.
    CHECK(h.try_send("worker@other-team", "hello").exit_code == 2);
    CHECK(h.try_send("bad name", "hello").exit_code == 2);
    CHECK(h.try_send("x;y", "hello").exit_code == 2);
    CHECK(h.try_send("worker", "hello", {"--as", "stranger"}).exit_code == 3);
    CHECK(h.try_send("worker", "hello", {}, h.as("gone")).exit_code == 3);

    // Nothing was stored anywhere.
    CHECK(message_rows(h.env) == 0);
    CHECK(h.inbox({"--agent", "gone"}).empty());
    CHECK(h.inbox({"--agent", "victim"}).empty());
    CHECK(h.inbox({"--agent", "worker"}).empty());
    CHECK(h.inbox().empty());

    auto ok = h.send("worker", "hello");
    CHECK(message_rows(h.env) == 1);
    CHECK(Home::ids(h.inbox({"--agent", "worker"})) == std::vector<long>{ok["id"].get<long>()});
    h.finish();
}

TEST_CASE("messages: bad types, protocol types, bad --data, empty and non-UTF-8 texts are refused",
          "[messages][input]") {
    Home h("msg-badinput");
    h.spawn("w", {"sleep", "600"});

    for (std::string type :
         {"shutdown_request", "shutdown_approved", "shutdown_rejected", "shutdown_confirmed"}) {
        INFO(type);
        auto r = h.try_send("w", "hello", {"--type", type});
        CHECK(r.exit_code == 4);
        CHECK(r.json()["code"] == "refused");
    }
    for (std::string type :
         {std::string("a b"), std::string("x;y"), std::string(""), std::string("$(id)"),
          std::string("a\nb"), std::string("日本"), std::string(65, 't')}) {
        INFO("type [" << type << "]");
        auto r = h.try_send("w", "hello", {"--type", type});
        CHECK(r.exit_code == 2);
        CHECK(r.json()["code"] == "usage");
    }
    for (std::string data :
         {"{bad", "", "not json", "{\"a\":1} trailing", "[1,2", "'single'", "{a:1}"}) {
        INFO("data [" << data << "]");
        auto r = h.try_send("w", "hello", {"--data", data});
        CHECK(r.exit_code == 2);
        CHECK(r.json()["code"] == "usage");
    }
    auto bad_data = h.run({"send", "w", "hello", "--data", "{bad"});
    CHECK(bad_data.exit_code == 2);
    CHECK_THAT(bad_data.err, Catch::Contains("--data") && Catch::Contains("JSON"));
    CHECK(h.try_send("w", "hello", {"--data", "\"\xff\""}).exit_code == 2);

    // An empty text without --data, a missing text, texts that are not UTF-8.
    CHECK(h.try_send("w", "").exit_code == 2);
    CHECK(h.run({"send", "w"}).exit_code == 2);
    CHECK(h.run({"send"}).exit_code == 2);
    for (std::string bad : {std::string("\xff\xfe"), std::string("ok \xc3"),
                            std::string("\xed\xa0\x80 surrogate"), std::string("\xc0\xaf")}) {
        auto r = h.try_send("w", bad);
        CHECK(r.exit_code == 2);
        CHECK(r.json()["code"] == "usage");
    }
    CHECK(h.run_with_input({"send", "w", "-"}, "\xff\n").exit_code == 2);
    CHECK(h.run_with_input({"send", "w", "-"}, "\n").exit_code == 2);  // empty once read
    // --all with a recipient is a usage error too.
    CHECK(h.run({"send", "--all", "w", "hello"}).exit_code == 2);

    CHECK(message_rows(h.env) == 0);
    CHECK(h.inbox({"--agent", "w"}).empty());

    // The limits themselves are fine.
    CHECK(h.send("w", "x", {"--type", std::string(64, 't')})["type"] == std::string(64, 't'));
    CHECK(h.send("w", "x", {"--type", "status.v2_final-1"})["type"] == "status.v2_final-1");
    CHECK(h.send("w", "x", {"--data", "null"})["data"].is_null());
    CHECK(h.send("w", "x", {"--data", " \"s\" "})["data"] == "s");
    CHECK(message_rows(h.env) == 4);
    h.finish();
}

TEST_CASE("messages: a text of 1 MiB is stored whole and one of 1 MiB + 1 byte is refused",
          "[messages][input]") {
    // Linux refuses a single argument over 128 KiB, so long texts come on stdin ("-").
    Home h("msg-size");
    h.spawn("w", {"sleep", "600"});
    const size_t mib = 1 << 20;

    auto over = h.run_with_input({"send", "w", "-"}, std::string(mib + 1, 'x'));
    CHECK(over.exit_code == 2);
    CHECK_THAT(over.err, Catch::Contains("1048577"));
    auto over_json = h.run_with_input({"send", "w", "-", "--json"}, std::string(mib + 1, 'x'));
    CHECK(over_json.exit_code == 2);
    CHECK(over_json.json()["code"] == "usage");
    auto way_over = h.run_with_file({"send", "w", "-"}, std::string(3 * mib, 'y'));
    CHECK(way_over.exit_code == 2);
    // Multi-byte characters: 1 MiB + 1 byte is too long whatever it is made of.
    std::string accents;
    while (accents.size() < mib) accents += "é";
    CHECK(h.run_with_input({"send", "w", "-"}, accents + "x").exit_code == 2);
    CHECK(message_rows(h.env) == 0);

    // Exactly 1 MiB: stored and returned whole (with or without the newline echo adds).
    auto exact = h.run_with_input({"send", "w", "-", "--json"}, std::string(mib, 'x'));
    CHECK(exact.exit_code == 0);
    auto doc = exact.json();
    CHECK(doc["text"].get<std::string>() == std::string(mib, 'x'));
    auto with_newline =
        h.run_with_input({"send", "w", "-", "--json"}, std::string(mib, 'z') + "\n");
    CHECK(with_newline.exit_code == 0);
    CHECK(with_newline.json()["text"].get<std::string>() == std::string(mib, 'z'));
    auto exact_accents = h.run_with_input({"send", "w", "-", "--json"}, accents);
    CHECK(exact_accents.exit_code == 0);
    CHECK(exact_accents.json()["text"].get<std::string>() == accents);
    auto list = h.inbox({"--agent", "w"});
    REQUIRE(list.size() == 3);
    CHECK(list[0]["text"].get<std::string>() == std::string(mib, 'x'));
    CHECK(list[2]["text"].get<std::string>() == accents);
    // And a long text as an argument.
    CHECK(h.send("w", std::string(100'000, 'a'))["text"].get<std::string>().size() == 100'000);
    h.finish();
}

TEST_CASE("messages: a text on stdin that goes on past 1 MiB after a newline is refused, not cut",
          "[messages][input]") {
    Home h("msg-size-cut");
    h.spawn("w", {"sleep", "600"});
    const size_t mib = 1 << 20;
    // 1 MiB, a newline, and more: 1 MiB + 5 bytes of text. It must be refused whole, not cut
    // down to its first MiB and stored as if that were all of it.
    auto r = h.run_with_file({"send", "w", "-", "--json"}, std::string(mib, 'x') + "\nTAIL");
    CHECK(r.exit_code == 2);
    CHECK(message_rows(h.env) == 0);
    auto r2 = h.run_with_file({"send", "w", "-", "--json"}, std::string(mib, 'x') + "\n\n");
    CHECK(r2.exit_code == 2);  // one trailing newline is dropped, not two
    CHECK(message_rows(h.env) == 0);
    h.finish();
}

TEST_CASE("messages: hostile texts are stored and returned byte for byte and run nothing",
          "[messages][input]") {
    Home h("msg-hostile");
    h.spawn("w", {"sleep", "600"});
    auto pwned = h.env.dir() / "pwned";
    std::string p = pwned.string();
    std::vector<std::string> hostile{"'; touch " + p + "'",
                                     "; touch " + p,
                                     "$(touch " + p + ")",
                                     "`touch " + p + "`",
                                     "&& touch " + p + " || touch " + p + " | touch " + p,
                                     "> " + p,
                                     "\"double\" 'single' \\back\\slash",
                                     "line one\nline two\n\nline four",
                                     "tab\there",
                                     "日本語 🚀 ünïcödé",
                                     "[a,b]",
                                     "{a,b}",
                                     "[]",
                                     "*",
                                     "~",
                                     "$HOME",
                                     "-x",
                                     "--",
                                     "--json",
                                     "- -",
                                     "%1 #{pane_id} #(touch " + p + ")",
                                     "esc \x1b[31mred\x1b[0m bell\x07 cr\rend",
                                     "ends with backslash \\",
                                     "   spaces around   ",
                                     "trailing newline\n",
                                     ";"};
    auto w = h.as("w");
    std::vector<long> to_w, to_leader;
    for (const auto& text : hostile) {
        INFO("text [" << text << "]");
        auto down = h.send("w", text, {"--data", Json{{"echo", text}}.dump()});
        CHECK(down["text"] == text);
        CHECK(down["data"]["echo"] == text);
        to_w.push_back(down["id"].get<long>());
        auto up = h.send("leader", text, {}, w);
        CHECK(up["text"] == text);
        to_leader.push_back(up["id"].get<long>());
    }
    // From stdin: one trailing newline (as echo adds) is not part of the text, the rest is.
    auto from_stdin = h.run_with_input({"send", "w", "-", "--json"}, "a;\nb 'c' $(id) `id`\n");
    CHECK(from_stdin.exit_code == 0);
    CHECK(from_stdin.json()["text"] == "a;\nb 'c' $(id) `id`");
    // A text that is just a dash ("-" as an argument means stdin) comes on stdin.
    auto dash = h.run_with_input({"send", "leader", "-", "--json"}, "-\n", w);
    CHECK(dash.exit_code == 0);
    CHECK(dash.json()["text"] == "-");

    auto mine = h.inbox({}, w);
    REQUIRE(mine.size() == hostile.size() + 1);
    for (size_t i = 0; i < hostile.size(); ++i) {
        INFO("text [" << hostile[i] << "]");
        CHECK(mine[i]["id"] == to_w[i]);
        CHECK(mine[i]["text"] == hostile[i]);
        CHECK(mine[i]["data"]["echo"] == hostile[i]);
    }
    CHECK(mine.back()["text"] == "a;\nb 'c' $(id) `id`");
    auto leaders = h.inbox();
    REQUIRE(leaders.size() == hostile.size() + 1);
    for (size_t i = 0; i < hostile.size(); ++i) {
        CHECK(leaders[i]["id"] == to_leader[i]);
        CHECK(leaders[i]["text"] == hostile[i]);
        CHECK(leaders[i]["from"] == "w");
    }
    CHECK(leaders.back()["text"] == "-");

    // A person's listing shows the texts without letting them drive the terminal.
    auto human = h.run({"inbox"}, w);
    CHECK(human.exit_code == 0);
    CHECK_THAT(human.out, Catch::Contains("日本語 🚀 ünïcödé") && Catch::Contains("[a,b]") &&
                              Catch::Contains("$(touch " + p + ")"));
    CHECK(human.out.find('\x1b') == std::string::npos);
    CHECK(human.out.find('\r') == std::string::npos);
    CHECK(human.out.find('\x07') == std::string::npos);
    CHECK_FALSE(fs::exists(pwned));
    h.finish();
}

TEST_CASE("messages: only the leader reads another agent's inbox", "[messages]") {
    Home h("msg-authority");
    h.spawn("alice", {"sleep", "600"});
    h.spawn("bob", {"sleep", "600"});
    auto for_alice = h.send("alice", "for alice");
    auto for_bob = h.send("bob", "for bob");
    auto for_leader = h.send("leader", "for the leader", {}, h.as("alice"));
    auto alice = h.as("alice");

    for (std::string other : {"bob", "bob@msg-authority", "leader"}) {
        INFO(other);
        auto r = h.run({"inbox", "--agent", other, "--unread", "--mark-read", "--json"}, alice);
        CHECK(r.exit_code == 4);
        CHECK(r.json()["code"] == "refused");
        CHECK(r.json()["success"] == false);
        CHECK(r.out.find("for bob") == std::string::npos);
        CHECK(r.out.find("for the leader") == std::string::npos);
    }
    auto human = h.run({"inbox", "--agent", "bob"}, alice);
    CHECK(human.exit_code == 4);
    CHECK_THAT(human.err, Catch::Contains("leader"));
    CHECK(human.out.find("for bob") == std::string::npos);
    CHECK(h.run({"inbox", "--agent", "bob", "--wait", "5s"}, {{"TEAM_AGENT_ID", "alice"}})
              .exit_code == 4);
    // Nothing was marked by the refused reads.
    CHECK(h.inbox({"--agent", "bob", "--unread"}) == Json::array({for_bob}));
    CHECK(h.inbox({"--unread"}) == Json::array({for_leader}));

    // An agent reads its own inbox, by default or by its own name.
    CHECK(h.inbox({}, alice) == Json::array({for_alice}));
    CHECK(h.inbox({"--agent", "alice"}, alice) == Json::array({for_alice}));
    CHECK(h.inbox({"--agent", "alice@msg-authority"}, {{"TEAM_AGENT_ID", "alice"}}) ==
          Json::array({for_alice}));
    CHECK(h.inbox({"--as", "bob"}) == Json::array({for_bob}));
    // The leader reads anyone's.
    CHECK(h.inbox({"--agent", "alice"}) == Json::array({for_alice}));
    CHECK(h.inbox({"--agent", "bob"}) == Json::array({for_bob}));

    // Unknown agents and other teams.
    auto unknown = h.run({"inbox", "--agent", "alcie"});
    CHECK(unknown.exit_code == 3);
    CHECK_THAT(unknown.err, Catch::Contains("did you mean 'alice'"));
    CHECK(h.run({"inbox", "--agent", "nobody-at-all", "--json"}).json()["code"] == "not_found");
    CHECK(h.run({"inbox", "--agent", "alice@elsewhere"}).exit_code == 2);
    CHECK(h.run({"inbox", "--agent", "a b"}).exit_code == 2);
    h.finish();
}

TEST_CASE("messages: bad inbox arguments are usage errors", "[messages][input]") {
    Home h("msg-inbox-usage");
    h.spawn("w", {"sleep", "600"});
    h.send("w", "hello");
    for (std::vector<std::string> args : {std::vector<std::string>{"--limit", "0"},
                                          {"--limit", "-3"},
                                          {"--limit", "x"},
                                          {"--since", "-1"},
                                          {"--since", "abc"},
                                          {"--wait", "0"},
                                          {"--wait", "0s"},
                                          {"--wait", "-1s"},
                                          {"--wait", "soon"},
                                          {"--wait", ""},
                                          {"--type", "a b"},
                                          {"--type", "x;y"}}) {
        std::vector<std::string> call{"inbox", "--json", "--agent", "w", "--mark-read"};
        call.insert(call.end(), args.begin(), args.end());
        INFO(args[0] << " [" << args[1] << "]");
        auto r = h.run(call);
        CHECK(r.exit_code == 2);
        CHECK(r.json()["code"] == "usage");
    }
    CHECK(h.inbox({"--agent", "w", "--unread"}).size() == 1);  // nothing was marked
    h.finish();
}

TEST_CASE("messages: a reader blocked in inbox --wait is woken by a send from another process",
          "[messages][sanitize]") {
    Home h("msg-wake");
    h.spawn("sleeper", {"sleep", "600"});
    auto start = Steady::now();
    // The agent waits for anything unread; the leader waits for a ping in the agent's inbox.
    auto any =
        h.env.start({"inbox", "--unread", "--wait", "20s", "--json"}, h.extra(h.as("sleeper")));
    auto ping = h.env.start(
        {"inbox", "--agent", "sleeper", "--type", "ping", "--mark-read", "--wait", "20s", "--json"},
        h.extra());
    REQUIRE(eventually([&] { return watching(any.pid()) && watching(ping.pid()); }, 10000));
    CHECK(alive(any.pid()));
    CHECK(alive(ping.pid()));

    auto plain = h.send("sleeper", "wake up");
    auto r = any.wait();
    INFO("stdout: " << r.out << " stderr: " << r.err);
    CHECK(r.exit_code == 0);
    auto got = r.json();
    REQUIRE(got.size() == 1);
    CHECK(got[0] == plain);
    CHECK(got[0]["readAt"].is_null());  // no --mark-read
    // A message of another type does not satisfy the leader's wait.
    CHECK(alive(ping.pid()));

    auto the_ping = h.send("sleeper", "ping!", {"--type", "ping"});
    auto r2 = ping.wait();
    INFO("stdout: " << r2.out << " stderr: " << r2.err);
    CHECK(r2.exit_code == 0);
    auto got2 = r2.json();
    REQUIRE(got2.size() == 1);
    CHECK(got2[0]["id"] == the_ping["id"]);
    CHECK(got2[0]["text"] == "ping!");
    CHECK(got2[0]["readAt"].is_string());
    // Both woke on the sends, long before their 20 s ran out.
    CHECK(Steady::now() - start < Ms(15000));
    CHECK(h.inbox({"--agent", "sleeper", "--unread"}) == Json::array({plain}));

    // A message that is already there is returned at once.
    auto at_once = h.run({"inbox", "--unread", "--wait", "20s", "--json"}, h.as("sleeper"));
    CHECK(at_once.exit_code == 0);
    CHECK(Home::ids(at_once.json()) == std::vector<long>{plain["id"].get<long>()});
    h.finish();
}

TEST_CASE("messages: inbox --wait that runs out exits 124 with an empty list", "[messages][pg]") {
    Home h("msg-timeout");
    h.spawn("w", {"sleep", "600"});
    auto r = h.run({"inbox", "--wait", "300ms", "--json"}, h.as("w"));
    CHECK(r.exit_code == 124);
    CHECK(r.json() == Json::array());
    CHECK(r.err.empty());

    // Messages that do not match do not end the wait.
    h.send("w", "not what you wait for");
    h.inbox({"--mark-read"}, h.as("w"));
    auto unread = h.run({"inbox", "--unread", "--wait", "250ms", "--json"}, h.as("w"));
    CHECK(unread.exit_code == 124);
    CHECK(unread.json() == Json::array());
    auto typed = h.run({"inbox", "--agent", "w", "--type", "ping", "--wait", "250ms", "--json"});
    CHECK(typed.exit_code == 124);
    CHECK(typed.json() == Json::array());
    auto since = h.run({"inbox", "--agent", "w", "--since", "1000", "--wait", "1", "--json"});
    CHECK(since.exit_code == 124);
    CHECK(since.json() == Json::array());

    auto human = h.run({"inbox", "--wait", "200ms"});
    CHECK(human.exit_code == 124);
    CHECK_THAT(human.out, Catch::Contains("no message after 200ms"));
    h.finish();
}

TEST_CASE("messages: inbox ack marks messages read, all or nothing", "[messages][pg]") {
    Home h("msg-ack");
    h.spawn("alice", {"sleep", "600"});
    h.spawn("bob", {"sleep", "600"});
    long a1 = h.send("alice", "a1")["id"];
    long a2 = h.send("alice", "a2")["id"];
    long b1 = h.send("bob", "b1")["id"];
    long l1 = h.send("leader", "l1", {}, h.as("bob"))["id"];
    auto alice = h.as("alice");
    auto ack = [&](std::vector<std::string> ids, const Env& more = {}) {
        std::vector<std::string> args{"inbox", "ack", "--json"};
        args.insert(args.end(), ids.begin(), ids.end());
        return h.run(args, more);
    };
    auto unread_ids = [&](const std::string& agent) {
        return Home::ids(h.inbox({"--agent", agent, "--unread"}));
    };

    // Unknown id: nothing marked, not even the good one.
    auto unknown = ack({std::to_string(a1), "999999"}, alice);
    CHECK(unknown.exit_code == 3);
    CHECK(unknown.json()["code"] == "not_found");
    CHECK(unread_ids("alice") == std::vector<long>{a1, a2});
    // Another agent's message: refused, nothing marked.
    auto others = ack({std::to_string(a1), std::to_string(b1)}, alice);
    CHECK(others.exit_code == 4);
    CHECK(others.json()["code"] == "refused");
    CHECK(ack({std::to_string(l1)}, alice).exit_code == 4);        // the leader's
    CHECK(ack({std::to_string(l1)}, h.as("bob")).exit_code == 4);  // sent by bob, not to bob
    CHECK(unread_ids("alice") == std::vector<long>{a1, a2});
    CHECK(unread_ids("bob") == std::vector<long>{b1});
    CHECK(unread_ids("leader") == std::vector<long>{l1});
    // Not a number.
    for (std::string bad : {"x", "0", "-1", "1.5", "99999999999999999999999"}) {
        INFO(bad);
        auto r = ack({bad}, alice);
        CHECK(r.exit_code == 2);
        CHECK(r.json()["code"] == "usage");
    }
    CHECK(h.run({"inbox", "ack"}).exit_code == 2);
    CHECK(unread_ids("alice") == std::vector<long>{a1, a2});

    // Her own: acked; again: already read.
    auto ok = ack({std::to_string(a1)}, alice);
    CHECK(ok.exit_code == 0);
    CHECK(ok.json() ==
          Json{{"success", true}, {"acked", Json::array({a1})}, {"alreadyRead", Json::array()}});
    CHECK(unread_ids("alice") == std::vector<long>{a2});
    auto read_at = h.inbox({"--agent", "alice"})[0]["readAt"];
    CHECK(read_at.is_string());
    auto again = ack({std::to_string(a1), std::to_string(a2)}, alice);
    CHECK(again.exit_code == 0);
    CHECK(again.json()["acked"] == Json::array({a2}));
    CHECK(again.json()["alreadyRead"] == Json::array({a1}));
    CHECK(h.inbox({"--agent", "alice"})[0]["readAt"] == read_at);  // kept
    CHECK(unread_ids("alice").empty());

    // The leader acks anyone's, its own included.
    auto lead = ack({std::to_string(b1), std::to_string(l1)});
    CHECK(lead.exit_code == 0);
    CHECK(lead.json()["acked"] == Json::array({b1, l1}));
    CHECK(unread_ids("bob").empty());
    CHECK(unread_ids("leader").empty());
    auto human = h.run({"inbox", "ack", std::to_string(b1)});
    CHECK(human.exit_code == 0);
    CHECK_THAT(human.out, Catch::Contains("already read"));

    // Ids are unique per home: another team's message is not this team's.
    REQUIRE(h.env.run({"create", "msg-ack-other"}, h.extra()).exit_code == 0);
    h.spawn("carol", {"sleep", "600"}, {"--team", "msg-ack-other"});
    auto c1 = h.send("carol", "c1", {"--team", "msg-ack-other"});
    CHECK(c1["team"] == "msg-ack-other");
    long c1_id = c1["id"];
    CHECK(std::set<long>{a1, a2, b1, l1, c1_id}.size() == 5);
    auto foreign = ack({std::to_string(c1_id)});
    CHECK(foreign.exit_code == 3);
    CHECK(h.inbox({"--team", "msg-ack-other", "--agent", "carol", "--unread"}).size() == 1);
    h.finish();
}

TEST_CASE("messages: send --all reaches every live agent but the sender, and only from the leader",
          "[messages]") {
    Home h("msg-all");
    auto none = h.run({"send", "--all", "anyone?", "--json"});
    CHECK(none.exit_code == 4);  // no live agent
    CHECK(none.json()["code"] == "refused");

    h.spawn("alice", {"sleep", "600"});
    h.spawn("bob", {"sleep", "600"});
    h.spawn("gone", {"sh", "-c", "echo bye"});
    h.wait_terminated("gone");

    auto refused = h.run({"send", "--all", "from alice", "--json"}, h.as("alice"));
    CHECK(refused.exit_code == 4);
    CHECK(refused.json()["code"] == "refused");
    CHECK(message_rows(h.env) == 0);

    auto r = h.run({"send", "--all", "stand-up in 5 minutes", "--type", "notice", "--data",
                    R"({"in": "5m"})", "--json"});
    INFO("stdout: " << r.out << " stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    auto docs = r.json();
    REQUIRE(docs.is_array());
    REQUIRE(docs.size() == 2);
    std::set<std::string> to;
    for (const auto& d : docs) {
        CHECK(keys_of(d) == kMessageFields);
        CHECK(d["from"] == "leader");
        CHECK(d["text"] == "stand-up in 5 minutes");
        CHECK(d["type"] == "notice");
        CHECK(d["data"] == Json{{"in", "5m"}});
        to.insert(d["to"].get<std::string>());
    }
    CHECK(to == std::set<std::string>{"alice", "bob"});
    CHECK(docs[0]["id"] != docs[1]["id"]);
    CHECK(h.inbox({}, h.as("alice")).size() == 1);
    CHECK(h.inbox({}, h.as("bob")).size() == 1);
    CHECK(h.inbox({"--agent", "gone"}).empty());
    CHECK(h.inbox().empty());  // not to the sender
    CHECK(message_rows(h.env) == 2);
    h.finish();
}

TEST_CASE("messages: --notify types a notice, never the text, into the recipient's pane",
          "[messages][sanitize]") {
    Home h("msg-notify");
    h.spawn("listener", {"cat"});
    std::string secret = "SECRET-TEXT $(touch nothing) 42";
    auto r = h.run({"send", "--json", "--notify", "listener", secret});
    INFO("stdout: " << r.out << " stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    auto doc = r.json();
    CHECK(doc["notified"] == true);
    CHECK_FALSE(doc.contains("notifyError"));
    CHECK(doc["text"] == secret);
    std::string notice =
        "[team] new message " + doc["id"].dump() + " from leader: read it with team inbox --unread";
    std::string logs;
    CHECK(eventually(
        [&] {
            logs = h.run({"logs", "listener"}).out;
            return logs.find(notice) != std::string::npos;
        },
        5000));
    CHECK(logs.find("SECRET-TEXT") == std::string::npos);
    // The message is stored like any other.
    auto stored = h.inbox({"--agent", "listener"});
    REQUIRE(stored.size() == 1);
    CHECK(stored[0]["text"] == secret);
    CHECK(stored[0]["readAt"].is_null());

    // A typed message names its type; an agent's message names the agent.
    h.spawn("other", {"sleep", "600"});
    auto typed = h.send("listener", "SECRET-TWO", {"--notify", "--type", "status"}, h.as("other"));
    CHECK(typed["notified"] == true);
    std::string typed_notice = "[team] new status message " + typed["id"].dump() +
                               " from other: read it with team inbox --unread";
    CHECK(eventually(
        [&] {
            logs = h.run({"logs", "listener"}).out;
            return logs.find(typed_notice) != std::string::npos;
        },
        5000));
    CHECK(logs.find("SECRET-TWO") == std::string::npos);

    // --all --notify: every recipient's pane.
    auto all = h.run({"send", "--all", "--notify", "SECRET-ALL", "--json"});
    CHECK(all.exit_code == 0);
    auto docs = all.json();
    REQUIRE(docs.size() == 2);
    for (const auto& d : docs) CHECK(d["notified"] == true);

    // The leader has no pane: stored, not notified, still a success.
    auto to_leader = h.run({"send", "--json", "--notify", "leader", "up"}, h.as("listener"));
    CHECK(to_leader.exit_code == 0);
    auto lead_doc = to_leader.json();
    CHECK(lead_doc["notified"] == false);
    CHECK(lead_doc["notifyError"].is_string());
    auto stored_up = h.inbox();
    REQUIRE(stored_up.size() == 1);
    CHECK(stored_up[0]["id"] == lead_doc["id"]);
    CHECK(stored_up[0]["text"] == "up");
    CHECK_FALSE(stored_up[0].contains("notified"));
    auto human = h.run({"send", "--notify", "leader", "up again"}, h.as("listener"));
    CHECK(human.exit_code == 0);
    CHECK_THAT(human.out, Catch::Contains("not notified"));
    auto human_ok = h.run({"send", "--notify", "listener", "SECRET-THREE"});
    CHECK(human_ok.exit_code == 0);
    CHECK_THAT(human_ok.out,
               Catch::StartsWith("sent message ") && Catch::Contains("notified in its pane"));
    std::string id3 = human_ok.out.substr(13, human_ok.out.find(' ', 13) - 13);
    std::string notice3 =
        "[team] new message " + id3 + " from leader: read it with team inbox --unread";
    CHECK(eventually(
        [&] {
            logs = h.run({"logs", "listener"}).out;
            return logs.find(notice3) != std::string::npos;
        },
        5000));
    CHECK(logs.find("SECRET") == std::string::npos);
    h.finish();
}

TEST_CASE("messages: a new agent that takes a terminated agent's name starts with an empty inbox",
          "[messages]") {
    Home h("msg-reuse");
    auto old = h.spawn("worker", {"sleep", "600"});
    auto old1 = h.send("worker", "for the first worker");
    h.send("worker", "also for the first worker", {"--type", "status"});
    REQUIRE(h.inbox({"--agent", "worker"}).size() == 2);
    REQUIRE(h.env.tmux({"kill-pane", "-t", old["paneId"]}).exit_code == 0);
    h.wait_terminated("worker");
    CHECK(h.try_send("worker", "too late").exit_code == 4);

    h.spawn("worker", {"sleep", "600"});
    auto worker = h.as("worker");
    CHECK(h.inbox({}, worker).empty());
    CHECK(h.inbox({"--unread"}, worker).empty());
    CHECK(h.inbox({"--type", "status"}, worker).empty());
    auto wait = h.run({"inbox", "--unread", "--wait", "300ms", "--json"}, worker);
    CHECK(wait.exit_code == 124);
    CHECK(h.inbox({"--agent", "worker"}).empty());  // the leader sees the new one's inbox

    // The old messages are not the new agent's to ack either.
    auto ack_old = h.run({"inbox", "ack", old1["id"].dump(), "--json"}, worker);
    CHECK(ack_old.exit_code == 4);
    CHECK(ack_old.json()["code"] == "refused");

    auto fresh = h.send("worker", "for the second worker");
    CHECK(h.inbox({}, worker) == Json::array({fresh}));
    CHECK(h.inbox({"--agent", "worker"}) == Json::array({fresh}));
    CHECK(message_rows(h.env) == 3);  // the old ones are kept
    h.finish();
}

TEST_CASE("messages: an agent in its pane waits for a message and answers the leader",
          "[messages][sanitize]") {
    Home h("msg-pane");
    auto got = h.env.dir() / "got.json";
    auto rc = h.env.dir() / "rc.txt";
    std::string script =
        "\"$TEAM_BIN\" inbox --unread --mark-read --wait 20s --json > " + sq(got) +
        ".tmp; echo $? > " + sq(rc) + ".tmp; mv " + sq(got) + ".tmp " + sq(got) + "; mv " + sq(rc) +
        ".tmp " + sq(rc) +
        "; \"$TEAM_BIN\" send leader 'got it; thanks' --type status; exec sleep 600";
    h.spawn("helper", {"sh", "-c", script}, {"--env", "TEAM_BIN=" + team::test::team_binary()});
    auto task = h.send("helper", "please look at #7");
    auto reply = h.run({"inbox", "--type", "status", "--wait", "20s", "--json"});
    INFO("stdout: " << reply.out << " stderr: " << reply.err);
    CHECK(reply.exit_code == 0);
    auto answers = reply.json();
    REQUIRE(answers.size() == 1);
    CHECK(answers[0]["from"] == "helper");
    CHECK(answers[0]["to"] == "leader");
    CHECK(answers[0]["text"] == "got it; thanks");

    REQUIRE(eventually([&] { return fs::exists(rc); }, bound(5000)));
    CHECK(slurp(rc) == "0\n");
    auto seen = Json::parse(slurp(got), nullptr, false);
    REQUIRE(seen.is_array());
    REQUIRE(seen.size() == 1);
    CHECK(seen[0]["id"] == task["id"]);
    CHECK(seen[0]["text"] == "please look at #7");
    CHECK(seen[0]["readAt"].is_string());
    CHECK(h.inbox({"--agent", "helper", "--unread"}).empty());
    h.finish();
}

TEST_CASE(
    "messages: 32 senders x 100 messages (25 under ASan) to 4 agents while 4 readers mark them "
    "read: each "
    "is read exactly once",
    "[messages][concurrency]") {
    Home h("msg-stress");
    const int kAgents = 4, kSenders = 32, kPerSender = team::test::kSanitized ? 25 : 100,
              kTotal = kSenders * kPerSender;
    for (int a = 0; a < kAgents; ++a) h.spawn("r" + std::to_string(a), {"sleep", "600"});

    // Even senders are the leader, writing to r0..r3 in turn; odd ones are agents, writing to
    // the three others in turn. The text names the sender and the number.
    struct Expected {
        std::string from, to;
    };
    std::map<std::string, Expected> expected;
    std::map<std::string, int> per_agent;
    for (int s = 0; s < kSenders; ++s) {
        int self = (s / 2) % kAgents;
        for (int i = 0; i < kPerSender; ++i) {
            int to = s % 2 == 0 ? (s + i) % kAgents : (self + 1 + i % 3) % kAgents;
            std::string from = s % 2 == 0 ? "leader" : "r" + std::to_string(self);
            expected["m-" + std::to_string(s) + "-" + std::to_string(i)] = {
                from, "r" + std::to_string(to)};
            ++per_agent["r" + std::to_string(to)];
        }
    }
    REQUIRE(expected.size() == static_cast<size_t>(kTotal));

    const std::string script = R"SH(i=0
while [ "$i" -lt )SH" + std::to_string(kPerSender) +
                               R"SH( ]; do
  if [ "$MODE" = leader ]; then to="r$(( (S + i) % 4 ))"; else to="r$(( (A + 1 + i % 3) % 4 ))"; fi
  "$TEAM_BIN" send --json "$to" "m-$S-$i" || echo "send m-$S-$i failed with $?" >&2
  i=$((i + 1))
done)SH";

    // Readers: each goes round the four inboxes, so they compete for every one of them; the
    // even ones read as the leader (--agent), the odd ones as the agent itself.
    struct ReaderLog {
        std::vector<Json> messages;
        std::map<int, int> codes;
        std::string errors;
        int while_sending = 0;  // messages read while the senders were still at work
    };
    std::vector<ReaderLog> logs(4);
    std::atomic<bool> sending{true};
    std::mutex seen_mutex;
    std::set<long> seen;  // the distinct ids any reader got
    std::atomic<bool> stop{false};
    auto reader = [&](int k) {
        auto& log = logs[k];
        for (int iter = 0; !stop; ++iter) {
            std::string agent = "r" + std::to_string((k + iter) % kAgents);
            std::vector<std::string> args{"inbox",  "--unread", "--mark-read",
                                          "--wait", "1s",       "--json"};
            Env more;
            if (k % 2 == 0) {
                args.insert(args.end(), {"--agent", agent});
            } else {
                more = h.as(agent);
            }
            if (k == 3) args.insert(args.end(), {"--limit", "7"});
            auto r = h.run(args, more);
            ++log.codes[r.exit_code];
            log.errors += r.err;
            auto doc = Json::parse(r.out, nullptr, false);
            if (!doc.is_array()) {
                log.errors += "not a JSON list: [" + r.out + "]\n";
                continue;
            }
            for (auto& m : doc) log.messages.push_back(m);
            if (sending) log.while_sending += static_cast<int>(doc.size());
            std::lock_guard<std::mutex> lock(seen_mutex);
            for (const auto& m : doc) {
                if (m.contains("id") && m["id"].is_number_integer())
                    seen.insert(m["id"].get<long>());
            }
            if (seen.size() >= static_cast<size_t>(kTotal)) stop = true;
        }
    };

    auto start = Steady::now();
    std::vector<std::thread> readers;
    for (int k = 0; k < 4; ++k) readers.emplace_back(reader, k);
    std::vector<Child> senders;
    for (int s = 0; s < kSenders; ++s) {
        Env vars{{"TEAM_HOME", h.env.home().string()},
                 {"TEAM_BIN", team::test::team_binary()},
                 {"S", std::to_string(s)},
                 {"A", std::to_string((s / 2) % kAgents)},
                 {"MODE", s % 2 == 0 ? "leader" : "agent"}};
        if (s % 2 == 1)
            vars["TEAM_AGENT_ID"] = "r" + std::to_string((s / 2) % kAgents) + "@msg-stress";
        senders.emplace_back(std::vector<std::string>{"/bin/sh", "-c", script},
                             team::test::clean_env(h.extra(vars)));
    }

    std::map<long, std::string> sent;  // id -> text
    int send_docs = 0;
    std::string send_errors;
    for (auto& c : senders) {
        auto r = c.wait();
        CHECK(r.exit_code == 0);
        send_errors += r.err;
        bool ok = false;
        auto docs = json_stream(r.out, &ok);
        CHECK(ok);
        for (const auto& d : docs) {
            ++send_docs;
            sent[d["id"].get<long>()] = d["text"].get<std::string>();
        }
    }
    sending = false;
    auto sent_done = Steady::now();
    // The readers go on until they have seen every message (or a generous deadline).
    eventually([&] { return stop.load(); }, 120'000);
    stop = true;
    for (auto& t : readers) t.join();
    auto read_done = Steady::now();
    INFO("3200 sends took " << std::chrono::duration_cast<Ms>(sent_done - start).count()
                            << " ms; all read after "
                            << std::chrono::duration_cast<Ms>(read_done - start).count() << " ms");

    // Every send succeeded, with no lock error anywhere.
    INFO("what the senders printed on stderr: " << send_errors.substr(0, 4000));
    CHECK(send_errors.empty());
    CHECK_THAT(send_errors, !Catch::Contains("database is locked") && !Catch::Contains("busy"));
    CHECK(send_docs == kTotal);
    CHECK(sent.size() == static_cast<size_t>(kTotal));
    std::set<std::string> sent_texts;
    for (const auto& [id, text] : sent) sent_texts.insert(text);
    CHECK(sent_texts.size() == static_cast<size_t>(kTotal));

    // Every message read exactly once: none lost, none twice, each as it was sent.
    std::map<long, int> times_read;
    int wrong = 0, unmarked = 0;
    for (int k = 0; k < 4; ++k) {
        INFO("reader " << k);
        CHECK(logs[k].errors.empty());
        CHECK_THAT(logs[k].errors, !Catch::Contains("database is locked"));
        for (const auto& [code, n] : logs[k].codes) {
            INFO("exit code " << code << " (" << n << " times)");
            CHECK((code == 0 || code == 124));
        }
        for (const auto& m : logs[k].messages) {
            long id = m["id"].get<long>();
            ++times_read[id];
            auto it = sent.find(id);
            auto want = expected.find(m["text"].get<std::string>());
            if (it == sent.end() || want == expected.end() || it->second != m["text"] ||
                m["from"] != want->second.from || m["to"] != want->second.to ||
                m["team"] != "msg-stress" || m["type"] != "message") {
                ++wrong;
            }
            if (!m["readAt"].is_string()) ++unmarked;
        }
    }
    int twice = 0, lost = 0;
    for (const auto& [id, n] : times_read) twice += n > 1 ? 1 : 0;
    for (const auto& [id, text] : sent) lost += times_read.count(id) ? 0 : 1;
    CHECK(twice == 0);
    CHECK(lost == 0);
    CHECK(wrong == 0);
    CHECK(unmarked == 0);
    CHECK(times_read.size() == static_cast<size_t>(kTotal));
    // The readers did compete with the senders, not only pick up what was left at the end.
    int while_sending = 0;
    for (const auto& log : logs) while_sending += log.while_sending;
    CHECK(while_sending > 0);

    // The store agrees: every message stored once, in the right inbox, none left unread.
    CHECK(message_rows(h.env) == kTotal);
    for (int a = 0; a < kAgents; ++a) {
        std::string agent = "r" + std::to_string(a);
        INFO(agent);
        CHECK(h.inbox({"--agent", agent, "--unread"}).empty());
        CHECK(h.inbox({"--agent", agent}).size() == static_cast<size_t>(per_agent[agent]));
    }
    h.finish();
}
