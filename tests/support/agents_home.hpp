// Test support: one team on a home of its own, with helpers for the end-to-end tests of agents
// and of their ends (kill-agent, shutdown, teardown): they run `team --json`, spawn agents
// (examples/agent among them), read the agents' records, the tasks, the activity log, the panes
// and sessions of the home's private tmux server and the store, and prove at the end of a test
// that nothing of it is left.
#pragma once

#include <SQLiteCpp/SQLiteCpp.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/helpers.hpp"
#include "tests/support/process.hpp"
#include "tests/support/team_home.hpp"

namespace team::test {

// examples/agent in the source tree.
inline const std::filesystem::path kExampleAgent = source_dir() / "examples" / "agent";

// The lines of a text, empty ones left out.
inline std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty()) out.push_back(line);
    }
    return out;
}

// `doc` without what an agent's spending says that moves while it lives (SPEC 18: its wall
// time, CPU and memory, sampled), so that two looks a moment apart compare equal.
inline nlohmann::json steady(nlohmann::json doc) {
    if (doc.is_array()) {
        for (auto& e : doc) e = steady(std::move(e));
    } else if (doc.is_object()) {
        // An agent's usage, or a team's total: what moves is beside its tokens.
        if (doc.contains("tokens")) {
            for (const char* moving : {"wallMs", "cpuMs", "memory"}) doc.erase(moving);
        }
        for (auto& [k, v] : doc.items()) v = steady(std::move(v));
    }
    return doc;
}

// The warning a task carries once it was handed back from that agent's end.
inline std::string warning_for(const std::string& name) {
    return "Reassigned: previous owner " + name + " terminated";
}

// The keys of a JSON object.
inline std::set<std::string> keys_of(const nlohmann::json& doc) {
    std::set<std::string> out;
    for (const auto& [k, v] : doc.items()) out.insert(k);
    return out;
}

// The error code of SPEC 1.4 that goes with an exit code (1 to 4).
inline const std::string& error_code_name(int exit_code) {
    static const std::map<int, std::string> names{
        {1, "failed"}, {2, "usage"}, {3, "not_found"}, {4, "refused"}};
    return names.at(exit_code);
}

// A TeamHome with helpers that run `team` and tmux there.
class AgentsHome : public TeamHome {
  public:
    using Json = nlohmann::json;
    using TeamHome::TeamHome;

    // The id of this team's agent of that name.
    std::string id(const std::string& name) const { return name + "@" + team(); }

    // The environment of a call made by that agent (as its pane would set it).
    Env as(const std::string& name) const { return {{"TEAM_AGENT_ID", id(name)}}; }

    // `team --json ARGS...` (before ARGS, which may end with `-- COMMAND`), whatever its exit.
    RunResult json_run(std::vector<std::string> args, const Env& more = {}) const {
        args.insert(args.begin(), "--json");
        return run(args, more);
    }

    // `team --json ARGS...`, which must succeed; returns its document.
    Json ok(std::vector<std::string> args, const Env& more = {}) const {
        auto r = json_run(args, more);
        std::string shown;
        for (const auto& a : args) shown += (a.size() > 40 ? a.substr(0, 40) + "..." : a) + " ";
        INFO("team " << shown << "-> " << r.exit_code << " stdout: " << r.out
                     << " stderr: " << r.err);
        REQUIRE(r.exit_code == 0);
        return r.json();
    }

    // `team spawn NAME --env <marker> [--env K=V]... -- COMMAND` (in team `in`, else this one).
    Json spawn(const std::string& name, const std::vector<std::string>& command,
               const Env& vars = {}, const std::string& in = "") const {
        std::vector<std::string> args{"spawn", name, "--env", mark.entry()};
        for (const auto& [k, v] : vars) args.insert(args.end(), {"--env", k + "=" + v});
        args.push_back("--");
        args.insert(args.end(), command.begin(), command.end());
        Env more;
        if (!in.empty()) more["TEAM_NAME"] = in;
        auto doc = ok(args, more);
        REQUIRE(doc["name"] == name);
        REQUIRE(doc["pid"].is_number_integer());
        return doc;
    }

    // examples/agent, with its knobs.
    Json spawn_agent(const std::string& name, Env vars = {}) const {
        vars["TEAM_BIN"] = team_binary();
        return spawn(name, {kExampleAgent.string()}, vars);
    }

    // `team agents --all` of team `in` (else this one).
    Json agents(const std::string& in = "") const {
        Env more;
        if (!in.empty()) more["TEAM_NAME"] = in;
        auto doc = ok({"agents", "--all"}, more);
        REQUIRE(doc.is_array());
        return doc;
    }

    // The last entry of the list whose `key` is `value` (null when there is none).
    static Json find(const Json& list, const std::string& key, const std::string& value) {
        Json found;
        for (const auto& a : list) {
            if (a[key] == value) found = a;
        }
        return found;
    }

    // The newest record of that name (null when there is none).
    static Json find(const Json& list, const std::string& name) { return find(list, "name", name); }

    Json agent(const std::string& name) const {
        auto a = find(agents(), name);
        INFO("agent " << name);
        REQUIRE(a.is_object());
        return a;
    }

    // `team __report NAME@TEAM KIND EVENT` with `payload` on stdin, as an agent's hook runs it
    // (Claude Code's and Gemini CLI's give it there): exit 0, nothing printed (a hook's stdout
    // is read by its agent).
    void report(const std::string& name, const std::string& event, const Json& payload,
                const std::string& kind = "claude") const {
        auto r = env.start({"__report", id(name), kind, event}, extra(), payload.dump()).wait();
        INFO("stderr: " << r.err);
        REQUIRE(r.exit_code == 0);
        CHECK(r.out.empty());
    }

    // Polls `team agents --all` until the agent is terminated (up to `ms`); returns its record.
    Json wait_terminated(const std::string& name, int ms = 8000) const {
        Json last;
        eventually(
            [&] {
                last = find(agents(), name);
                return last.is_object() && last["status"] == "terminated";
            },
            bound(ms));
        INFO("agent " << name << ": " << last.dump());
        REQUIRE(last.is_object());
        REQUIRE(last["status"] == "terminated");
        return last;
    }

    // The activity of the team (of that type only, if given), oldest first.
    Json activity(const std::string& type = "") const {
        if (type.empty()) return ok({"activity"});
        return ok({"activity", "--type", type});
    }

    Json task(const std::string& id) const { return ok({"task", "show", id}); }

    // Pane ids on the home's private server (empty when no server runs).
    std::set<std::string> panes() const {
        return tmux_lines({"list-panes", "-a", "-F", "#{pane_id}"});
    }

    // Session names on the home's private server (empty when no server runs).
    std::set<std::string> sessions() const {
        return tmux_lines({"list-sessions", "-F", "#{session_name}"});
    }

    bool server_running() const { return env.tmux({"list-sessions"}).exit_code == 0; }

    // Nothing of the test is left: no pane, no server, no process with the marker.
    void check_nothing_left() const {
        CHECK(eventually([&] { return panes().empty(); }, bound(5000)));
        CHECK(eventually([&] { return !server_running(); }, bound(5000)));
        CHECK(mark.none_alive_within(5000));
    }

    // The number of shutdown requests addressed to that agent (its newest record).
    int requests_for(const std::string& name) const {
        SQLite::Database db((env.home() / "team.db").string());
        SQLite::Statement select(db, R"sql(
            SELECT count(*) FROM shutdown_requests WHERE agent_id =
                (SELECT max(a.id) FROM agents a JOIN teams t ON t.id = a.team_id
                 WHERE a.name = ? AND t.name = ?)
        )sql");
        select.bind(1, name);
        select.bind(2, team());
        select.executeStep();
        return select.getColumn(0).getInt();
    }

    // Every row the queries return, from the home's database (see rows_as_text).
    std::string rows(std::initializer_list<const char*> queries) const {
        SQLite::Database db((env.home() / "team.db").string());
        return rows_as_text(db, queries);
    }

  private:
    // The output lines of that tmux command on the home's private server (none when it fails).
    std::set<std::string> tmux_lines(const std::vector<std::string>& args) const {
        std::set<std::string> out;
        auto r = env.tmux(args);
        if (r.exit_code != 0) return out;
        for (const auto& line : lines_of(r.out)) out.insert(line);
        return out;
    }
};

// Runs `team --json ARGS`, expects exit `code` with the JSON error of SPEC 1.4, and nothing
// changed in what h.snapshot() shows (`Home`: an AgentsHome with a snapshot() of its own).
template <class Home>
void check_refused(const Home& h, std::vector<std::string> args, int code,
                   const TeamHome::Env& more = {}, const std::string& message = "") {
    auto before = h.snapshot();
    RunResult r = h.json_run(args, more);
    std::string shown;
    for (const auto& a : args) shown += (a.size() > 40 ? a.substr(0, 40) + "..." : a) + " ";
    INFO("team " << shown << "-> " << r.exit_code << " stdout: " << r.out << " stderr: " << r.err);
    CHECK(r.exit_code == code);
    nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
    REQUIRE(doc.is_object());
    CHECK(doc["success"] == false);
    CHECK(doc["code"] == error_code_name(code));
    if (!message.empty()) CHECK_THAT(doc["error"].get<std::string>(), Catch::Contains(message));
    CHECK(h.snapshot() == before);
}

}  // namespace team::test
