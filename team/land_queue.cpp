// The queue of `team land` (team/land.hpp): one branch at a time, each step written ahead.
#include <string>

#include "base/error.hpp"
#include "base/text.hpp"
#include "git/land.hpp"
#include "state/activity.hpp"
#include "state/members.hpp"
#include "team/land_parts.hpp"
#include "team/messages.hpp"

namespace team::land_parts {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// How often a branch is taken again when the target moved during its check.
constexpr int kAttempts = 3;
// The check's last lines a row and a message carry.
constexpr std::size_t kTailLines = 20;
constexpr std::size_t kTailBytes = 4096;

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

}  // namespace

// Decides one branch; returns its row.
json LandRun::take(LandItemRow& item, const Pick& pick) {
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
    return decide(item, "skipped",
                  {{"why", quote(land.into) + " moved during each of " + std::to_string(kAttempts) +
                               " checks: land again when it is still"}});
}

// Removes the scratch worktree (its results are all recorded); a reason when it stays.
std::optional<std::string> LandRun::finish(const std::string& status) {
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
json LandRun::decide(LandItemRow& item, const std::string& outcome, json extra,
                     const std::optional<Pick>& pick) {
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

std::string LandRun::message(const Pick& pick) const {
    return std::string(strategy == git::Strategy::squash ? "Squashed" : "Merge") + " branch '" +
           pick.branch + "' into " + land.into + " (agent " + pick.agent + " of team " +
           team_.name + ", landed by team land)";
}

// Adds the land's scratch worktree at `at` unless it has one; true when it was added now.
bool LandRun::ensure_scratch(const std::string& at) {
    if (land.scratch) return false;
    fs::path path = land_dir(store_) / (team_.name + "-" + std::to_string(land.id));
    land.scratch = path.string();
    store_.write([&] { set_land_scratch(store_, land.id, land.scratch); });  // ahead of git
    git::add_scratch(repo_, store_.home(), path, at);
    return true;
}

// Runs the check on the scratch worktree; null when it passed, else what the row says.
json LandRun::check(LandItemRow& item, const Pick& pick) {
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

// The agent (when live) or the leader: why its branch did not land. To the agent it comes from
// whoever runs the land; to the leader, from the agent it is about (as a limit's or a needs_input
// message is), so a leader running the land is not its own sender.
void LandRun::tell(const Pick& pick, const json& row) {
    std::optional<AgentRecord> to;
    if (pick.agent_id) {
        if (auto a = load_agent(store_, *pick.agent_id); a && a->live()) to = a;
    }
    std::string from = caller_.name;
    if (!to) {
        to = find_leader(store_, team_.id);
        from = pick.agent;
    }
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
        std::string code = row["exitCode"].is_number() ? std::to_string(row["exitCode"].get<int>())
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
    post_message(store_.db(), team_, from, *to, type, text, data, clock_.now());
}

}  // namespace team::land_parts
