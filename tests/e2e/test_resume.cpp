// Surviving a reboot (SPEC 19), end to end on real tmux, real processes and a real git
// repository: every process of a home SIGKILLed, its tmux server included, as a machine's crash
// ends them; then `team resume`. Each lost agent starts again under its own record, in its own
// worktree with its uncommitted work, its inbox as it was and the tasks nobody took; one stopped
// on purpose only when named; --env values never in the store; what cannot start refused with
// why and nothing started; two resumes at once, and resumes SIGKILLed at random points, leave
// each agent live exactly once. (The real agents' conversations: tests/agents/resume.mjs; an ACP
// agent's session/load: test_acp.cpp.)

#include <signal.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "base/text.hpp"
#include "tests/support/agents_home.hpp"
#include "tests/support/git_repo.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/mcp_call.hpp"

using team::test::AgentsHome;
using team::test::bound;
using team::test::eventually;
using team::test::git_ok;
using team::test::slurp;
using team::test::steady;
using team::test::write_file;
using Env = std::map<std::string, std::string>;
using Json = nlohmann::json;
using team::test::mcp_call;
namespace fs = std::filesystem;

namespace {

// A home whose team works in a repository of its own.
class Home : public AgentsHome {
  public:
    explicit Home(const std::string& team) : AgentsHome(team, false) {
        repo = env.dir() / "repo";
        fs::create_directories(repo);
        for (std::vector<std::string> args :
             {std::vector<std::string>{"init", "--quiet", "--initial-branch=main"},
              {"config", "user.name", "Test"},
              {"config", "user.email", "test@example.com"},
              {"config", "commit.gpgsign", "false"}}) {
            git_ok(repo, args);
        }
        write_file(repo / "README.md", "hello\n");
        git_ok(repo, {"add", "-A"});
        git_ok(repo, {"commit", "--quiet", "-m", "first"});
        ok({"create", team, "--cwd", repo.string(), "--repo", repo.string()});
    }

    // An agent that notes each start of its own (a line in `runs(name)`), says its SECRET, then
    // waits; with a worktree of its own when asked.
    Json spawn_noting(const std::string& name, bool worktree, const Env& vars = {}) const {
        std::vector<std::string> args{"spawn", name, "--env", mark.entry()};
        if (worktree) args.push_back("--worktree");
        for (const auto& [k, v] : vars) args.insert(args.end(), {"--env", k + "=" + v});
        args.insert(args.end(), {"--", "bash", "-c",
                                 "echo \"started ${SECRET-}\"; echo run >> " +
                                     team::shell_quote(runs(name).string()) + "; exec sleep 600"});
        return ok(args);
    }

    fs::path runs(const std::string& name) const { return env.dir() / (name + ".runs"); }
    int run_count(const std::string& name) const {
        std::ifstream in(runs(name));
        int n = 0;
        for (std::string line; std::getline(in, line);) n += line == "run";
        return n;
    }
    fs::path worktree(const std::string& name) const {
        return env.home() / "worktrees" / team() / name;
    }

    // Every process of the home SIGKILLed, its tmux server included, as a crash ends them;
    // returns once none is left.
    void reboot() const {
        auto server = env.tmux({"display-message", "-p", "#{pid}"});
        bool gone = mark.kill_all_within(5000);
        if (server.exit_code == 0) ::kill(std::stoi(server.out), SIGKILL);
        REQUIRE(gone);
        REQUIRE(eventually([&] { return !server_running(); }, bound(5000)));
    }

    // What a refused resume must leave as it was.
    std::string snapshot() const {
        auto agents = ok({"agents", "--all"});
        for (auto& a : agents) a.erase("activity");
        return steady(agents).dump() + ok({"task", "list"}).dump() +
               ok({"inbox", "--agent", "w1"}).dump();
    }

    // The live agents' processes that run `sleep 600`: one per live agent.
    int sleepers() const {
        int n = 0;
        for (pid_t pid : mark.alive()) {
            std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
            std::string cmd((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            if (cmd == std::string("sleep") + '\0' + "600" + '\0') ++n;
        }
        return n;
    }

    fs::path repo;
};

Json outcome_of(const Json& doc, const std::string& name) {
    for (const auto& a : doc["agents"]) {
        if (a["name"] == name) return a;
    }
    return nullptr;
}

}  // namespace

TEST_CASE(
    "a simulated reboot: team resume brings each lost agent back under its record, in its "
    "worktree, with its inbox and the tasks nobody took",
    "[resume][pg]") {
    Home h("rs-reboot");
    h.spawn_noting("w1", true, {{"SECRET", "s3cr3t-first"}});
    h.spawn_noting("w2", false);
    REQUIRE(eventually([&] { return h.run_count("w1") == 1; }, bound(5000)));
    auto before = h.agent("w1");
    // Uncommitted work, a message read and one not, a task held, one held and taken meanwhile.
    write_file(h.worktree("w1") / "notes.txt", "work in progress\n");
    h.ok({"send", "w1", "read this now"});
    REQUIRE(h.ok({"inbox", "--unread", "--mark-read"}, h.as("w1")).size() == 1);
    h.ok({"send", "w1", "read this after the reboot"});
    std::string held = h.ok({"task", "add", "held by w1"})["id"];
    std::string taken = h.ok({"task", "add", "taken meanwhile"})["id"];
    h.ok({"task", "claim", held}, h.as("w1"));
    h.ok({"task", "claim", taken}, h.as("w1"));
    auto epoch = h.task(held)["epoch"].get<long long>();
    // w2 is stopped on purpose: --all leaves it.
    h.ok({"kill-agent", "w2", "--force"});

    h.reboot();
    auto lost = h.find(h.agents(), "w1");
    CHECK(lost["status"] == "terminated");
    CHECK(lost["exitReason"] == "lost");
    CHECK(h.task(held)["owner"].is_null());
    h.ok({"task", "claim", taken});  // the leader takes it

    // The plan: w1 only, fresh (a plain command has no conversation team can resume).
    auto unchanged = h.snapshot();
    auto plan = h.ok({"resume", "--all", "--dry-run"}, {{"SECRET", "s3cr3t-second"}});
    CHECK(plan["dryRun"] == true);
    REQUIRE(plan["agents"].size() == 1);
    CHECK(plan["agents"][0]["name"] == "w1");
    CHECK(plan["agents"][0]["outcome"] == "fresh");
    CHECK_THAT(plan["agents"][0]["why"].get<std::string>(), Catch::Contains("preset"));
    CHECK(h.snapshot() == unchanged);
    CHECK(h.run_count("w1") == 1);

    // The secret comes from the environment of whoever resumes.
    auto doc = h.ok({"resume", "--all"}, {{"SECRET", "s3cr3t-second"}});
    REQUIRE(doc["agents"].size() == 1);
    auto w1 = doc["agents"][0];
    CHECK(w1["name"] == "w1");
    CHECK(w1["team"] == "rs-reboot");
    CHECK(w1["outcome"] == "fresh");
    CHECK(w1["tasks"] == Json::array({held}));
    CHECK(w1["worktree"] == h.worktree("w1").string());
    CHECK(w1["agent"]["status"] == "active");
    // Started again (its command notes the start once it runs: waited for, not assumed).
    CHECK(eventually([&] { return h.run_count("w1") == 2; }, bound(5000)));
    auto now = h.agent("w1");
    CHECK(now["status"] == "active");
    CHECK(now["createdAt"] == before["createdAt"]);  // its own record, not a new one
    CHECK(now["cwd"] == h.worktree("w1").string());
    CHECK(eventually(
        [&] {
            return h.ok({"logs", "w1"})["output"].get<std::string>().find(
                       "started s3cr3t-second") != std::string::npos;
        },
        bound(5000)));
    // Its worktree as it left it, its inbox as it was, the task nobody took at a new epoch.
    CHECK(slurp(h.worktree("w1") / "notes.txt") == "work in progress\n");
    CHECK_THAT(git_ok(h.worktree("w1"), {"status", "--porcelain"}),
               Catch::Contains("?? notes.txt"));
    auto inbox = h.ok({"inbox", "--agent", "w1"});
    REQUIRE(inbox.size() == 2);
    CHECK(inbox[0]["readAt"].is_string());
    CHECK(inbox[1]["readAt"].is_null());
    CHECK(inbox[1]["text"] == "read this after the reboot");
    auto task = h.task(held);
    CHECK(task["owner"] == "w1");
    CHECK(task["status"] == "in_progress");
    CHECK(task["epoch"].get<long long>() == epoch + 2);
    CHECK(h.task(taken)["owner"] == "leader");
    // Its --env value was never written to the store: only its name.
    for (const auto& entry : fs::directory_iterator(h.env.home())) {
        if (entry.path().filename().string().rfind("team.db", 0) != 0) continue;
        INFO(entry.path());
        CHECK(slurp(entry.path()).find("s3cr3t-") == std::string::npos);
    }
    CHECK(fs::is_empty(h.env.home() / "spawn"));  // each taken by its supervisor

    // One stopped on purpose comes back when named; a live one or an unknown one is refused.
    auto w2 = h.ok({"resume", "w2"});
    CHECK(w2["agents"][0]["outcome"] == "fresh");
    CHECK(h.agent("w2")["status"] == "active");
    auto r = h.json_run({"resume", "w1"});
    CHECK(r.exit_code == 4);
    CHECK_THAT(r.json()["error"].get<std::string>(), Catch::Contains("is live"));
    CHECK(h.json_run({"resume", "w9"}).exit_code == 3);
    CHECK(h.activity("agent_resumed").size() == 2);
    CHECK(h.sleepers() == 2);

    h.ok({"teardown"});
    h.check_nothing_left();
}

TEST_CASE(
    "resume refuses what it cannot start, naming why, and starts nothing: a worktree deleted "
    "by hand, an --env not set, bad names, not the leader",
    "[resume]") {
    Home h("rs-refuse");
    h.spawn_noting("w1", true);
    h.spawn_noting("w2", false, {{"TOKEN", "t0k3n"}});
    REQUIRE(
        eventually([&] { return h.run_count("w1") == 1 && h.run_count("w2") == 1; }, bound(5000)));
    h.reboot();
    h.agents();  // recorded lost

    // Its worktree deleted by hand (as a person would): refused, with why and what to do.
    fs::remove_all(h.worktree("w1"));
    auto unchanged = h.snapshot();
    auto r = h.json_run({"resume", "w1"});
    CHECK(r.exit_code == 4);
    CHECK_THAT(r.json()["error"].get<std::string>(), Catch::Contains("is gone"));
    CHECK_THAT(r.json()["error"].get<std::string>(), Catch::Contains("nothing was started"));
    CHECK(h.snapshot() == unchanged);
    // An --env whose value this environment does not have: refused, naming it; given, started.
    r = h.json_run({"resume", "w2"});
    CHECK(r.exit_code == 4);
    CHECK_THAT(r.json()["error"].get<std::string>(), Catch::Contains("--env TOKEN"));
    CHECK(h.snapshot() == unchanged);
    CHECK(h.ok({"resume", "w2"}, {{"TOKEN", "again"}})["agents"][0]["outcome"] == "fresh");
    CHECK(eventually([&] { return h.run_count("w2") == 2; }, bound(5000)));
    // --all: what cannot start is skipped with why; the rest starts.
    auto all = h.ok({"resume", "--all"});
    auto skipped = outcome_of(all, "w1");
    REQUIRE(skipped.is_object());
    CHECK(skipped["outcome"] == "skipped");
    CHECK_THAT(skipped["why"].get<std::string>(), Catch::Contains("worktree"));
    CHECK(outcome_of(all, "w2").is_null());  // live

    // The MCP face gives the same plan as the command line, and the same refusals.
    auto cli_plan = h.ok({"resume", "--all", "--dry-run"});
    auto mcp_plan = mcp_call(h, "agent_resume", {{"all", true}, {"dry_run", true}});
    CHECK(mcp_plan["structuredContent"] == cli_plan);
    auto hostile = mcp_call(h, "agent_resume", {{"names", {"$(touch /tmp/x)"}}});
    CHECK(hostile["isError"] == true);
    CHECK(hostile["structuredContent"]["code"] == "usage");
    auto live = mcp_call(h, "agent_resume", {{"names", {"w2"}}});
    CHECK(live["isError"] == true);
    CHECK(live["structuredContent"]["code"] == "refused");

    // Bad input: each a usage error, nothing changed.
    unchanged = h.snapshot();
    for (const std::string& bad :
         {std::string("a;b"), std::string("$(touch /tmp/x)"), std::string("a\nb"),
          std::string("\xC3\xBC"), std::string("'q\""), std::string(100000, 'a')}) {
        INFO(bad.substr(0, 20));
        CHECK(h.json_run({"resume", bad}).exit_code == 2);
    }
    CHECK(h.json_run({"resume"}).exit_code == 2);
    CHECK(h.json_run({"resume", "w1", "--all"}).exit_code == 2);
    CHECK(h.json_run({"resume", "--all", "--dry-run=maybe"}).exit_code == 2);
    CHECK(h.json_run({"resume", "w1"}, h.as("w2")).exit_code == 4);  // not the leader
    CHECK(h.snapshot() == unchanged);

    h.ok({"teardown"});
    h.check_nothing_left();
}

TEST_CASE(
    "two resumes at once start each agent once, and resumes SIGKILLed at random points, then run "
    "again, leave each agent live exactly once, its task and inbox kept",
    "[resume]") {
    Home h("rs-crash");
    const std::vector<std::string> names{"a1", "a2", "a3", "a4"};
    std::map<std::string, std::string> tasks;
    for (const auto& n : names) {
        h.spawn_noting(n, false);
        tasks[n] = h.ok({"task", "add", "for " + n})["id"];
        h.ok({"task", "claim", tasks[n]}, h.as(n));
        h.ok({"send", n, "hello " + n});
    }
    h.reboot();
    h.agents();

    auto check_each_once = [&] {
        auto live = h.ok({"agents"});
        CHECK(live.size() == names.size());
        CHECK(h.sleepers() == static_cast<int>(names.size()));
        CHECK(h.panes().size() == names.size());
        for (const auto& n : names) {
            INFO(n);
            CHECK(h.agent(n)["status"] == "active");
            CHECK(h.task(tasks[n])["owner"] == n);
            auto inbox = h.ok({"inbox", "--agent", n});
            REQUIRE(inbox.size() == 1);
            CHECK(inbox[0]["readAt"].is_null());
        }
    };

    // Two at once: each agent is started by one of them.
    auto first = h.env.start({"--json", "resume", "--all"}, h.extra());
    auto second = h.env.start({"--json", "resume", "--all"}, h.extra());
    auto a = first.wait();
    auto b = second.wait();
    INFO("first: " << a.out << a.err << "\nsecond: " << b.out << b.err);
    REQUIRE(a.exit_code == 0);
    REQUIRE(b.exit_code == 0);
    std::map<std::string, int> started;
    for (const auto* r : {&a, &b}) {
        auto doc = r->json();
        for (const auto& o : doc["agents"]) {
            if (o["outcome"] == "fresh") ++started[o["name"]];
        }
    }
    for (const auto& n : names) CHECK(started[n] == 1);
    check_each_once();

    // SIGKILLed at random points of its work, then run again.
    std::mt19937 random(std::random_device{}());
    for (int round = 0; round < 4; ++round) {
        INFO("round " << round);
        h.reboot();
        h.agents();
        auto killed = h.env.start({"--json", "resume", "--all"}, h.extra());
        std::this_thread::sleep_for(std::chrono::milliseconds(random() % 250));
        ::kill(killed.pid(), SIGKILL);
        killed.wait();
        auto again = h.ok({"resume", "--all"});
        check_each_once();
    }
    h.ok({"teardown"});
    h.check_nothing_left();
}
