// The figures of `team land` (SPEC 20, issue 42) on the 10,000-file repository of the git
// figures (make_repo_10k): team's own cost per landed branch beside the check's time, against a
// hand-run `git merge --no-ff` and the same check in the main checkout.
//
// The home: a team "bench" made with --repo on that repository, four agents spawned with
// --worktree (each runs `sleep 1000`). One measure (untimed set-up, then three timings, so that
// the three see the machine alike):
//   1. each agent commits one small edit on its branch (untimed);
//   2. by hand: for each branch, `git merge --quiet --no-ff --no-edit BRANCH` in the main
//      checkout, then the check there (timed: the sum, divided by 4);
//   3. each agent commits one more edit (untimed);
//   4. one whole `team land a0 a1 a2 a3 --check CHECK` process (timed, divided by 4); every
//      branch must have landed;
//   5. the check alone, four times in the main checkout (timed, the mean).
// The check: `git diff --quiet HEAD`, through /bin/sh as team's check shell runs it. It stats
// every one of the 10,000 files and compares the index with the commit's tree, as a build or a
// test run looks at the whole tree, and costs tens of milliseconds, so that team's own cost is
// not hidden under a long check. A scratch worktree that is not the whole candidate fails it.
//
// The first of the land figures takes the measures; the others show the same measures in another
// light (team land, the check, team land minus the check, the ratio), or take their own when
// they run alone (--only).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "bench/harness.hpp"

namespace bench {

namespace {

namespace fs = std::filesystem;

constexpr int kBranches = 4;
constexpr int kRuns = 3;  // and one warm-up: four measures, a few seconds each at 10k files
const std::string kCheck = "git diff --quiet HEAD";

struct LandHome {
    fs::path repo;
    std::vector<fs::path> worktrees;
    std::vector<std::string> agents, branches;
    int round = 0;
    // Per measure, in ms per branch: by hand (merge + check), team land, the check alone.
    std::vector<double> hand, land, check;
};

LandHome& held(Env& env) {
    return *static_cast<LandHome*>(env.held.get());
}

void set_up_land(Env& env) {
    auto h = std::make_shared<LandHome>();
    h->repo = fs::path(env.dir) / "repo";
    make_repo_10k(env, h->repo);
    run_checked(env, {env.team, "create", "bench", "--repo", h->repo.string()});
    for (int i = 0; i < kBranches; ++i) {
        std::string agent = "a" + std::to_string(i);
        run_checked(env, {env.team, "--team", "bench", "spawn", agent, "--worktree", "--", "sleep",
                          "1000"});
        fs::path wt = fs::path(env.home) / "worktrees" / "bench" / agent;
        std::string branch =
            run_checked(env, {"git", "-C", wt.string(), "rev-parse", "--abbrev-ref", "HEAD"});
        while (!branch.empty() && (branch.back() == '\n' || branch.back() == ' '))
            branch.pop_back();
        h->agents.push_back(agent);
        h->worktrees.push_back(wt);
        h->branches.push_back(branch);
    }
    env.held = h;
}

// Each agent commits one small edit of a file of its own on its branch.
void commit_round(Env& env, LandHome& h) {
    int round = h.round++;
    for (int i = 0; i < kBranches; ++i) {
        std::string file = repo_10k_file(i * 2500 + round % 2500);
        std::ofstream(h.worktrees[i] / file, std::ios::app)
            << "round " << round << " by " << h.agents[i] << "\n";
        run_checked(env, {"git", "-C", h.worktrees[i].string(), "commit", "--quiet", "-m",
                          "round " + std::to_string(round), "--", file});
    }
}

std::vector<std::string> check_argv(const LandHome& h) {
    return {"/bin/sh", "-c", "cd '" + h.repo.string() + "' && " + kCheck};
}

void measure(Env& env) {
    LandHome& h = held(env);
    commit_round(env, h);
    double hand = 0;
    for (const auto& branch : h.branches) {
        hand += time_run(env, {"git", "-C", h.repo.string(), "merge", "--quiet", "--no-ff",
                               "--no-edit", branch});
        hand += time_run(env, check_argv(h));
    }
    commit_round(env, h);
    std::vector<std::string> argv = {env.team, "--json", "--team", "bench", "land"};
    argv.insert(argv.end(), h.agents.begin(), h.agents.end());
    argv.insert(argv.end(), {"--check", kCheck});
    double start = now_ms();
    Captured c = run_capture(env, argv);
    double land = now_ms() - start;
    std::size_t landed = 0;
    for (std::size_t at = 0; (at = c.out.find("\"outcome\":\"landed\"", at)) != std::string::npos;
         ++at)
        ++landed;
    if (c.status != 0 || landed != kBranches) {
        throw CommandFailed("team land landed " + std::to_string(landed) + " of " +
                            std::to_string(kBranches) + ": " + c.out + c.err);
    }
    double check = 0;
    for (int i = 0; i < kBranches; ++i) check += time_run(env, check_argv(h));
    h.hand.push_back(hand / kBranches);
    h.land.push_back(land / kBranches);
    h.check.push_back(check / kBranches);
}

// A figure of one view of the measures: the n-th sample is the n-th measure's, taken now unless
// an earlier figure of this home took it.
Figure land_figure(std::string name, double goal, std::function<double(LandHome&, size_t)> view) {
    auto seen = std::make_shared<size_t>(0);
    Figure f{"land: " + std::move(name),
             goal,
             set_up_land,
             [seen, view = std::move(view)](Env& env) {
                 LandHome& h = held(env);
                 if (*seen >= h.land.size()) measure(env);
                 return view(h, (*seen)++);
             },
             kill_tmux_server,
             kRuns};
    f.shared_home = "land";
    return f;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

std::vector<Figure> land_figures(const std::string&) {
    std::vector<Figure> list;
    // References: the hand-run merge and check per branch (the baseline), the check alone.
    list.push_back(land_figure("hand-run git merge --no-ff + check, per branch, 10k files", 0,
                               [](LandHome& h, size_t i) { return h.hand[i]; }));
    list.push_back(land_figure("the check alone (git diff --quiet HEAD), 10k files", 0,
                               [](LandHome& h, size_t i) { return h.check[i]; }));
    // team land of four branches, as a whole process, per branch; and less the check's time.
    list.push_back(land_figure("team land of 4 branches, per branch, 10k files", 0,
                               [](LandHome& h, size_t i) { return h.land[i]; }));
    list.push_back(land_figure("team land's own cost per branch (less the check), 10k files", 0,
                               [](LandHome& h, size_t i) { return h.land[i] - h.check[i]; }));
    // Goal: 1.5x (issue 42). team land per branch against the hand-run merge and check.
    list.push_back(land_figure("team land / hand-run merge + check, per branch, 10k files", 1.5,
                               [](LandHome& h, size_t i) { return h.land[i] / h.hand[i]; }));
    list.back().unit = "x";
    // What the ratio depends on: team's cost per branch is about the same whatever the check, so
    // a longer check dilutes it. The shortest check for which the ratio is within 1.5x:
    // (own + C) <= 1.5 (git + C)  <=>  C >= 2 (own - 1.5 git), with git the hand-run merge alone.
    list.push_back(land_figure("the shortest check for which team land is within 1.5x, 10k files",
                               0, [](LandHome& h, size_t i) {
                                   double own = h.land[i] - h.check[i];
                                   double git = h.hand[i] - h.check[i];
                                   return std::max(0.0, 2 * (own - 1.5 * git));
                               }));
    list.back().teardown = [](Env& env) {
        LandHome& h = held(env);
        std::vector<double> own_git;
        for (size_t i = 0; i < h.hand.size(); ++i) own_git.push_back(h.hand[i] - h.check[i]);
        std::fprintf(stderr,
                     "land, per branch (medians of %zu measures): by hand %.1f ms (its git %.1f), "
                     "team land %.1f ms, the check %.1f ms\n",
                     h.hand.size(), median(h.hand), median(own_git), median(h.land),
                     median(h.check));
        kill_tmux_server(env);
    };
    return list;
}

}  // namespace bench
