// Hosts (SPEC 16, second half) without the rig: what can be proved on one machine. Bad input and
// refusals of `team host` and `spawn --host`; a host that cannot be reached (ssh to 127.0.0.1,
// where no sshd listens) refused at once with ssh's reason, nothing recorded and no link left;
// the lease's rules; epochs on tasks. The rig of three hosts proves the rest
// (tests/rig/test-hosts).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "state/host_rows.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/pg.hpp"
#include "tests/support/process.hpp"

namespace {

using team::test::PgDatabase;
using team::test::RunResult;
using team::test::TeamEnv;
using Json = nlohmann::json;

RunResult expect(const TeamEnv& env, const std::vector<std::string>& args, int code) {
    auto r = env.run(args);
    INFO("team " << Json(args).dump() << " -> " << r.exit_code << "\nstdout: " << r.out
                 << "\nstderr: " << r.err);
    REQUIRE(r.exit_code == code);
    return r;
}

// Whether a process of this home's links runs (its command line names the home).
bool link_runs(const TeamEnv& env) {
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        std::ifstream in(entry.path() / "cmdline", std::ios::binary);
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (text.find("__link") != std::string::npos &&
            text.find(env.home().string()) != std::string::npos) {
            return true;
        }
    }
    return false;
}

}  // namespace

TEST_CASE("hosts: the lease's states and when others take an agent as ended", "[hosts]") {
    team::HostRecord h;
    h.lease_ms = 6000;  // renewed every 1 s; grace 1.5 s
    CHECK(team::host_state(h, 10'000) == team::HostState::idle);
    h.renewed_at = 10'000;
    CHECK(team::host_state(h, 11'999) == team::HostState::up);
    CHECK(team::host_state(h, 12'001) == team::HostState::suspect);
    CHECK(team::host_state(h, 16'000) == team::HostState::suspect);
    CHECK(team::host_state(h, 16'001) == team::HostState::lost);
    // Others hand back only after the lease and the grace, counted from the last renewal, or
    // from the agent's creation when that is later (its keeper may not have renewed yet).
    CHECK_FALSE(team::lease_run_out(h, 17'500, 0));
    CHECK(team::lease_run_out(h, 17'501, 0));
    CHECK_FALSE(team::lease_run_out(h, 17'501, 12'000));
    h.renewed_at.reset();
    CHECK_FALSE(team::lease_run_out(h, 17'000, 10'000));
    CHECK(team::lease_run_out(h, 17'501, 10'000));
    h.lost_at = 5;
    CHECK(team::host_state(h, 0) == team::HostState::lost);
    CHECK(team::lease_run_out(h, 0, 0));
}

TEST_CASE("hosts need a shared store: on SQLite they are refused, and none are listed", "[hosts]") {
    TeamEnv env("sqlite");
    expect(env, {"create", "web"}, 0);
    auto r = expect(env, {"host", "add", "h2", "--ssh", "h2"}, 4);
    CHECK(r.err.find("shared store") != std::string::npos);
    CHECK(expect(env, {"--json", "host", "list"}, 0).out == "[]\n");
    r = expect(env, {"spawn", "w1", "--host", "h2", "--", "sleep", "60"}, 4);
    CHECK(r.err.find("shared store") != std::string::npos);
    CHECK(expect(env, {"--json", "agents"}, 0).out == "[]\n");
}

TEST_CASE("host add, check, remove, lost and spawn --host: bad input and unknown hosts",
          "[pg-only][hosts]") {
    PgDatabase store;
    TeamEnv env(store.url());
    expect(env, {"create", "web"}, 0);
    for (const auto& bad : std::vector<std::vector<std::string>>{
             {"host", "add", "bad name", "--ssh", "h2"},
             {"host", "add", "x;y", "--ssh", "h2"},
             {"host", "add", "x", "--ssh", "-oProxyCommand=touch /tmp/p"},
             {"host", "add", "x", "--ssh", "h2;touch /tmp/p"},
             {"host", "add", "x", "--ssh", "$(id)"},
             {"host", "add", "x", "--ssh", "a b"},
             {"host", "add", "x", "--ssh", "h2\nh3"},
             {"host", "add", "x", "--ssh", std::string(100000, 'a')},
             {"host", "add", "x", "--ssh", "h2", "--team-path", "a\nb"},
             {"host", "add", "x", "--ssh", "h2", "--team-path", "-x"},
             {"host", "add", "x", "--ssh", "h2", "--lease", "0s"},
             {"host", "add", "x", "--ssh", "h2", "--lease", "soon"},
             {"host", "add", "x"},
         }) {
        expect(env, bad, 2);
    }
    auto r = expect(env, {"host", "check", "nosuch"}, 3);
    CHECK(r.err.find("host 'nosuch' not found") != std::string::npos);
    expect(env, {"host", "remove", "nosuch"}, 3);
    expect(env, {"host", "lost", "nosuch"}, 3);
    r = expect(env, {"spawn", "w1", "--host", "nosuch", "--", "sleep", "60"}, 3);
    CHECK(r.err.find("team host add") != std::string::npos);
    expect(env, {"spawn", "w1", "--host", "bad name", "--", "sleep", "60"}, 2);
    CHECK(expect(env, {"--json", "host", "list"}, 0).out == "[]\n");
    CHECK(expect(env, {"--json", "agents"}, 0).out == "[]\n");
    CHECK_FALSE(link_runs(env));
}

TEST_CASE("a host that cannot be reached is refused at once with ssh's reason, and nothing is kept",
          "[pg-only][hosts]") {
    PgDatabase store;
    TeamEnv env(store.url());
    // No sshd listens on this machine's loopback (scripts/setup keeps the machine's own from
    // starting): ssh is refused, and says so.
    auto r = expect(env, {"--json", "host", "add", "lo", "--ssh", "127.0.0.1"}, 1);
    auto doc = Json::parse(r.out);
    CHECK(doc["code"] == "failed");
    CHECK(doc["error"].get<std::string>().find("cannot reach host 'lo'") != std::string::npos);
    CHECK(doc["error"].get<std::string>().find("was not added") != std::string::npos);
    CHECK(expect(env, {"--json", "host", "list"}, 0).out == "[]\n");
    CHECK_FALSE(link_runs(env));
}

TEST_CASE("a task handed back gets a new epoch, and a write under the old one is refused",
          "[hosts]") {
    TeamEnv env;
    expect(env, {"create", "web"}, 0);
    expect(env, {"spawn", "w1", "--", "sleep", "600"}, 0);
    expect(env, {"task", "add", "job"}, 0);
    auto claimed = Json::parse(expect(env, {"--json", "task", "claim", "1", "--as", "w1"}, 0).out);
    CHECK(claimed["epoch"] == 0);
    expect(env, {"--as", "w1", "task", "update", "1", "--subject", "job, renamed", "--epoch", "0"},
           0);
    expect(env, {"kill-agent", "w1", "--force", "--grace", "1s"}, 0);
    auto task = Json::parse(expect(env, {"--json", "task", "show", "1"}, 0).out);
    CHECK(task["epoch"] == 1);
    CHECK(task["owner"].is_null());
    auto r = expect(env, {"task", "done", "1", "--epoch", "0"}, 4);
    CHECK(r.err.find("epoch 1, not 0") != std::string::npos);
    expect(env, {"task", "update", "1", "--status", "deleted", "--epoch", "0"}, 4);
    expect(env, {"task", "update", "1", "--epoch", "-1", "--subject", "x"}, 2);
    task = Json::parse(expect(env, {"--json", "task", "show", "1"}, 0).out);
    CHECK(task["status"] == "pending");
    CHECK(task["subject"] == "job, renamed");
    expect(env, {"task", "done", "1", "--epoch", "1"}, 0);
}
