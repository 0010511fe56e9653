// Figures at scale (issue 8): every listing command on one home that holds 10 teams of 20 live
// agents each (200 `sleep 1000` under their supervisors, in real tmux panes), 1,000,000
// messages and 100,000 tasks, all at once. The figures share that home: it is built once
// (about half a minute), then each listing is timed in it.
//
// The agents are spawned with `team spawn`; the messages and tasks are written with SQL (the
// rows `team send` and `team task add` write), as in inbox.cpp. The setup checks what it built
// through `team` itself, so a figure never times a listing of a home that is not what it says.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/harness.hpp"

namespace bench {

namespace {

constexpr int kTeams = 10;
constexpr int kAgentsPerTeam = 20;

std::string team_name(int i) {
    return "scale-" + std::to_string(i);
}

std::string agent_name(int i) {
    char name[16];
    std::snprintf(name, sizeof name, "a-%02d", i);
    return name;
}

void check(bool holds, const std::string& what) {
    if (!holds) throw CommandFailed("scale setup: " + what);
}

void build_scale_home(Env& env) {
    for (int t = 0; t < kTeams; ++t) {
        run_checked(env, {env.team, "create", team_name(t)});
        for (int a = 0; a < kAgentsPerTeam; ++a) {
            run_checked(env, {env.team, "--team", team_name(t), "spawn", agent_name(a), "--",
                              "sleep", "1000"});
        }
    }
    // 1,000,000 messages: 500,000 in the inbox of scale-0's leader (10 unread), 2,500 in the
    // inbox of each of the 200 agents (5 unread each).
    run_sql(env, R"sql(
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500000)
        INSERT INTO messages (team_id, sender, recipient_id, recipient, type, text, data,
                              created_at, read_at)
        SELECT a.team_id, 'a-00', a.id, a.name, 'message',
               'message number ' || i || ': please look at the failing test in src/parser',
               NULL, 1790000000000 + i,
               CASE WHEN i % 50000 = 0 THEN NULL ELSE 1790000000000 + i END
        FROM n, agents a JOIN teams t ON t.id = a.team_id
        WHERE a.is_leader AND t.name = 'scale-0';

        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2500)
        INSERT INTO messages (team_id, sender, recipient_id, recipient, type, text, data,
                              created_at, read_at)
        SELECT a.team_id, 'leader', a.id, a.name, 'message',
               'task ' || i || ' is yours: the flaky test in src/net, then tell me',
               NULL, 1790000000000 + i,
               CASE WHEN i % 500 = 0 THEN NULL ELSE 1790000000000 + i END
        FROM n, agents a WHERE NOT a.is_leader;
    )sql");
    // 100,000 tasks in scale-0: 10 available at the end; the others completed, or in progress
    // with one of its agents.
    run_sql(env, R"sql(
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)
        INSERT INTO tasks (team_id, id, subject, description, status, owner, claimed_at,
                           created_at, updated_at)
        SELECT t.id, i, 'task ' || i, 'fix what fails in module ' || i,
               CASE WHEN i > 99990 THEN 'pending'
                    WHEN i % 2 = 0 THEN 'completed' ELSE 'in_progress' END,
               CASE WHEN i > 99990 THEN NULL ELSE printf('a-%02d', i % 20) END,
               CASE WHEN i > 99990 THEN NULL ELSE 1790000000000 END,
               1790000000000, 1790000000000
        FROM n, teams t WHERE t.name = 'scale-0'
    )sql");

    auto list = nlohmann::json::parse(run_checked(env, {env.team, "--json", "list"}));
    check(list.size() == kTeams, "list shows " + std::to_string(list.size()) + " teams");
    int live = 0;
    for (const auto& team : list) live += team.value("liveAgents", 0);
    check(live == kTeams * kAgentsPerTeam, std::to_string(live) + " live agents, not 200");
    auto status =
        nlohmann::json::parse(run_checked(env, {env.team, "--json", "status", "scale-0"}));
    int tasks = 0;
    for (const auto& [state, count] : status["tasks"].items()) tasks += count.get<int>();
    check(tasks == 100'000, "scale-0 has " + std::to_string(tasks) + " tasks, not 100000");
    auto unread = nlohmann::json::parse(
        run_checked(env, {env.team, "--json", "--team", "scale-0", "inbox", "--unread"}));
    check(unread.size() == 10, "the leader of scale-0 has " + std::to_string(unread.size()) +
                                   " unread messages, not 10");
    auto available = nlohmann::json::parse(
        run_checked(env, {env.team, "--json", "--team", "scale-0", "task", "list", "--available"}));
    check(available.size() == 10, std::to_string(available.size()) + " tasks available, not 10");
}

// Teardown: the server goes with all 200 panes; each team then records its agents' ends.
void end_scale_home(Env& env) {
    std::vector<std::string> tmux{"tmux", "-S", env.home + "/tmux.sock", "kill-server"};
    run_capture(env, tmux);
    for (int t = 0; t < kTeams; ++t) run_capture(env, {env.team, "--team", team_name(t), "agents"});
}

}  // namespace

std::vector<Figure> scale_figures(const std::string& team) {
    std::vector<Figure> list;
    auto figure = [&](std::string name, double goal, std::vector<std::string> argv) {
        Figure f{"scale: " + std::move(name), goal, build_scale_home, sample_argv(std::move(argv)),
                 end_scale_home};
        f.shared_home = "scale";
        list.push_back(std::move(f));
    };
    std::vector<std::string> as_leader{team, "--team", "scale-0"};
    auto with = [](std::vector<std::string> head, std::vector<std::string> tail) {
        head.insert(head.end(), tail.begin(), tail.end());
        return head;
    };
    // Goals: 3 ms for a read of the store, 5 ms when every agent listed is first checked
    // against its process (pidfd and start time), as for `agents --json, 32 agents`.
    figure("list --json", 3.0, {team, "list", "--json"});
    figure("status --json", 3.0, {team, "status", "scale-0", "--json"});
    figure("agents --json, 20 of 200 agents", 5.0, with(as_leader, {"agents", "--json"}));
    figure("inbox --unread --json, leader (500k of 1M)", 3.0,
           with(as_leader, {"inbox", "--unread", "--json"}));
    figure("inbox --unread --json, agent (2.5k of 1M)", 3.0,
           with(as_leader, {"--as", "a-07", "inbox", "--unread", "--json"}));
    figure("task list --available --json, 100k tasks", 3.0,
           with(as_leader, {"task", "list", "--available", "--json"}));
    figure("activity --json", 3.0, with(as_leader, {"activity", "--json"}));
    return list;
}

}  // namespace bench
