// What each agent is doing, and who needs a person (SPEC 17), end to end on real tmux and real
// processes: the screen as a source (working, then idle), `team wait`, a prompt that is taken or
// not, the attention a hook's report of a wait brings (one needs_input per wait, the notify
// command's events), a notify command that fails or hangs, `team config`, and bad input to each.

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "tests/support/agents_home.hpp"
#include "tests/support/helpers.hpp"

using team::test::AgentsHome;
using team::test::bound;
using team::test::eventually;
using team::test::slurp;
using team::test::sq;
using Env = std::map<std::string, std::string>;
using Json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

// The home's own settings are set without a team (TEAM_NAME empty).
const Env kHome{{"TEAM_NAME", ""}};

Json activity_of(const AgentsHome& h, const std::string& name) {
    return h.agent(name)["activity"];
}

// The leader's messages of type needs_input.
Json needs_input(const AgentsHome& h) {
    return h.ok({"inbox", "--type", "needs_input"});
}

// A stand-in for a coding agent whose preset wires hooks: the preset's flags are its arguments,
// which it ignores; it waits.
fs::path hooked_program(const AgentsHome& h) {
    auto path = h.env.dir() / "fake-agent";
    std::ofstream(path) << "#!/bin/sh\nexec sleep 600\n";
    fs::permissions(path, fs::perms(0755));
    return path;
}

// The JSON documents of a notify file, one per line.
std::vector<Json> events_in(const fs::path& file) {
    std::vector<Json> out;
    for (const auto& line : team::test::lines_of(slurp(file))) out.push_back(Json::parse(line));
    return out;
}

}  // namespace

TEST_CASE(
    "activity: a program that prints then goes quiet is working, then idle, and team wait "
    "wakes on it",
    "[attention]") {
    AgentsHome h("att-screen");
    h.ok({"config", "set", "idle-after", "300ms", "--team", h.team()});
    h.spawn("w1", {"sh", "-c", "echo hello; exec sleep 600"});
    // A look says where it came from: its screen.
    CHECK(activity_of(h, "w1")["source"] == "screen");
    auto waited = h.ok({"wait", "w1", "--until", "idle", "--timeout", "20s"});
    CHECK(waited["reached"] == true);
    CHECK(waited["agents"][0]["activity"]["state"] == "idle");
    auto a = activity_of(h, "w1");
    CHECK(a["state"] == "idle");
    CHECK(a["waitingOn"].is_null());
    // It was working first: the log has both changes, in order.
    auto log = h.ok({"activity", "--type", "agent_state"});
    std::vector<std::string> states;
    for (const auto& e : log) states.push_back(e["details"]["state"]);
    REQUIRE(states.size() >= 2);
    CHECK(states[0] == "working");
    CHECK(states[1] == "idle");
    // A program that prints nothing: its screen still from the start, idle too.
    h.spawn("silent", {"sleep", "600"});
    CHECK(h.ok({"wait", "silent", "--until", "idle", "--timeout", "20s"})["reached"] == true);
    // The leader has no activity of its own to claim; a screen never says waiting.
    CHECK(needs_input(h).empty());
    // Ended: the record's end.
    h.ok({"kill-agent", "w1", "--force"});
    CHECK(activity_of(h, "w1")["state"] == "ended");
    h.ok({"wait", "w1", "--until", "ended", "--timeout", "5s"});
    h.finish();
}

TEST_CASE(
    "prompt: sleep does not take the text, a read loop does, and text left unread is never "
    "reported delivered",
    "[attention]") {
    AgentsHome h("att-prompt");
    h.spawn("sleeper", {"sleep", "600"});
    auto r = h.json_run({"prompt", "sleeper", "are you there", "--timeout", "1s"});
    CHECK(r.exit_code == 1);
    auto doc = r.json();
    CHECK(doc["success"] == false);
    CHECK(doc["taken"] == false);
    CHECK(doc["code"] == "failed");
    // What the screen showed: the text, echoed by the terminal, unread.
    CHECK_THAT(doc["screen"].get<std::string>(), Catch::Contains("are you there"));
    auto plain = h.run({"prompt", "sleeper", "still there", "--timeout", "500ms"});
    CHECK(plain.exit_code == 1);
    CHECK_THAT(plain.err, Catch::Contains("did not take the text"));

    h.spawn("reader", {"sh", "-c", "while read -r l; do echo \"got $l\"; done"});
    auto taken = h.ok({"prompt", "reader", "hello there"});
    CHECK(taken["taken"] == true);
    CHECK(taken["how"] == "screen");
    CHECK(eventually([&] {
        return h.run({"logs", "reader"}).out.find("got hello there") != std::string::npos;
    }));
    // --no-enter types only: nothing to take.
    auto typed = h.ok({"prompt", "reader", "half", "--no-enter"});
    CHECK(typed["taken"] == false);
    CHECK(h.run({"prompt", "reader", "x", "--no-enter", "--timeout", "1s"}).exit_code == 2);
    h.finish();
}

TEST_CASE(
    "prompt: an agent that reports, dropping keys while it resumes, gets the text once it can "
    "take it",
    "[attention]") {
    // A resumed Gemini CLI as team meets it: reported idle (SessionStart), it first drops every
    // key without a sign (it has begun resuming and not yet drawn so), then draws "Resuming
    // session..." and still drops them, then shows its input line; a line read there is
    // reported submitted (UserPromptSubmit) as its hook would.
    AgentsHome h("att-resuming");
    auto program = h.env.dir() / "resuming-agent";
    auto got = h.env.dir() / "got";
    std::ofstream(program) << "#!/bin/bash\n"
                           << "stty -echo\n"
                           << "drop() { local end=$((SECONDS + $1)); while [ $SECONDS -lt $end ]; "
                              "do read -r -t 0.1 _; done; }\n"
                           << "echo loading; drop 2\n"
                           << "echo '⠋ Resuming session...'; drop 2\n"
                           << "printf '\\033[2J\\033[H> '; stty echo; read -r line\n"
                           << "printf '%s\\n' \"$line\" >> " << sq(got.string()) << "\n"
                           << sq(team::test::team_binary()) << " --home "
                           << sq(h.env.home().string()) << " __report " << sq(h.id("w1"))
                           << " claude UserPromptSubmit "
                           << "<<< '{\"hook_event_name\":\"UserPromptSubmit\",\"prompt\":\"x\"}'\n"
                           << "exec sleep 600\n";
    fs::permissions(program, fs::perms(0755));
    h.ok({"spawn", "w1", "--preset", "claude", "--env", h.mark.entry(), "--", program.string()});
    h.report("w1", "SessionStart", {{"hook_event_name", "SessionStart"}, {"source", "resume"}});
    auto taken = h.ok({"prompt", "w1", "after the resume", "--timeout", "15s"});
    CHECK(taken["taken"] == true);
    CHECK(taken["how"] == "report");
    // Read once: the text typed again after its keys were dropped, not while it resumed.
    CHECK(slurp(got) == "after the resume\n");
    h.ok({"kill-agent", "w1", "--force"});
    h.finish();
}

TEST_CASE(
    "attention: a wait reported by the agent's hooks tells the leader once, and the "
    "notify command each event",
    "[attention][sanitize]") {
    AgentsHome h("att-hooks");
    auto events = h.env.dir() / "events.jsonl";
    h.ok({"config", "set", "notify", "cat >> " + sq(events)}, kHome);
    h.ok({"spawn", "w1", "--preset", "claude", "--env", h.mark.entry(), "--",
          hooked_program(h).string()});
    auto a = activity_of(h, "w1");
    CHECK(a["state"] == "starting");
    CHECK(a["source"] == "hooks");

    // A prompt submitted, then a permission asked for a command.
    h.report("w1", "UserPromptSubmit", {{"hook_event_name", "UserPromptSubmit"}, {"prompt", "x"}});
    CHECK(activity_of(h, "w1")["state"] == "working");
    h.report("w1", "PermissionRequest",
             {{"hook_event_name", "PermissionRequest"},
              {"tool_name", "Bash"},
              {"tool_input", {{"command", "rm -rf build; echo $(whoami)"}}}});
    a = activity_of(h, "w1");
    CHECK(a["state"] == "waiting");
    CHECK(a["source"] == "hooks");
    CHECK(a["waitingOn"]["kind"] == "permission");
    CHECK(a["waitingOn"]["tool"] == "Bash");
    CHECK(a["waitingOn"]["command"] == "rm -rf build; echo $(whoami)");
    auto told = needs_input(h);
    REQUIRE(told.size() == 1);
    CHECK(told[0]["from"] == "w1");
    CHECK(told[0]["data"]["waitingOn"]["command"] == "rm -rf build; echo $(whoami)");
    CHECK(told[0]["data"]["answer"] == "team attach w1 --team " + h.team());
    CHECK_THAT(told[0]["text"].get<std::string>(), Catch::Contains("Bash"));

    // The same wait again (Claude Code's late notification of the dialog): nothing more, and
    // what is known of it stays.
    h.report("w1", "Notification",
             {{"hook_event_name", "Notification"}, {"notification_type", "permission_prompt"}});
    CHECK(needs_input(h).size() == 1);
    CHECK(activity_of(h, "w1")["waitingOn"]["command"] == "rm -rf build; echo $(whoami)");
    // Answered: working, then its turn ends.
    h.report("w1", "PostToolUse", {{"hook_event_name", "PostToolUse"}, {"tool_name", "Bash"}});
    CHECK(activity_of(h, "w1")["state"] == "working");
    h.report("w1", "Stop", {{"hook_event_name", "Stop"}});
    CHECK(activity_of(h, "w1")["state"] == "idle");
    // A wait on something else is a new wait: told again.
    h.report("w1", "PreToolUse",
             {{"hook_event_name", "PreToolUse"},
              {"tool_name", "AskUserQuestion"},
              {"tool_input", {{"questions", {{{"question", "Which branch?"}}}}}}});
    a = activity_of(h, "w1");
    CHECK(a["waitingOn"]["kind"] == "question");
    CHECK(a["waitingOn"]["text"] == "Which branch?");
    CHECK(needs_input(h).size() == 2);
    // A screen never speaks for an agent with hooks; garbage on stdin changes nothing.
    auto garbage = h.run({"__report", h.id("w1"), "claude", "Stop", "{not json"});
    CHECK(garbage.exit_code == 0);
    CHECK(h.run({"__report", "nobody@nowhere", "claude", "Stop", "{}"}).exit_code == 0);
    CHECK(h.run({"__report", h.id("w1"), "vim", "Stop", "{}"}).exit_code == 0);

    // The notify command got one JSON document per event: two waits, an idle; then an end.
    h.ok({"kill-agent", "w1", "--force"});
    std::vector<Json> got;
    CHECK(eventually([&] {
        got = events_in(events);
        for (const auto& e : got) {
            if (e["event"] == "ended") return true;
        }
        return false;
    }));
    std::map<std::string, int> count;
    for (const auto& e : got) {
        count[e["event"].get<std::string>()]++;
        CHECK(e["agentId"] == h.id("w1"));
        CHECK(e["team"] == h.team());
    }
    CHECK(count["needs_input"] == 2);
    CHECK(count["ended"] == 1);
    CHECK(count["idle"] >= 1);
    for (const auto& e : got) {
        if (e["event"] == "needs_input" && e["waitingOn"]["kind"] == "permission") {
            CHECK(e["waitingOn"]["command"] == "rm -rf build; echo $(whoami)");
            CHECK(e["answer"].is_string());
        }
        if (e["event"] == "ended") CHECK(e["exitReason"] == "force_killed");
    }
    h.finish();
}

TEST_CASE(
    "notify: a command that fails or hangs is logged, killed after its bound, and delays "
    "nothing",
    "[attention]") {
    AgentsHome h("att-notify");
    h.spawn("w1", {"sh", "-c", "while read -r l; do echo \"got $l\"; done"});
    h.ok({"config", "set", "idle-after", "200ms", "--team", h.team()});

    // It fails, saying why on stderr.
    h.ok({"config", "set", "notify", "echo 'no route to ntfy' >&2; exit 3"}, kHome);
    h.ok({"prompt", "w1", "one"});
    Json failed;
    CHECK(eventually(
        [&] {
            failed = h.ok({"activity", "--type", "notify_failed"});
            return !failed.empty();
        },
        bound(10000)));
    REQUIRE(!failed.empty());
    CHECK(failed[0]["details"]["reason"] == "it exited with 3");
    CHECK_THAT(failed[0]["details"]["stderr"].get<std::string>(), Catch::Contains("no route"));

    // It hangs: the report that started it returned at once (the agent's state moved on), and
    // the runner kills it after notify-timeout.
    auto marker = h.env.dir() / "hung";
    h.ok({"config", "set", "notify-timeout", "500ms"}, kHome);
    h.ok({"config", "set", "notify", "touch " + sq(marker) + "; exec sleep 31.234"}, kHome);
    h.ok({"prompt", "w1", "two"});
    CHECK(eventually(
        [&] {
            auto all = h.ok({"activity", "--type", "notify_failed"});
            for (const auto& e : all) {
                if (e["details"]["reason"] == "it ran longer than 500ms and was killed")
                    return true;
            }
            return false;
        },
        bound(10000)));
    CHECK(fs::exists(marker));
    // Nothing of it is left: its process group was killed.
    CHECK(eventually([&] { return std::system("! pgrep -fx 'sleep 31.234' >/dev/null") == 0; }));
    h.ok({"wait", "w1", "--until", "idle", "--timeout", "10s"});
    h.finish();
}

TEST_CASE("config: keys, where each value comes from, and bad input that changes nothing",
          "[attention]") {
    AgentsHome h("att-config");
    auto listed = h.ok({"config"}, kHome);
    REQUIRE(listed.is_array());
    std::map<std::string, Json> by_key;
    for (const auto& e : listed) by_key[e["key"]] = e;
    CHECK(by_key["notify"]["from"] == "unset");
    CHECK(by_key["idle-after"]["value"] == "5s");
    CHECK(by_key["idle-after"]["from"] == "default");

    // The home's, then the team's over it.
    CHECK(h.ok({"config", "set", "idle-after", "2s"}, kHome)["from"] == "home");
    CHECK(h.ok({"config", "get", "idle-after"})["from"] == "home");  // seen from the team
    auto set = h.ok({"config", "set", "idle-after", "1500ms", "--team", h.team()});
    CHECK(set["from"] == "team");
    CHECK(set["value"] == "1500ms");
    CHECK(set["setBy"] == "leader@" + h.team());
    CHECK(h.ok({"config", "get", "idle-after"}, kHome)["value"] == "2s");
    auto unset = h.ok({"config", "unset", "idle-after", "--team", h.team()});
    CHECK(unset["removed"] == true);
    CHECK(unset["from"] == "home");
    CHECK(h.ok({"config", "unset", "idle-after", "--team", h.team()})["removed"] == false);

    // A hostile command is kept exactly as given, and nothing runs when it is set.
    std::string hostile = "echo \"$(touch " + (h.env.dir() / "ran").string() + ")\"; 'q' ☃";
    CHECK(h.ok({"config", "set", "notify", hostile}, kHome)["value"] == hostile);
    CHECK_FALSE(fs::exists(h.env.dir() / "ran"));

    auto before = h.ok({"config"}, kHome);
    auto refused = [&](std::vector<std::string> args, int code, const Env& env) {
        auto r = h.json_run(args, env);
        INFO("team " << args[0] << " " << (args.size() > 1 ? args[1] : "") << " -> " << r.out
                     << r.err);
        CHECK(r.exit_code == code);
        auto doc = r.json();
        CHECK(doc["success"] == false);
        CHECK(doc["error"].get<std::string>().size() > 0);
    };
    refused({"config", "set", "bogus", "1"}, 2, kHome);
    refused({"config", "get", "idle_after"}, 2, kHome);
    refused({"config", "set", "idle-after", "soon"}, 2, kHome);
    refused({"config", "set", "idle-after", "-5s"}, 2, kHome);
    refused({"config", "set", "notify", "line one\nline two"}, 2, kHome);
    refused({"config", "set", "notify", std::string(5000, 'x')}, 2, kHome);
    refused({"config", "set", "notify", "   "}, 2, kHome);
    refused({"config", "set", "notify", "x", "--team", h.team()}, 2, {});
    refused({"config", "set", "idle-after", "1s", "--team", "no-such-team"}, 3, {});
    // A team's settings are its leader's; the home's are no agent's.
    h.spawn("w1", {"sleep", "600"});
    refused({"config", "set", "idle-after", "1s"}, 4, h.as("w1"));
    refused({"config", "unset", "idle-after"}, 4, h.as("w1"));
    Env agent_home = h.as("w1");
    agent_home["TEAM_NAME"] = "";
    refused({"config", "set", "notify", "true"}, 4, agent_home);
    CHECK(h.ok({"config"}, kHome) == before);
    h.finish();
}

TEST_CASE("wait: any or all, the timeout, and bad input", "[attention]") {
    AgentsHome h("att-wait");
    h.ok({"config", "set", "idle-after", "200ms", "--team", h.team()});
    h.spawn("quiet", {"sh", "-c", "echo up; exec sleep 600"});
    h.spawn("busy", {"sh", "-c", "while :; do echo tick; sleep 0.05; done"});
    // One of them will be idle; not both.
    auto any = h.ok({"wait", "quiet", "busy", "--until", "idle", "--any", "--timeout", "20s"});
    CHECK(any["reached"] == true);
    auto r = h.json_run({"wait", "quiet", "busy", "--until", "idle", "--timeout", "1s"});
    CHECK(r.exit_code == 124);
    auto doc = r.json();
    CHECK(doc["success"] == false);
    CHECK(doc["code"] == "timeout");
    CHECK(doc["agents"].size() == 2);
    CHECK_THAT(r.err + doc["error"].get<std::string>(), Catch::Contains("not every agent"));

    CHECK(h.json_run({"wait", "quiet", "--until", "sleeping"}).exit_code == 2);
    CHECK(h.json_run({"wait", "quiet"}).exit_code == 2);  // --until is required
    CHECK(h.json_run({"wait", "--until", "idle"}).exit_code == 2);
    CHECK(h.json_run({"wait", "nobody", "--until", "idle"}).exit_code == 3);
    CHECK(h.json_run({"wait", "quiet", "--until", "idle", "--timeout", "soon"}).exit_code == 2);
    CHECK(h.json_run({"wait", "x;$(reboot)", "--until", "idle"}).exit_code == 3);
    // An agent that has ended is never idle again: refused at once, not at the timeout.
    h.ok({"kill-agent", "quiet", "--force"});
    auto ended = h.json_run({"wait", "quiet", "--until", "working", "--timeout", "10m"});
    CHECK(ended.exit_code == 4);
    CHECK_THAT(ended.json()["error"].get<std::string>(), Catch::Contains("ended"));
    // With --any, the others still count.
    CHECK(h.ok({"wait", "quiet", "busy", "--until", "working", "--any", "--timeout",
                "10s"})["reached"] == true);
    h.finish();
}
