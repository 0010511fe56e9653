// team task add / list / show / claim / update / done (SPEC 6) on the real binary, run as a user
// would, each test on its own temporary home (and, where it spawns agents, its own private tmux
// server). Real agents claim tasks from their panes; their tasks go back to the pool however they
// end. Every test that starts agents proves at its end that none of them is left.
//
// Each test uses a team name of its own (reconciling a lost agent kills processes by their
// TEAM_AGENT_ID, so tests that run in parallel must not share agent ids).
#include <SQLiteCpp/SQLiteCpp.h>
#include <signal.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "proc/process_table.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/marker.hpp"
#include "tests/support/process.hpp"
#include "tests/support/team_home.hpp"

using team::test::alive;
using team::test::Child;
using team::test::eventually;
using team::test::Marker;
using team::test::RunResult;
using team::test::sq;
using team::test::TeamEnv;
using Env = std::map<std::string, std::string>;
using Json = nlohmann::json;
using Ms = std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty()) out.push_back(line);
    }
    return out;
}

std::string warning_for(const std::string& name) {
    return "Reassigned: previous owner " + name + " terminated";
}

// One test's home with a team in it, its marker, and helpers that run `team` there.
class Home : public team::test::TeamHome {
  public:
    using TeamHome::TeamHome;

    // Runs a command that must succeed with --json; returns its document.
    Json ok(std::vector<std::string> args) const {
        args.push_back("--json");
        auto r = run(args);
        INFO("team " << args[0] << " " << (args.size() > 1 ? args[1] : "") << " stdout: " << r.out
                     << " stderr: " << r.err);
        REQUIRE(r.exit_code == 0);
        return r.json();
    }

    Json add(const std::string& subject, std::vector<std::string> options = {}) const {
        std::vector<std::string> args{"task", "add"};
        args.insert(args.end(), options.begin(), options.end());
        args.insert(args.end(), {"--json", "--", subject});
        auto r = run(args);
        INFO("add stdout: " << r.out << " stderr: " << r.err);
        REQUIRE(r.exit_code == 0);
        return r.json();
    }

    Json tasks(std::vector<std::string> options = {}) const {
        std::vector<std::string> args{"task", "list"};
        args.insert(args.end(), options.begin(), options.end());
        auto doc = ok(args);
        REQUIRE(doc.is_array());
        return doc;
    }

    Json task(const std::string& id) const { return ok({"task", "show", id}); }

    std::vector<std::string> ids(std::vector<std::string> options = {}) const {
        std::vector<std::string> out;
        for (const auto& t : tasks(std::move(options))) out.push_back(t["id"].get<std::string>());
        return out;
    }

    Json spawn(const std::string& name, const std::vector<std::string>& command,
               const Env& more = {}) const {
        std::vector<std::string> args{"spawn", name, "--json", "--env", mark.entry()};
        for (const auto& [k, v] : more) args.insert(args.end(), {"--env", k + "=" + v});
        args.push_back("--");
        args.insert(args.end(), command.begin(), command.end());
        auto r = run(args);
        INFO("spawn " << name << " stdout: " << r.out << " stderr: " << r.err);
        REQUIRE(r.exit_code == 0);
        auto doc = r.json();
        REQUIRE(doc["pid"].is_number_integer());
        return doc;
    }

    Json agents() const { return ok({"agents", "--all"}); }

    static Json find(const Json& list, const std::string& name) {
        Json found;
        for (const auto& a : list) {
            if (a["name"] == name) found = a;
        }
        return found;
    }

    Json wait_terminated(const std::string& name) const {
        Json last;
        eventually([&] {
            last = find(agents(), name);
            return last.is_object() && last["status"] == "terminated";
        });
        INFO("agent " << name << ": " << last.dump());
        REQUIRE(last.is_object());
        REQUIRE(last["status"] == "terminated");
        return last;
    }

    // The activity entries of that type, oldest first.
    Json activity(const std::string& type) const { return ok({"activity", "--type", type}); }

    // Everything a task command could change, straight from the database.
    std::string snapshot() const {
        SQLite::Database db((env.home() / "team.db").string());
        return team::test::rows_as_text(
            db, {"SELECT * FROM tasks ORDER BY team_id, id",
                 "SELECT * FROM task_blockers ORDER BY team_id, task_id, blocker",
                 "SELECT id, type, details FROM activity WHERE type NOT IN ('agent_state', "
                 "'worktree_state') ORDER BY id"});
    }
};

// Runs `team ARGS --json`, expects exit `code` with the JSON error of SPEC 1.4, and nothing
// changed.
void check_refused(const Home& h, std::vector<std::string> args, int code,
                   const std::string& message = "") {
    auto before = h.snapshot();
    args.push_back("--json");
    auto r = h.run(args);
    std::string shown;
    for (const auto& a : args) shown += (a.size() > 40 ? a.substr(0, 40) + "..." : a) + " ";
    INFO("team " << shown << "-> " << r.exit_code << " stdout: " << r.out << " stderr: " << r.err);
    CHECK(r.exit_code == code);
    auto doc = Json::parse(r.out, nullptr, false);
    REQUIRE(doc.is_object());
    CHECK(doc["success"] == false);
    static const std::map<int, std::string> names{
        {1, "failed"}, {2, "usage"}, {3, "not_found"}, {4, "refused"}};
    CHECK(doc["code"] == names.at(code));
    if (!message.empty()) CHECK_THAT(doc["error"].get<std::string>(), Catch::Contains(message));
    CHECK(h.snapshot() == before);
}

}  // namespace

TEST_CASE("add, list, show, claim, update and done as a user runs them", "[tasks][sanitize]") {
    Home h("tk-basic");
    auto t = h.add("write the parser", {"--description", "cover every error"});
    CHECK(t["id"] == "1");
    CHECK(t["subject"] == "write the parser");
    CHECK(t["description"] == "cover every error");
    CHECK(t["status"] == "pending");
    CHECK(t["owner"].is_null());
    CHECK(t["blockedBy"] == Json::array());
    CHECK(t["claimedAt"].is_null());
    CHECK(t["warning"].is_null());
    CHECK(t["createdAt"].get<std::string>().size() == 24);  // 2026-11-22T10:04:05.123Z
    CHECK(t["updatedAt"] == t["createdAt"]);
    auto keys = std::set<std::string>{};
    for (const auto& [k, v] : t.items()) keys.insert(k);
    CHECK(keys == std::set<std::string>{"id", "subject", "description", "status", "owner",
                                        "blockedBy", "claimedAt", "warning", "createdAt",
                                        "updatedAt", "epoch"});
    auto second = h.add("test the parser", {"--blocked-by", "1"});
    CHECK(second["id"] == "2");
    CHECK(second["blockedBy"] == Json{"1"});
    CHECK(h.task("2") == second);
    CHECK(h.ids() == std::vector<std::string>{"1", "2"});
    CHECK(h.ids({"--available"}) == std::vector<std::string>{"1"});

    auto claimed = h.ok({"task", "claim"});
    CHECK(claimed["id"] == "1");
    CHECK(claimed["status"] == "in_progress");
    CHECK(claimed["owner"] == "leader");
    CHECK(claimed["claimedAt"].is_string());
    auto done = h.ok({"task", "done", "1"});
    CHECK(done["status"] == "completed");
    CHECK(h.ids({"--available"}) == std::vector<std::string>{"2"});
    auto updated = h.ok({"task", "update", "2", "--subject", "test it all", "--status", "deleted"});
    CHECK(updated["subject"] == "test it all");
    CHECK(updated["status"] == "deleted");
    CHECK(h.ids() == std::vector<std::string>{"1"});
    CHECK(h.ids({"--status", "deleted"}) == std::vector<std::string>{"2"});

    // Human output: a table with one row per task, a line for the rest.
    auto human = h.run({"task", "list", "--status", "completed"});
    CHECK(human.exit_code == 0);
    CHECK_THAT(human.out, Catch::Contains("ID") && Catch::Contains("STATUS") &&
                              Catch::Contains("write the parser"));
    CHECK(lines_of(human.out).size() == 2);
    CHECK_THAT(h.run({"task", "show", "1"}).out, Catch::Contains("completed"));
    CHECK_THAT(h.run({"task", "claim", "2"}).err, Catch::StartsWith("team: error: "));
    CHECK_THAT(h.run({"task", "list", "--available"}).out, Catch::Contains("no available tasks"));

    // Task ids are per team: a second team of the home starts again at 1.
    REQUIRE(h.env.run({"create", "tk-basic-two", "--cwd", h.env.dir().string()}).exit_code == 0);
    auto other =
        h.run({"task", "add", "the other team's", "--json"}, {{"TEAM_NAME", "tk-basic-two"}});
    REQUIRE(other.exit_code == 0);
    CHECK(other.json()["id"] == "1");
    CHECK(h.task("1")["subject"] == "write the parser");
    CHECK(h.add("third")["id"] == "3");
}

TEST_CASE("every task command's bad input is its exit code, and nothing changes",
          "[tasks][input]") {
    Home h("tk-bad");
    h.spawn("worker", {"sleep", "600"});
    h.spawn("gone", {"true"});
    h.wait_terminated("gone");
    h.add("one");
    h.ok({"task", "claim", "1", "--as", "worker"});
    h.add("two", {"--blocked-by", "1"});

    // add
    check_refused(h, {"task", "add", ""}, 2, "empty");
    check_refused(h, {"task", "add"}, 2);
    check_refused(h, {"task", "add", std::string(4097, 's')}, 2, "4097");
    check_refused(h, {"task", "add", "bad \xff utf-8"}, 2, "UTF-8");
    check_refused(h, {"task", "add", "s", "--description", "cut \xe6\x97"}, 2, "UTF-8");
    check_refused(h, {"task", "add", "s", "--blocked-by", "9"}, 3, "task 9 not found");
    check_refused(h, {"task", "add", "s", "--blocked-by", "1", "--blocked-by", "9"}, 3);
    for (const char* bad : {"x", "0", "-1", "1.5"}) {
        check_refused(h, {"task", "add", "s", "--blocked-by=" + std::string(bad)}, 2,
                      "bad task id");
    }
    check_refused(h, {"task", "add", "s", "--owner", "nobody"}, 3, "nobody");
    check_refused(h, {"task", "add", "s", "--owner", "gone"}, 4, "terminated");
    check_refused(h, {"task", "add", "s", "--owner", "bad name"}, 2);
    // list
    check_refused(h, {"task", "list", "--status", "done"}, 2, "done");
    check_refused(h, {"task", "list", "--owner", "nobody"}, 3, "nobody");
    check_refused(h, {"task", "list", "-t", "tk-nope"}, 3);
    // show
    check_refused(h, {"task", "show", "9"}, 3, "task 9 not found");
    check_refused(h, {"task", "show", "x"}, 2);
    check_refused(h, {"task", "show"}, 2);
    // claim
    check_refused(h, {"task", "claim", "9"}, 3);
    for (const char* bad : {"x", "0", "-1", "1.5"}) {
        check_refused(h, {"task", "claim", bad}, 2, "bad task id");
    }
    check_refused(h, {"task", "claim", "1"}, 4, "already claimed by 'worker'");
    check_refused(h, {"task", "claim", "1", "--as", "worker"}, 4, "already claimed by you");
    check_refused(h, {"task", "claim", "2"}, 4, "blocked by 1 (in_progress)");
    check_refused(h, {"task", "claim"}, 3, "no available task");
    check_refused(h, {"task", "claim", "1", "--as", "nobody"}, 3);
    // update
    check_refused(h, {"task", "update", "2"}, 2, "nothing to change");
    check_refused(h, {"task", "update", "2", "--owner", "worker", "--unassign"}, 2);
    check_refused(h, {"task", "update", "2", "--status", "done"}, 2);
    check_refused(h, {"task", "update", "2", "--subject", ""}, 2);
    check_refused(h, {"task", "update", "9", "--status", "completed"}, 3);
    check_refused(h, {"task", "update", "x", "--status", "completed"}, 2);
    check_refused(h, {"task", "update", "2", "--owner", "nobody"}, 3);
    check_refused(h, {"task", "update", "2", "--owner", "gone"}, 4);
    check_refused(h, {"task", "update", "2", "--status", "in_progress"}, 4, "blocked by 1");
    // done
    check_refused(h, {"task", "done", "9"}, 3);
    check_refused(h, {"task", "done", "x"}, 2);
    check_refused(h, {"task", "done"}, 2);

    // Texts over the argv limit come on stdin ('-'): more than 1 MiB is refused, 1 MiB is kept.
    auto before = h.snapshot();
    auto big = h.env
                   .start({"task", "add", "big", "--description", "-"}, h.extra(),
                          std::string((1 << 20) + 1, 'd'))
                   .wait();
    CHECK(big.exit_code == 2);
    CHECK(h.snapshot() == before);
    auto fits = h.env
                    .start({"task", "add", "fits", "--description", "-", "--json"}, h.extra(),
                           std::string(1 << 20, 'd'))
                    .wait();
    CHECK(fits.exit_code == 0);
    CHECK(fits.json()["description"].get<std::string>().size() == 1 << 20);
    CHECK(h.add(std::string(4096, 's'))["subject"].get<std::string>().size() == 4096);
    h.finish();
}

TEST_CASE("hostile subjects and descriptions are stored byte for byte and run nothing",
          "[tasks][input]") {
    Home h("tk-hostile");
    auto marker = h.env.dir() / "pwned";
    std::string m = marker.string();
    std::vector<std::string> hostile{
        "'; touch " + m + "; echo $(touch " + m + ") `touch " + m + "` \"q\" \\ ",
        "first line\nsecond line; rm -rf " + m + " && touch " + m,
        "日本語 🚀 Ünïcödé \t tab, ${HOME} $HOME %s %n {} [a,b] [] ",
        "-rf /",
        "--json",
        "\x1b[31mred\x1b[0m and a bell \a",
        "  spaces around  ",
    };
    std::vector<std::string> ids;
    for (const auto& s : hostile) {
        auto t = h.add(s, {"--description=" + s + " (details)"});
        CHECK(t["subject"] == s);
        CHECK(t["description"] == s + " (details)");
        ids.push_back(t["id"].get<std::string>());
    }
    auto list = h.tasks();
    REQUIRE(list.size() == hostile.size());
    for (size_t i = 0; i < hostile.size(); ++i) {
        INFO("subject " << i);
        CHECK(list[i]["subject"] == hostile[i]);
        CHECK(h.task(ids[i])["description"] == hostile[i] + " (details)");
    }
    // update --subject / --description keep them byte for byte too.
    auto u = h.ok({"task", "update", "1", "--subject", hostile[1], "--description", hostile[0]});
    CHECK(u["subject"] == hostile[1]);
    CHECK(u["description"] == hostile[0]);
    // A subject from stdin keeps its inner newlines (one trailing newline is dropped).
    auto piped = h.env.start({"task", "add", "-", "--json"}, h.extra(), hostile[1] + "\n").wait();
    REQUIRE(piped.exit_code == 0);
    CHECK(piped.json()["subject"] == hostile[1]);
    CHECK(h.task(piped.json()["id"].get<std::string>())["subject"] == hostile[1]);

    // The human table escapes what would garble a terminal: one header and one line per task.
    auto human = h.run({"task", "list"});
    CHECK(human.exit_code == 0);
    CHECK(lines_of(human.out).size() == hostile.size() + 2);
    CHECK(human.out.find('\x1b') == std::string::npos);
    CHECK(human.out.find('\a') == std::string::npos);
    auto shown = h.run({"task", "show", "2"});
    CHECK(shown.out.find('\x1b') == std::string::npos);
    CHECK_FALSE(fs::exists(marker));
}

TEST_CASE("a blocked task cannot be claimed until its blocker is completed", "[tasks]") {
    Home h("tk-blocked");
    h.spawn("w1", {"sleep", "600"});
    h.spawn("w2", {"sleep", "600"});
    h.add("the schema");
    h.add("the queries", {"--blocked-by", "1"});
    h.add("the docs", {"--blocked-by", "1", "--blocked-by", "2"});

    check_refused(h, {"task", "claim", "2", "--as", "w2"}, 4, "blocked by 1 (pending)");
    CHECK(h.ids({"--available"}) == std::vector<std::string>{"1"});
    // Without an id, the blocked ones are skipped.
    CHECK(h.ok({"task", "claim", "--as", "w1"})["id"] == "1");
    check_refused(h, {"task", "claim", "2", "--as", "w2"}, 4, "blocked by 1 (in_progress)");
    check_refused(h, {"task", "claim", "--as", "w2"}, 3);
    check_refused(h, {"task", "claim", "3", "--as", "w2"}, 4,
                  "blocked by 1 (in_progress), 2 (pending)");
    CHECK(h.ids({"--available"}).empty());
    CHECK(h.task("2")["status"] == "pending");

    // Only its owner or the leader completes it.
    check_refused(h, {"task", "done", "1", "--as", "w2"}, 4, "owned by 'w1'");
    CHECK(h.ok({"task", "done", "1", "--as", "w1"})["status"] == "completed");
    CHECK(h.ids({"--available"}) == std::vector<std::string>{"2"});
    auto t = h.ok({"task", "claim", "--as", "w2"});
    CHECK(t["id"] == "2");
    CHECK(t["owner"] == "w2");
    check_refused(h, {"task", "claim", "3", "--as", "w1"}, 4, "blocked by 2 (in_progress)");
    h.ok({"task", "done", "2"});  // the leader
    CHECK(h.ok({"task", "claim", "3", "--as", "w1"})["status"] == "in_progress");
    h.finish();
}

TEST_CASE("update and done on the command line: who may change what", "[tasks]") {
    Home h("tk-update");
    h.spawn("alice", {"sleep", "600"});
    h.spawn("bob", {"sleep", "600"});
    h.add("alice's", {"--owner", "alice"});
    h.add("nobody's");

    check_refused(h, {"task", "update", "1", "--subject", "x", "--as", "bob"}, 4,
                  "owned by 'alice'");
    check_refused(h, {"task", "update", "1", "--unassign", "--as", "bob"}, 4);
    check_refused(h, {"task", "done", "2", "--as", "bob"}, 4);
    CHECK(h.ok({"task", "update", "1", "--subject", "by alice", "--as", "alice"})["subject"] ==
          "by alice");
    CHECK(h.ok({"task", "update", "1", "--description", "by the leader"})["description"] ==
          "by the leader");

    // Anyone may take up an unowned task by update: it becomes theirs, claimed now.
    auto t = h.ok({"task", "update", "2", "--status", "in_progress", "--as", "bob"});
    CHECK(t["owner"] == "bob");
    CHECK(t["claimedAt"].is_string());
    // Unassigning an in_progress task puts it back to pending, unclaimed.
    t = h.ok({"task", "update", "2", "--unassign", "--as", "bob"});
    CHECK(t["status"] == "pending");
    CHECK(t["owner"].is_null());
    CHECK(t["claimedAt"].is_null());
    // Back to pending keeps the owner but not the claim time.
    h.ok({"task", "claim", "2", "--as", "alice"});
    t = h.ok({"task", "update", "2", "--status", "pending", "--as", "alice"});
    CHECK(t["owner"] == "alice");
    CHECK(t["claimedAt"].is_null());
    // The leader gives it to bob, who may claim it, and finishes it.
    CHECK(h.ok({"task", "update", "2", "--owner", "bob"})["owner"] == "bob");
    check_refused(h, {"task", "claim", "2", "--as", "alice"}, 4, "assigned to 'bob'");
    CHECK(h.ok({"task", "claim", "2", "--as", "bob"})["status"] == "in_progress");
    CHECK(h.ok({"task", "done", "2", "--as", "bob"})["status"] == "completed");
    check_refused(h, {"task", "done", "2", "--as", "bob"}, 4, "already completed");
    check_refused(h, {"task", "done", "2"}, 4, "already completed");
    h.finish();
}

TEST_CASE("team list, status and agents show the open tasks", "[tasks][pg]") {
    Home h("tk-counts");
    h.spawn("alice", {"sleep", "600"});
    h.spawn("bob", {"sleep", "600"});
    h.add("a", {"--owner", "alice"});
    h.add("b");
    h.add("c");
    h.add("d");
    h.add("e");
    h.ok({"task", "claim", "2", "--as", "alice"});
    h.ok({"task", "claim", "3", "--as", "bob"});
    h.ok({"task", "done", "3", "--as", "bob"});
    h.ok({"task", "update", "4", "--status", "deleted"});

    auto list = h.ok({"list"});
    REQUIRE(list.size() == 1);
    CHECK(list[0]["openTasks"] == 3);
    auto status = h.ok({"status"});
    CHECK(status["openTasks"] == 3);
    CHECK(status["tasks"] ==
          Json{{"pending", 2}, {"in_progress", 1}, {"completed", 1}, {"deleted", 1}});
    auto agents = h.run({"agents"});
    REQUIRE(agents.exit_code == 0);
    auto rows = lines_of(agents.out);
    REQUIRE(rows.size() == 3);
    CHECK_THAT(rows[0], Catch::Contains("TASKS"));
    auto column = rows[0].find("TASKS");
    auto cell = [&](const std::string& row) {
        auto end = row.find(' ', column);
        return row.substr(column, end == std::string::npos ? std::string::npos : end - column);
    };
    std::map<std::string, std::string> tasks_of;
    for (size_t i = 1; i < rows.size(); ++i)
        tasks_of[rows[i].substr(0, rows[i].find(' '))] = cell(rows[i]);
    CHECK(tasks_of == std::map<std::string, std::string>{{"alice", "2"}, {"bob", "-"}});
    h.finish();
}

TEST_CASE("16 processes claiming from 100 tasks (40 under ASan) at once: each claimed exactly once",
          "[tasks][concurrency]") {
    Home h("tk-race");
    const int kAgents = 4, kPerAgent = 4, kTasks = team::test::kSanitized ? 40 : 100;
    for (int i = 1; i <= kAgents; ++i) h.spawn("w" + std::to_string(i), {"sleep", "600"});
    for (int i = 1; i <= kTasks; ++i) h.add("task " + std::to_string(i));

    // Each claimer loops `team task claim --json` as its agent until there is nothing left
    // (exit 3), then says how it ended.
    std::string script =
        "while :; do \"$TEAM_BIN\" task claim --json --as \"$AS\"; rc=$?; "
        "[ \"$rc\" -eq 0 ] || break; done; echo \"END $rc\"";
    std::vector<Child> claimers;
    claimers.reserve(kAgents * kPerAgent);
    std::vector<std::string> identity;
    for (int i = 0; i < kAgents * kPerAgent; ++i) {
        std::string as = "w" + std::to_string(i % kAgents + 1);
        identity.push_back(as);
        auto env = team::test::clean_env(h.extra({{"TEAM_HOME", h.env.home().string()},
                                                  {"TEAM_BIN", team::test::team_binary()},
                                                  {"AS", as}}));
        claimers.emplace_back(std::vector<std::string>{"/bin/sh", "-c", script}, env);
    }
    std::map<std::string, std::string> owner_of;  // task id -> who claimed it
    int claims = 0;
    for (size_t i = 0; i < claimers.size(); ++i) {
        auto r = claimers[i].wait();
        INFO("claimer " << i << " as " << identity[i] << " stdout: " << r.out
                        << " stderr: " << r.err);
        CHECK(r.exit_code == 0);
        CHECK(r.err.find("locked") == std::string::npos);
        auto lines = lines_of(r.out);
        REQUIRE(lines.size() >= 2);
        CHECK(lines.back() == "END 3");
        auto last = Json::parse(lines[lines.size() - 2], nullptr, false);
        CHECK(last["code"] == "not_found");
        for (size_t j = 0; j + 2 < lines.size(); ++j) {
            auto t = Json::parse(lines[j], nullptr, false);
            REQUIRE(t.is_object());
            CHECK(t["status"] == "in_progress");
            CHECK(t["owner"] == identity[i]);
            std::string id = t["id"];
            CHECK(owner_of.count(id) == 0);  // nobody else got it
            owner_of[id] = identity[i];
            ++claims;
        }
    }
    CHECK(claims == kTasks);
    CHECK(owner_of.size() == static_cast<size_t>(kTasks));
    auto list = h.tasks();
    REQUIRE(list.size() == static_cast<size_t>(kTasks));
    std::map<std::string, int> per_owner;
    for (const auto& t : list) {
        INFO(t.dump());
        CHECK(t["status"] == "in_progress");
        CHECK(t["owner"] == owner_of[t["id"].get<std::string>()]);
        CHECK(t["claimedAt"].is_string());
        ++per_owner[t["owner"].get<std::string>()];
    }
    INFO("claims per agent: " << Json(per_owner).dump());
    CHECK(h.ok({"status"})["tasks"]["in_progress"] == kTasks);
    CHECK(h.activity("task_claimed").size() == static_cast<size_t>(kTasks));
    h.finish();
}

TEST_CASE("8 parallel adds get the ids 1 to 8, each once", "[tasks][concurrency][pg]") {
    Home h("tk-parallel-add");
    std::vector<Child> adders;
    adders.reserve(8);
    for (int i = 1; i <= 8; ++i) {
        adders.push_back(
            h.env.start({"task", "add", "task " + std::to_string(i), "--json"}, h.extra()));
    }
    std::set<std::string> ids, subjects;
    for (auto& adder : adders) {
        auto r = adder.wait();
        INFO("stdout: " << r.out << " stderr: " << r.err);
        CHECK(r.exit_code == 0);
        CHECK(r.err.find("locked") == std::string::npos);
        ids.insert(r.json()["id"].get<std::string>());
        subjects.insert(r.json()["subject"].get<std::string>());
    }
    CHECK(ids == std::set<std::string>{"1", "2", "3", "4", "5", "6", "7", "8"});
    CHECK(subjects.size() == 8);
    CHECK(h.tasks().size() == 8);
}

TEST_CASE("an agent killed from outside: its unfinished tasks go back to the pool at the next look",
          "[tasks]") {
    Home h("tk-reassign");
    auto done_file = h.env.dir() / "claimed";
    h.add("one");
    h.add("two");
    h.add("three");
    h.add("bystander's");
    // The agent claims 1, 2 and 3 from its own pane, finishes 3, then waits.
    std::string script =
        "\"$TEAM_BIN\" task claim 1 && \"$TEAM_BIN\" task claim 2 && "
        "\"$TEAM_BIN\" task claim 3 && \"$TEAM_BIN\" task done 3 && touch " +
        sq(done_file) + "; exec sleep 600";
    auto coder = h.spawn("coder", {"sh", "-c", script}, {{"TEAM_BIN", team::test::team_binary()}});
    h.spawn("bystander", {"sleep", "600"});
    REQUIRE(eventually([&] { return fs::exists(done_file); }));
    h.add("assigned", {"--owner", "coder"});  // 5: pending, but coder's
    h.ok({"task", "claim", "4", "--as", "bystander"});
    auto by_coder = h.ids({"--owner", "coder"});
    CHECK(by_coder == std::vector<std::string>{"1", "2", "3", "5"});
    auto completed_before = h.task("3");
    CHECK(completed_before["status"] == "completed");
    auto bystanders_before = h.task("4");

    // Its pid as `team agents --json` gives it.
    auto listed = Home::find(h.agents(), "coder");
    REQUIRE(listed["pid"] == coder["pid"]);
    auto pid = static_cast<pid_t>(listed["pid"].get<long>());
    REQUIRE(::kill(pid, SIGKILL) == 0);
    REQUIRE(eventually([&] { return !alive(pid); }));

    // The very next look sees them handed back.
    auto list = h.tasks();
    REQUIRE(list.size() == 5);
    for (int i : {0, 1, 4}) {
        INFO(list[i].dump());
        CHECK(list[i]["status"] == "pending");
        CHECK(list[i]["owner"].is_null());
        CHECK(list[i]["claimedAt"].is_null());
        CHECK(list[i]["warning"] == warning_for("coder"));
    }
    CHECK(list[2] == completed_before);
    CHECK(list[3] == bystanders_before);
    CHECK(h.ids({"--owner", "coder"}) == std::vector<std::string>{"3"});
    CHECK(h.ids({"--available"}) == std::vector<std::string>{"1", "2", "5"});

    auto agent = Home::find(h.agents(), "coder");
    CHECK(agent["status"] == "terminated");
    auto exited = h.activity("agent_exited");
    REQUIRE(exited.size() == 1);
    CHECK(exited[0]["details"]["agentId"] == "coder@tk-reassign");
    CHECK(exited[0]["details"]["reassignedTasks"] == Json{"1", "2", "5"});
    auto reassigned = h.activity("tasks_reassigned");
    REQUIRE(reassigned.size() == 1);
    CHECK(reassigned[0]["details"] ==
          Json{{"from", "coder@tk-reassign"}, {"tasks", {"1", "2", "5"}}});
    CHECK(h.ok({"status"})["tasks"]["pending"] == 3);

    // The pool's tasks can be taken again; the terminated agent can no longer be given one.
    CHECK(h.ok({"task", "claim", "--as", "bystander"})["id"] == "1");
    check_refused(h, {"task", "update", "2", "--owner", "coder"}, 4);
    check_refused(h, {"task", "add", "more", "--owner", "coder"}, 4);
    h.finish();
}

TEST_CASE("an agent that exits by itself or is lost hands its tasks back too", "[tasks]") {
    Home h("tk-reassign-end");
    auto go = h.env.dir() / "go";
    auto ready_quitter = h.env.dir() / "quitter-ready";
    auto ready_lost = h.env.dir() / "lost-ready";
    for (int i = 1; i <= 5; ++i) h.add("task " + std::to_string(i));
    std::string bin = "\"$TEAM_BIN\"";
    Env env{{"TEAM_BIN", team::test::team_binary()}};
    // quitter: claims 1 and 2, finishes 2, and exits 3 when told to.
    h.spawn(
        "quitter",
        {"sh", "-c",
         bin + " task claim 1 && " + bin + " task claim 2 && " + bin + " task done 2 && touch " +
             sq(ready_quitter) + "; while [ ! -e " + sq(go) + " ]; do sleep 0.05; done; exit 3"},
        env);
    // lost: claims 3 and 4; its supervisor is then killed, so nothing records its end.
    auto lost = h.spawn("lost",
                        {"sh", "-c",
                         bin + " task claim 3 && " + bin + " task claim 4 && touch " +
                             sq(ready_lost) + "; exec sleep 600"},
                        env);
    REQUIRE(eventually([&] { return fs::exists(ready_quitter) && fs::exists(ready_lost); }));
    CHECK(h.ids({"--status", "in_progress"}) == std::vector<std::string>{"1", "3", "4"});

    { std::ofstream(go) << "go"; }
    auto q = h.wait_terminated("quitter");
    CHECK(q["exitReason"] == "exited");
    CHECK(q["exitCode"] == 3);
    auto t1 = h.task("1");
    CHECK(t1["status"] == "pending");
    CHECK(t1["owner"].is_null());
    CHECK(t1["claimedAt"].is_null());
    CHECK(t1["warning"] == warning_for("quitter"));
    CHECK(h.task("2")["status"] == "completed");
    CHECK(h.task("2")["owner"] == "quitter");
    CHECK(h.task("2")["warning"].is_null());

    // Kill the lost agent's supervisor (the parent of its command).
    auto pid = static_cast<pid_t>(lost["pid"].get<long>());
    auto process = team::proc::read_process(pid);
    REQUIRE(process);
    pid_t supervisor = process->ppid;
    REQUIRE(supervisor > 1);
    REQUIRE(::kill(supervisor, SIGKILL) == 0);
    REQUIRE(eventually([&] { return !alive(supervisor); }));
    auto list = h.tasks();
    REQUIRE(list.size() == 5);
    for (int i : {2, 3}) {
        INFO(list[i].dump());
        CHECK(list[i]["status"] == "pending");
        CHECK(list[i]["owner"].is_null());
        CHECK(list[i]["claimedAt"].is_null());
        CHECK(list[i]["warning"] == warning_for("lost"));
    }
    CHECK(list[4]["warning"].is_null());
    CHECK(Home::find(h.agents(), "lost")["exitReason"] == "lost");
    // No open task is owned by a terminated agent.
    CHECK(h.ids({"--status", "in_progress"}).empty());
    CHECK(h.ids({"--available"}) == std::vector<std::string>{"1", "3", "4", "5"});
    auto reassigned = h.activity("tasks_reassigned");
    REQUIRE(reassigned.size() == 2);
    CHECK(reassigned[0]["details"]["tasks"] == Json{"1"});
    CHECK(reassigned[1]["details"]["tasks"] == Json{"3", "4"});
    h.finish();
}

TEST_CASE("a lost agent's tasks are handed back before a claim or a show looks at them",
          "[tasks][sanitize]") {
    // SPEC 4: an agent whose process has ended is marked terminated, and its unfinished tasks
    // handed back, by the next command that looks, at the latest. A lost agent (its supervisor
    // killed) is found only by a command that checks; claim and show look at tasks too.
    Home h("tk-lost-look");
    h.add("one");
    h.add("two");
    h.add("three");
    std::string bin = "\"$TEAM_BIN\"";
    Env env{{"TEAM_BIN", team::test::team_binary()}};
    std::vector<Json> lost;
    for (int i : {1, 2}) {
        auto ready = h.env.dir() / ("ready" + std::to_string(i));
        lost.push_back(h.spawn("lost" + std::to_string(i),
                               {"sh", "-c",
                                bin + " task claim " + std::to_string(i) + " && touch " +
                                    sq(ready) + "; exec sleep 600"},
                               env));
        REQUIRE(eventually([&] { return fs::exists(ready); }));
    }
    h.spawn("bystander", {"sleep", "600"});
    auto kill_supervisor = [&](const Json& agent) {
        auto process = team::proc::read_process(static_cast<pid_t>(agent["pid"].get<long>()));
        REQUIRE(process);
        pid_t supervisor = process->ppid;
        REQUIRE(supervisor > 1);
        REQUIRE(::kill(supervisor, SIGKILL) == 0);
        REQUIRE(eventually([&] { return !alive(supervisor); }));
    };

    // A claim without an id takes the lowest available task: the lost agent's, handed back.
    kill_supervisor(lost[0]);
    auto claimed = h.run({"task", "claim", "--as", "bystander", "--json"});
    INFO("claim stdout: " << claimed.out << " stderr: " << claimed.err);
    CHECK(claimed.exit_code == 0);
    CHECK(claimed.json()["id"] == "1");

    // show does not present a dead agent's task as in progress.
    kill_supervisor(lost[1]);
    auto shown = h.run({"task", "show", "2", "--json"});
    REQUIRE(shown.exit_code == 0);
    INFO(shown.out);
    CHECK(shown.json()["status"] == "pending");
    CHECK(shown.json()["owner"].is_null());
    CHECK(shown.json()["warning"] == warning_for("lost2"));
    h.finish();
}
