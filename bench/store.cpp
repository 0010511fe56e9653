// The figures of the shared store (SPEC 16), with `--store URL` (a PostgreSQL database made with
// `team store migrate`; bench/run --store pg makes a throw-away one): each figure on PostgreSQL
// beside the same figure on SQLite, in one table. Whole processes for the command line's reads,
// writes and a kill across homes; held `team mcp` sessions (clients of the server) for a wake-up
// across two homes and for 12 claimers on three homes, which whole processes would measure their
// start-up rather than the store.
//
// Every figure has homes of its own (A, and B and C beside it in its temporary directory, each
// with its own tmux server, as separate machines would be) and, on PostgreSQL, a team name of its
// own: they all share the one database.
#include <unistd.h>

#include <atomic>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "bench/harness.hpp"
#include "bench/mcp_client.hpp"

namespace bench {

namespace {

// What a store figure holds between its samples.
struct Homes {
    std::string team;        // the team's name, the figure's own
    std::vector<Env> homes;  // A (the figure's own Env), B, C
    std::vector<std::unique_ptr<Client>> clients;
    int next = 0;  // for unique agent names
};

Homes& homes(Env& env) {
    return *static_cast<Homes*>(env.held.get());
}

// The Env of another home beside the figure's (`name`: "home-b"), on the same store.
Env beside(const Env& env, const std::string& name) {
    Env other = env;
    other.home = env.dir + "/" + name;
    other.held.reset();
    for (auto& v : other.vars) {
        if (v.starts_with("TEAM_HOME=")) v = "TEAM_HOME=" + other.home;
    }
    return other;
}

// Setup: `count` homes on the store `url` ("": SQLite, one home), a team made from the first.
std::function<void(Env&)> store_homes(std::string url, int count) {
    return [url, count](Env& env) {
        auto held = std::make_shared<Homes>();
        if (!url.empty()) env.vars.push_back("TEAM_STORE=" + url);
        // A team name of the figure's own (the store is shared by every figure of the run).
        static int made = 0;
        held->team = "s" + std::to_string(::getpid()) + "-" + std::to_string(++made);
        held->homes.push_back(env);
        for (int i = 1; i < count; ++i) {
            held->homes.push_back(beside(env, std::string("home-") + char('a' + i)));
        }
        run_checked(env, {env.team, "create", held->team});
        env.held = held;
    };
}

// An agent `sleep 1000` spawned from `home` into the figure's team (untimed); returns its name.
std::string spawn_in(Homes& h, const Env& home) {
    std::string name = "w" + std::to_string(++h.next);
    run_checked(home, {home.team, "--team", h.team, "spawn", name, "--", "sleep", "1000"});
    return name;
}

// Teardown: the sessions end, every home's tmux server goes, and each home reconciles.
void end_homes(Env& env) {
    if (!env.held) return;
    auto& h = homes(env);
    h.clients.clear();
    for (auto& home : h.homes) {
        run_capture(home, {"tmux", "-S", home.home + "/tmux.sock", "kill-server"});
        run_capture(home, {home.team, "--team", h.team, "agents"});
    }
    env.held.reset();
}

// One whole process of `args` (after --team TEAM) from home A.
std::function<double(Env&)> sample_cli(std::vector<std::string> args) {
    return [args](Env& env) {
        auto& h = homes(env);
        std::vector<std::string> argv{env.team, "--team", h.team};
        argv.insert(argv.end(), args.begin(), args.end());
        return time_run(env, argv);
    };
}

// Setup: the homes, an agent w1 in A, a few messages in its inbox.
std::function<void(Env&)> cli_home(std::string url) {
    return [url](Env& env) {
        store_homes(url, 1)(env);
        auto& h = homes(env);
        spawn_in(h, env);
        for (int i = 0; i < 5; ++i) {
            run_checked(env, {env.team, "--team", h.team, "send", "w1", "hello"});
        }
    };
}

// Setup for the wake-up: two homes (one on SQLite), an agent w1 in A; a session in B reading
// w1's inbox, a session in A sending as the leader.
std::function<void(Env&)> wake_homes(std::string url) {
    return [url](Env& env) {
        store_homes(url, url.empty() ? 1 : 2)(env);
        auto& h = homes(env);
        spawn_in(h, env);
        const Env& reader_home = h.homes.back();
        h.clients.push_back(std::make_unique<Client>(
            reader_home,
            std::vector<std::string>{env.team, "mcp", "--team", h.team, "--as", "w1"}));
        h.clients.push_back(std::make_unique<Client>(
            env, std::vector<std::string>{env.team, "mcp", "--team", h.team}));
    };
}

// A waiting inbox_read in B, given 30 ms to be asleep in its wait (untimed), then message_send
// from A: timed from the send's call to the read's answer.
double sample_wake(Env& env) {
    auto& h = homes(env);
    Client& reader = *h.clients[0];
    Client& sender = *h.clients[1];
    int id = reader.request(
        "tools/call", {{"name", "inbox_read"},
                       {"arguments", {{"unread", true}, {"markRead", true}, {"waitMs", 10'000}}}});
    usleep(30'000);
    double start = now_ms();
    sender.tool("message_send", {{"to", "w1"}, {"text", "wake up"}});
    auto result = reader.answer(id);
    double ms = now_ms() - start;
    if (result["structuredContent"]["messages"].empty()) {
        throw CommandFailed("wake-up sample: the read returned no message");
    }
    return ms;
}

constexpr int kClaimers = 12;
constexpr int kTasksPerSample = 1200;

// Setup for the claimers: three homes (one on SQLite), 4 agents in each, a session per agent
// in its home, and the leader's session in A.
std::function<void(Env&)> claim_homes(std::string url) {
    return [url](Env& env) {
        store_homes(url, url.empty() ? 1 : 3)(env);
        auto& h = homes(env);
        h.clients.push_back(std::make_unique<Client>(
            env, std::vector<std::string>{env.team, "mcp", "--team", h.team}));
        for (int i = 0; i < kClaimers; ++i) {
            const Env& home = h.homes[static_cast<size_t>(i) % h.homes.size()];
            std::string name = spawn_in(h, home);
            h.clients.push_back(std::make_unique<Client>(
                home, std::vector<std::string>{env.team, "mcp", "--team", h.team, "--as", name}));
        }
    };
}

// kTasksPerSample tasks added by the leader (untimed), then the 12 claimers claim until none is
// left: the sample is their claims per second. Every task must be claimed exactly once.
double sample_claims(Env& env) {
    auto& h = homes(env);
    for (int i = 0; i < kTasksPerSample; ++i) {
        h.clients[0]->tool("task_add", {{"subject", "t"}});
    }
    std::atomic<int> claimed{0};
    std::atomic<bool> failed{false};
    std::vector<std::thread> threads;
    double start = now_ms();
    for (int i = 1; i <= kClaimers; ++i) {
        threads.emplace_back([&, i] {
            try {
                Client& c = *h.clients[static_cast<size_t>(i)];
                for (;;) {
                    c.tool("task_claim", nlohmann::json::object());
                    ++claimed;
                }
            } catch (const CommandFailed& e) {
                // A tool's error ends the claimer: none is left to claim (a wrong one shows in
                // the count below); anything else is a failure.
                if (std::string(e.what()).find("mcp tool error") != 0) failed = true;
            }
        });
    }
    for (auto& t : threads) t.join();
    double ms = now_ms() - start;
    if (failed) throw CommandFailed("claimers: a session failed");
    if (claimed != kTasksPerSample) {
        throw CommandFailed("claimers: " + std::to_string(claimed.load()) + " claims of " +
                            std::to_string(kTasksPerSample) + " tasks");
    }
    return kTasksPerSample / (ms / 1000.0);
}

// An agent spawned in A (untimed), then `kill-agent --force` from the last home (B on
// PostgreSQL, A itself on SQLite or with `same_home`), timed until it returns: the agent's end
// recorded by its supervisor.
std::function<double(Env&)> sample_kill(bool same_home) {
    return [same_home](Env& env) {
        auto& h = homes(env);
        std::string name = spawn_in(h, env);
        const Env& killer = same_home ? h.homes.front() : h.homes.back();
        return time_run(killer, {env.team, "--team", h.team, "kill-agent", name, "--force"});
    };
}

}  // namespace

std::vector<Figure> store_figures(const std::string& team, const std::string& url) {
    std::vector<Figure> list;
    if (url.empty()) return list;
    (void)team;
    struct Engine {
        const char* name;
        std::string url;
    };
    const Engine engines[] = {{"sqlite", ""}, {"postgresql", url}};
    // The command line's reads and writes: whole processes, a connection each on PostgreSQL.
    for (const auto& [name, at] : engines) {
        std::string tag = std::string(" (") + name + ")";
        list.push_back({"store: list --json" + tag, 0, cli_home(at), sample_cli({"list", "--json"}),
                        end_homes});
        list.push_back({"store: inbox w1 --json" + tag, 0, cli_home(at),
                        sample_cli({"--as", "w1", "inbox", "--json"}), end_homes});
        list.push_back(
            {"store: send" + tag, 0, cli_home(at), sample_cli({"send", "w1", "hi"}), end_homes});
    }
    // A send wakes a waiting reader: through held sessions, on PostgreSQL from one home to
    // another. Goal (SPEC 16): median <= 10 ms.
    list.push_back({"store: send -> waiting reader, one home (mcp, sqlite)", 0, wake_homes(""),
                    sample_wake, end_homes, 100});
    list.push_back({"store: send -> waiting reader, two homes (mcp, postgresql)", 10.0,
                    wake_homes(url), sample_wake, end_homes, 100});
    // 12 claimers (held sessions), on PostgreSQL spread over three homes. Goal: >= 2,000
    // claims/s (a throughput: the table shows it, the goal is the note's to compare).
    list.push_back({"store: 12 claimers, one home (mcp, sqlite)", 0, claim_homes(""), sample_claims,
                    end_homes, 3, "", "claims/s"});
    list.push_back({"store: 12 claimers, three homes (mcp, postgresql)", 0, claim_homes(url),
                    sample_claims, end_homes, 3, "", "claims/s"});
    // kill-agent --force: on SQLite, on PostgreSQL in the agent's home, and from another home
    // (its supervisor rung through the store). Goal across homes: median <= 100 ms.
    list.push_back({"store: kill-agent --force (sqlite)", 0,
                    [](Env& env) { store_homes("", 1)(env); }, sample_kill(true), end_homes, 30});
    list.push_back({"store: kill-agent --force, same home (postgresql)", 0,
                    [url](Env& env) { store_homes(url, 2)(env); }, sample_kill(true), end_homes,
                    30});
    list.push_back({"store: kill-agent --force, across homes (postgresql)", 100.0,
                    [url](Env& env) { store_homes(url, 2)(env); }, sample_kill(false), end_homes,
                    30});
    return list;
}

}  // namespace bench
