// `team land` (team/land.hpp): the request checked, the land recorded, its queue run
// (team/land_queue.cpp); the history.
#include "team/land.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <system_error>

#include "base/cancel.hpp"
#include "base/duration.hpp"
#include "base/error.hpp"
#include "base/names.hpp"
#include "git/land.hpp"
#include "shells/shells.hpp"
#include "state/activity.hpp"
#include "state/worktree_rows.hpp"
#include "team/config.hpp"
#include "team/land_parts.hpp"
#include "team/messages.hpp"

namespace team {

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace land_parts;

namespace {

// One land of a team at a time: an flock on <home>/locks/land-<team id>.lock (the kernel drops
// it with its holder, so a killed land leaves none behind); close-on-exec, so the check's shell
// never holds it.
class LandLock {
  public:
    LandLock(const fs::path& home, std::int64_t team_id) {
        std::error_code ec;
        fs::create_directories(home / "locks", ec);
        auto path = home / "locks" / ("land-" + std::to_string(team_id) + ".lock");
        fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd_ < 0) throw failed("cannot open " + path.string() + ": " + std::strerror(errno));
        held_ = ::flock(fd_, LOCK_EX | LOCK_NB) == 0;
    }
    ~LandLock() {
        if (fd_ >= 0) ::close(fd_);
    }
    LandLock(const LandLock&) = delete;
    LandLock& operator=(const LandLock&) = delete;
    bool held() const { return held_; }

  private:
    int fd_ = -1;
    bool held_ = false;
};

// The strategy asked for: merge, squash or rebase.
git::Strategy land_strategy(const std::string& word) {
    auto s = git::parse_strategy(word);
    if (!s || *s == git::Strategy::ff) {
        throw usage_error("unknown strategy " + quote(word) +
                          did_you_mean(word, {"merge", "squash", "rebase"}) +
                          " (merge, squash or rebase)");
    }
    return *s;
}

// The target: a branch (refs/heads/ may be written out).
std::string target_branch(const git::Repository& repo, const std::optional<std::string>& asked,
                          const TeamRepo& team_repo) {
    std::string into = asked.value_or(team_repo.base_name);
    if (into.empty()) {
        throw usage_error("the team's base is a commit, not a branch: name the target with --into");
    }
    if (into.rfind("refs/heads/", 0) == 0) into = into.substr(11);
    if (git::branch_exists(repo, into)) return into;
    if (!git::commit_of(repo, into).empty()) {
        throw usage_error("--into " + quote(into) +
                          " names a commit or a tag, not a branch: land moves a branch forward");
    }
    throw not_found("no branch " + quote(into) + " in " + repo.main_checkout.string());
}

}  // namespace

json Land::run(const TeamRecord& team, const Caller& caller, const LandAsk& ask,
               const std::function<void(const json&)>& progress) {
    // Everything that needs no lookup first: bad input changes nothing.
    git::Strategy strategy = land_strategy(ask.strategy);
    if (ask.check) check_command("--check", *ask.check);
    if (ask.check_timeout && ask.check_timeout->count() <= 0) {
        throw usage_error("--check-timeout must be more than 0");
    }
    for (const auto& name : ask.agents) check_name(name, "agent name");
    if (!caller.is_leader)
        throw refused("only the leader of team " + quote(team.name) + " lands branches");
    auto team_repo = load_team_repo(store_, team.id);
    if (!team_repo) {
        throw refused("team " + quote(team.name) +
                      " has no repository: land takes the branches of worktree agents "
                      "(team create --repo PATH)");
    }
    auto git = std::make_unique<git::GitProcess>();
    git::Repository repo = git::resolve_repository(*git, team_repo->repo);
    std::string into = target_branch(repo, ask.into, *team_repo);
    std::optional<std::string> check =
        ask.check ? ask.check : config_value(store_, team.id, "check");
    if (!check) {
        throw usage_error("team " + quote(team.name) +
                          " has no check: give --check CMD, or set the team's (team config set "
                          "check CMD --team " +
                          team.name + "); --check true lands on a clean merge alone");
    }
    auto timeout = ask.check_timeout.value_or(config_duration(store_, team.id, "check-timeout"));

    LandLock lock(store_.home(), team.id);
    if (!ask.dry_run && !lock.held()) {
        std::string who;
        for (const auto& l : running_lands(store_, team.id)) {
            who = " (land " + std::to_string(l.id) + ", started by " + l.started_by + ", pid " +
                  std::to_string(l.pid) + ")";
        }
        throw refused("a land of team " + quote(team.name) + " is running" + who +
                      ": one at a time");
    }
    json recovered = json::array();
    if (!ask.dry_run && lock.held()) recovered = recover(store_, clock_, repo, team);

    std::string into_tip = git::commit_of(repo, "refs/heads/" + into);
    auto picks = pick_branches(store_, repo, team, ask.agents, into_tip);
    auto checkout = git::target_checkout(repo, into);
    json doc = {{"team", team.name},
                {"into", into},
                {"strategy", ask.strategy},
                {"check", *check},
                {"checkTimeout", format_duration(timeout)},
                {"dryRun", ask.dry_run},
                {"stopped", false},
                {"recovered", recovered},
                {"landId", nullptr},
                {"branches", json::array()}};
    if (ask.dry_run) {
        for (const auto& p : picks) {
            json row = {{"agent", p.agent}, {"branch", p.branch}, {"tip", p.tip}};
            std::optional<std::string> why = p.skip;
            if (!why) why = nothing_to_land(store_, repo, p.branch, p.tip, into_tip, into);
            if (why) {
                row["outcome"] = "skipped";
                row["why"] = *why;
            } else if (auto m = git::merge_check(repo, into_tip, p.tip); !m.clean) {
                row["outcome"] = "conflict";
                row["files"] = m.files;
            } else {
                row["outcome"] = "would_land";
            }
            doc["branches"].push_back(row);
        }
        if (checkout && checkout->dirty) {
            doc["warning"] = quote(into) + " is checked out in " + quote(checkout->path.string()) +
                             " with uncommitted work (" + *checkout->dirty +
                             "): a land would be refused";
        }
        return doc;
    }
    if (picks.empty()) return doc;  // nothing to land: nothing recorded
    if (checkout && checkout->dirty) {
        throw refused(quote(into) + " is checked out in " + quote(checkout->path.string()) +
                      " with uncommitted work (" + *checkout->dirty +
                      "): land never moves a branch under uncommitted work; commit or stash it, or "
                      "land --into another branch");
    }

    LandRun run(store_, clock_, team, caller, repo, progress);
    run.strategy = strategy;
    run.timeout = timeout;
    run.land.team_id = team.id;
    run.land.started_at = clock_.now();
    run.land.started_by = caller.id();
    run.land.pid = ::getpid();
    run.land.into = into;
    run.land.strategy = ask.strategy;
    run.land.check = *check;
    std::vector<LandItemRow> items;
    store_.write([&] {
        run.land.id = insert_land(store_, run.land);
        for (std::size_t i = 0; i < picks.size(); ++i) {
            LandItemRow item;
            item.land_id = run.land.id;
            item.position = static_cast<int>(i);
            item.agent = picks[i].agent;
            item.agent_id = picks[i].agent_id;
            item.branch = picks[i].branch;
            item.tip = picks[i].tip;
            insert_land_item(store_, item);
            items.push_back(item);
        }
        append_activity(store_.db(), team.id, clock_.now(), caller.id(), "land_started",
                        {{"landId", run.land.id},
                         {"into", into},
                         {"strategy", ask.strategy},
                         {"branches", picks.size()}});
    });
    doc["landId"] = run.land.id;
    if (progress) {
        json queued = json::array();
        for (const auto& p : picks) queued.push_back({{"agent", p.agent}, {"branch", p.branch}});
        progress({{"event", "queued"}, {"landId", run.land.id}, {"branches", queued}});
    }
    std::optional<std::string> stopped_at;
    int landed = 0, failed_count = 0;
    try {
        for (std::size_t i = 0; i < picks.size(); ++i) {
            json row;
            if (stopped_at) {
                row = run.decide(
                    items[i], "skipped",
                    {{"why", "the queue stopped at " + *stopped_at + " (--stop-on-failure)"}});
            } else if (picks[i].skip) {
                row = run.decide(items[i], "skipped", {{"why", *picks[i].skip}});
            } else {
                row = run.take(items[i], picks[i]);
            }
            std::string outcome = row["outcome"];
            if (outcome == "landed") ++landed;
            if (outcome == "conflict" || outcome == "check_failed") {
                ++failed_count;
                if (ask.stop_on_failure && !stopped_at) stopped_at = picks[i].agent;
            }
            doc["branches"].push_back(row);
        }
    } catch (...) {
        // Cancelled, or git failed: finished as the next land would finish a killed one (its
        // check ended with its tree), with the thread's cancel descriptor set aside meanwhile,
        // which would end the waits of that finish too.
        int cancel_fd = set_thread_cancel_fd(-1);
        try {
            recover(store_, clock_, repo, team);
        } catch (const std::exception&) {
            // the next land finishes it
        }
        set_thread_cancel_fd(cancel_fd);
        throw;
    }
    doc["stopped"] = stopped_at.has_value();
    if (auto left = run.finish(stopped_at ? "stopped" : "done")) doc["warning"] = *left;
    doc["landed"] = landed;
    doc["failed"] = failed_count;
    return doc;
}

json Land::history(const TeamRecord& team, int limit) {
    json out = json::array();
    for (const auto& l : team_lands(store_, team.id, limit)) {
        json branches = json::array();
        for (const auto& item : land_items(store_, l.id)) {
            branches.push_back(item.decided_at ? item.result : row_of(item, item.state));
        }
        out.push_back({{"landId", l.id},
                       {"startedAt", iso8601(l.started_at)},
                       {"endedAt", l.ended_at ? json(iso8601(*l.ended_at)) : json(nullptr)},
                       {"startedBy", l.started_by},
                       {"into", l.into},
                       {"strategy", l.strategy},
                       {"check", l.check},
                       {"status", l.status},
                       {"branches", branches}});
    }
    return out;
}

}  // namespace team
