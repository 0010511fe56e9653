// Figures of what agents spend (SPEC 18): `team usage` of a team whose 50 agents made 10,000
// model calls each (the reads are of the sums, never of the calls), and the CPU the watchers
// of 10 live agents' samplers (a thread of each pane supervisor) while they sample their trees
// every 2 s (the default).

#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/harness.hpp"

namespace bench {

namespace {

// A team "bench" of 50 ended agents, each with 10,000 calls of two models in its record and
// their sums, as the watchers would have stored them.
void spent_team(Env& env) {
    run_checked(env, {env.team, "create", "bench"});
    run_sql(env, R"sql(
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50)
        INSERT INTO agents (team_id, name, status, command, created_at, terminated_at,
                            exit_reason)
        SELECT t.id, printf('a-%03d', i), 'terminated', '["claude"]', 1790000000000,
               1790003600000, 'confirmed'
        FROM n, teams t WHERE t.name = 'bench';

        INSERT INTO agent_usage (agent_id, records, records_kind, turns, cpu_ms, rss, pss,
                                 peak_rss, peak_pss, sampled_at, max_cost)
        SELECT a.id, '/root/.claude/projects/-src/' || a.name || '.jsonl', 'claude', 40, 60000,
               500000000, 420000000, 600000000, 480000000, 1790003600000, 25.0
        FROM agents a WHERE NOT a.is_leader;

        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000)
        INSERT INTO usage_calls (agent_id, key, at, model, input, output, cache_read, cache_write)
        SELECT a.id, 'msg_' || i, 1790000000000 + i * 300,
               CASE WHEN i % 20 = 0 THEN 'claude-haiku-4-5' ELSE 'claude-sonnet-4-5-20250929' END,
               1000 + i % 97, 200 + i % 31, 40000 + i, 900 + i % 13
        FROM n, agents a WHERE NOT a.is_leader;

        INSERT INTO usage_models (agent_id, model, calls, input, output, cache_read, cache_write)
        SELECT agent_id, model, count(*), sum(input), sum(output), sum(cache_read),
               sum(cache_write)
        FROM usage_calls GROUP BY agent_id, model;
    )sql");
}

// The user and system time, in clock ticks, of every usage sampler of this home: the thread
// named team-usage of each pane supervisor (`team __agent`).
long long watchers_ticks(const Env& env, int* count) {
    auto slurp = [](const std::string& path) {
        std::ifstream in(path);
        return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    };
    long long ticks = 0;
    *count = 0;
    DIR* proc = ::opendir("/proc");
    if (!proc) return 0;
    while (auto* e = ::readdir(proc)) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        std::string base = std::string("/proc/") + e->d_name;
        std::string line = slurp(base + "/cmdline");
        if (line.find(std::string("__agent") + '\0') == std::string::npos ||
            line.find(env.home) == std::string::npos) {
            continue;
        }
        DIR* tasks = ::opendir((base + "/task").c_str());
        if (!tasks) continue;
        while (auto* t = ::readdir(tasks)) {
            if (t->d_name[0] < '0' || t->d_name[0] > '9') continue;
            std::string task = base + "/task/" + t->d_name;
            if (slurp(task + "/comm") != "team-usage\n") continue;
            std::string text = slurp(task + "/stat");
            auto close = text.rfind(')');
            if (close == std::string::npos) continue;
            std::istringstream fields(text.substr(close + 2));
            std::string field;
            long long utime = 0, stime = 0;
            for (int n = 3; n <= 15 && fields >> field; ++n) {
                if (n == 14) utime = std::atoll(field.c_str());
                if (n == 15) stime = std::atoll(field.c_str());
            }
            ticks += utime + stime;
            ++*count;
        }
        ::closedir(tasks);
    }
    ::closedir(proc);
    return ticks;
}

// The watchers' share of one core over 20 s, in per cent, for the 10 agents.
double sample_watchers(Env& env) {
    int before_count = 0, after_count = 0;
    long long before = watchers_ticks(env, &before_count);
    auto start = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::seconds(20));
    long long after = watchers_ticks(env, &after_count);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (before_count != 10 || after_count != 10) {
        throw CommandFailed("expected 10 samplers, saw " + std::to_string(before_count) + " then " +
                            std::to_string(after_count));
    }
    double cpu = static_cast<double>(after - before) / static_cast<double>(::sysconf(_SC_CLK_TCK));
    return cpu / seconds * 100.0;
}

void ten_agents(Env& env) {
    run_checked(env, {env.team, "create", "bench"});
    for (int i = 0; i < 10; ++i) spawn_agent(env, "a-" + std::to_string(i));
}

}  // namespace

std::vector<Figure> usage_figures(const std::string& team) {
    std::vector<Figure> list;
    // `team usage --json` of 50 agents with 10,000 calls each. Goal: median <= 5 ms (issue 40).
    list.push_back({"usage --json, 50 agents of 10,000 calls each", 5.0, spent_team,
                    sample_argv({team, "--team", "bench", "usage", "--json"}), nullptr});
    // The samplers of 10 agents, every 2 s: per cent of one core, over 20 s each.
    // Goal: < 1 % (issue 40).
    list.push_back({"usage samplers of 10 agents, % of a core", 1.0, ten_agents, sample_watchers,
                    kill_tmux_server, 3, "", "%"});
    return list;
}

}  // namespace bench
