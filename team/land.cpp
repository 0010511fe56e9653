// The queue of `team land` (team/land.hpp): one branch at a time, each step written ahead.
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
#include "base/text.hpp"
#include "git/land.hpp"
#include "shells/shells.hpp"
#include "state/activity.hpp"
#include "state/members.hpp"
#include "state/worktree_rows.hpp"
#include "team/config.hpp"
#include "team/land_parts.hpp"
#include "team/messages.hpp"

namespace team {

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace land_parts;

namespace {

// How often a branch is taken again when the target moved during its check.
constexpr int kAttempts = 3;
// The check's last lines a row and a message carry.
constexpr std::size_t kTailLines = 20;
constexpr std::size_t kTailBytes = 4096;

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

// The last lines of a check's output.
std::string tail_of(const std::string& output) {
    std::size_t at = output.size();
    if (at > 0 && output[at - 1] == '\n') --at;
    std::size_t lines = 0;
    while (at > 0 && lines < kTailLines) {
        std::size_t nl = output.rfind('\n', at - 1);
        at = nl == std::string::npos ? 0 : nl;
        ++lines;
        if (nl == std::string::npos) break;
    }
    std::string tail(utf8_tail(std::string_view(output).substr(at == 0 ? 0 : at + 1), kTailBytes));
    while (!tail.empty() && tail.back() == '\n') tail.pop_back();
    // A check may print anything: what is not UTF-8 is replaced, since rows and messages are JSON.
    if (!is_valid_utf8(tail)) {
        tail = json::parse(json(tail).dump(-1, ' ', false, json::error_handler_t::replace))
                   .get<std::string>();
    }
    return tail;
}

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

// The queue itself: one land's state as it goes.
class LandRun {
  public:
    LandRun(Store& store, const Clock& clock, const TeamRecord& team, const Caller& caller,
            const git::Repository& repo, const std::function<void(const json&)>& progress)
        : store_(store),
          clock_(clock),
          team_(team),
          caller_(caller),
          repo_(repo),
          progress_(progress),
          shells_(store, clock) {}

    LandRow land;
    git::Strategy strategy = git::Strategy::merge;
    std::chrono::milliseconds timeout{0};

    // Decides one branch; returns its row.
    json take(LandItemRow& item, const Pick& pick) {
        for (int attempt = 1; attempt <= kAttempts; ++attempt) {
            std::string onto = git::commit_of(repo_, "refs/heads/" + land.into);
            if (auto why = nothing_to_land(store_, repo_, item.branch, item.tip, onto, land.into)) {
                return decide(item, "skipped", {{"why", *why}});
            }
            git::Candidate c;
            if (strategy == git::Strategy::rebase) {
                ensure_scratch(onto);
                c = git::rebase_candidate(repo_, *land.scratch, onto, item.tip);
            } else {
                c = git::merge_candidate(repo_, strategy, onto, item.tip, message(pick));
            }
            if (!c.clean) {
                return decide(item, "conflict", {{"files", c.files}, {"onto", onto}}, pick);
            }
            if (c.commit == onto) {
                return decide(item, "skipped",
                              {{"why", "nothing to land: rebased onto " + quote(land.into) +
                                           ", it brings no change"}});
            }
            item.onto = onto;
            item.candidate = c.commit;
            // A scratch added now is added at the candidate itself: no second checkout of it.
            bool fresh = ensure_scratch(c.commit);
            if (strategy != git::Strategy::rebase && !fresh)
                git::checkout_scratch(repo_, *land.scratch, c.commit);
            json checked = check(item, pick);
            if (!checked.is_null()) return decide(item, "check_failed", checked, pick);
            // Written ahead: a land killed from here on is finished by the next.
            item.state = "landing";
            store_.write([&] { set_land_item_state(store_, item); });
            git::TargetMove move =
                git::move_target(repo_, store_.home(), land.into, c.commit, onto,
                                 "team land " + pick.agent + " (" + item.branch + ")");
            if (move.outcome == git::TargetMove::Outcome::moved) {
                json extra = {{"commit", c.commit}, {"previous", onto}, {"attempts", attempt}};
                extra["checkout"] =
                    move.checkout.empty() ? json(nullptr) : json(move.checkout.string());
                return decide(item, "landed", extra);
            }
            if (move.outcome == git::TargetMove::Outcome::refused) {
                return decide(item, "skipped", {{"why", move.why}, {"shellId", *item.shell_id}});
            }
            // The target moved during the check: taken again, onto its new tip.
            item.state = "queued";
            store_.write([&] { set_land_item_state(store_, item); });
            if (progress_)
                progress_({{"event", "retry"}, {"agent", item.agent}, {"attempt", attempt + 1}});
        }
        return decide(
            item, "skipped",
            {{"why", quote(land.into) + " moved during each of " + std::to_string(kAttempts) +
                         " checks: land again when it is still"}});
    }

    // Removes the scratch worktree (its results are all recorded); a reason when it stays.
    std::optional<std::string> finish(const std::string& status) {
        std::optional<std::string> left;
        if (land.scratch)
            left = git::remove_scratch(repo_, store_.home(), land_dir(store_), *land.scratch);
        store_.write([&] {
            if (!left) set_land_scratch(store_, land.id, std::nullopt);
            end_land(store_, land.id, status, clock_.now());
            append_activity(store_.db(), team_.id, clock_.now(), caller_.id(), "land_finished",
                            {{"landId", land.id}, {"into", land.into}, {"status", status}});
        });
        return left;
    }

    // The item decided: recorded (state, row, activity) before anything else is done, and the
    // agent or the leader told of a failure.
    json decide(LandItemRow& item, const std::string& outcome, json extra,
                const std::optional<Pick>& pick = std::nullopt) {
        json row = row_of(item, outcome);
        row.update(extra);
        item.state = outcome;
        item.result = row;
        item.decided_at = clock_.now();
        store_.write([&] {
            decide_land_item(store_, item);
            std::string kind = outcome == "landed" ? "branch_landed" : "land_" + outcome;
            json logged = row;
            logged["landId"] = land.id;
            logged.erase("outputTail");
            append_activity(store_.db(), team_.id, clock_.now(), caller_.id(), kind, logged);
            if (pick && (outcome == "conflict" || outcome == "check_failed")) tell(*pick, row);
        });
        if (progress_) progress_({{"event", "branch"}, {"row", row}});
        return row;
    }

  private:
    std::string message(const Pick& pick) const {
        return std::string(strategy == git::Strategy::squash ? "Squashed" : "Merge") + " branch '" +
               pick.branch + "' into " + land.into + " (agent " + pick.agent + " of team " +
               team_.name + ", landed by team land)";
    }

    // Adds the land's scratch worktree at `at` unless it has one; true when it was added now.
    bool ensure_scratch(const std::string& at) {
        if (land.scratch) return false;
        fs::path path = land_dir(store_) / (team_.name + "-" + std::to_string(land.id));
        land.scratch = path.string();
        store_.write([&] { set_land_scratch(store_, land.id, land.scratch); });  // ahead of git
        git::add_scratch(repo_, store_.home(), path, at);
        return true;
    }

    // Runs the check on the scratch worktree; null when it passed, else what the row says.
    json check(LandItemRow& item, const Pick& pick) {
        shells::ShellStart start;
        start.argv = {"/bin/sh", "-c", land.check};  // one argument: never spliced into another
        start.cwd = *land.scratch;
        start.env = {"TEAM_LAND_AGENT=" + pick.agent, "TEAM_LAND_BRANCH=" + item.branch,
                     "TEAM_LAND_INTO=" + land.into, "TEAM_LAND_ONTO=" + item.onto.value_or(""),
                     "TEAM_LAND_COMMIT=" + item.candidate.value_or("")};
        start.timeout = timeout;
        start.team_id = team_.id;
        start.actor = caller_.id();
        item.state = "checking";
        store_.write([&] { set_land_item_state(store_, item); });
        ShellRecord shell = shells_.start(start);
        item.shell_id = shell.id;
        store_.write([&] { set_land_item_state(store_, item); });
        if (progress_) {
            progress_({{"event", "checking"}, {"agent", pick.agent}, {"shellId", shell.id}});
        }
        // Cancelled (MCP's cancel, a Ctrl-C): Land::run ends the check and finishes the land.
        std::optional<ShellRecord> ended = shells_.wait(shell.id, std::nullopt);
        if (!ended) ended = shells_.get(shell.id);
        if (ended->exit_code && *ended->exit_code == 0 && !ended->signal) return nullptr;
        json out = {{"exitCode", ended->exit_code ? json(*ended->exit_code) : json(nullptr)},
                    {"signal", ended->signal ? json(*ended->signal) : json(nullptr)},
                    {"shellId", shell.id},
                    {"outputTail", tail_of(shells_.output(*ended, 64 * 1024).output)}};
        if (ended->error) out["why"] = "the check " + *ended->error;
        return out;
    }

    // The agent (when live) or the leader: why its branch did not land.
    void tell(const Pick& pick, const json& row) {
        std::optional<AgentRecord> to;
        if (pick.agent_id) {
            if (auto a = load_agent(store_, *pick.agent_id); a && a->live()) to = a;
        }
        if (!to) to = find_leader(store_, team_.id);
        if (!to) return;
        std::string text = pick.branch + " did not land on " + land.into + ": ";
        std::string type;
        if (row["outcome"] == "conflict") {
            type = "land_conflict";
            std::string files;
            for (const auto& f : row["files"])
                files += (files.empty() ? "" : ", ") + f.get<std::string>();
            text += "it conflicts with " + land.into + " in " + files + ". Merge " + land.into +
                    " into the branch, resolve and commit; the next land takes it again.";
        } else {
            type = "land_check_failed";
            std::string code = row["exitCode"].is_number()
                                   ? std::to_string(row["exitCode"].get<int>())
                               : row["signal"].is_string() ? row["signal"].get<std::string>()
                                                           : "no code";
            std::string tail = row["outputTail"].get<std::string>();
            text += "the check `" + land.check + "` failed (" + code + "; team shell output " +
                    row["shellId"].get<std::string>() + ")" +
                    (tail.empty() ? ", printing nothing." : ". Its last lines:\n" + tail);
        }
        json data = row;
        data["landId"] = land.id;
        data["into"] = land.into;
        post_message(store_.db(), team_, caller_.name, *to, type, text, data, clock_.now());
    }

    Store& store_;
    const Clock& clock_;
    const TeamRecord& team_;
    const Caller& caller_;
    const git::Repository& repo_;
    const std::function<void(const json&)>& progress_;
    shells::Shells shells_;
};

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
