// The figures of git/ (SPEC 14) on one repository of 10,000 files: adding an agent's worktree,
// a snapshot of uncommitted work, the merge check of a branch, a worktree's status. These time
// the library's calls in this process (each runs git processes through the real runner); the
// last two time whole `team` processes: spawn --worktree, and team agents of 32 worktree agents.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "bench/harness.hpp"
#include "git/repo_lock.hpp"
#include "git/repository.hpp"
#include "git/snapshots.hpp"
#include "git/status.hpp"
#include "git/worktrees.hpp"

namespace bench {

namespace {

namespace fs = std::filesystem;
namespace tg = team::git;

constexpr int kFiles = 10'000;

// What the git figures share: the runner, the repository, a dirty worktree, a branch.
struct GitHome {
    tg::GitProcess runner;
    tg::Repository repo;
    tg::Base base;
    fs::path dirty;  // a worktree with 100 modified, 50 staged and 100 untracked files
    int added = 0;
    int spawned = 0;
    bool many = false;    // the 32 agents of "team agents" are spawned
    bool look16 = false;  // the 16 agents of the ratio row are spawned, each with an edit
    std::vector<double> look_ms, status_ms;  // the ratio row's two times, sample by sample
};

void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
}

void git(const Env& env, const fs::path& cwd, std::vector<std::string> args) {
    std::vector<std::string> argv = {"git", "-C", cwd.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    run_checked(env, argv);
}

std::string file_name(int i) {
    return "src/d" + std::to_string(i / 100) + "/f" + std::to_string(i) + ".txt";
}

}  // namespace

std::string repo_10k_file(int i) {
    return file_name(i);
}

void make_repo_10k(const Env& env, const fs::path& dir) {
    fs::create_directories(dir);
    git(env, dir, {"init", "--quiet", "--initial-branch=main"});
    git(env, dir, {"config", "user.name", "Bench"});
    git(env, dir, {"config", "user.email", "bench@example.com"});
    for (int i = 0; i < kFiles; ++i) {
        write(dir / file_name(i),
              "file " + std::to_string(i) + "\n" + std::string(190, 'x') + "\n");
    }
    git(env, dir, {"add", "-A"});
    git(env, dir, {"commit", "--quiet", "-m", "10k files"});
}

namespace {

// The 10k-file repository (make_repo_10k); a branch five commits ahead; a worktree with
// uncommitted work of every kind.
void build_git_home(Env& env) {
    fs::path dir = fs::path(env.dir) / "repo";
    make_repo_10k(env, dir);
    auto home = std::make_shared<GitHome>();
    home->repo = tg::resolve_repository(home->runner, dir);
    home->base = tg::resolve_base(home->repo);

    fs::create_directories(env.home);
    tg::RepoLock lock(env.home, home->repo.common_dir);
    home->dirty = fs::path(env.home) / "worktrees" / "dirty";
    tg::add_worktree(home->repo, {home->dirty, "bench", "dirty", "", home->base, false});
    for (int i = 0; i < 100; ++i) write(home->dirty / file_name(i * 97), "modified\n");
    for (int i = 0; i < 50; ++i) git(env, home->dirty, {"add", file_name(i * 97)});
    for (int i = 0; i < 100; ++i)
        write(home->dirty / ("new/u" + std::to_string(i) + ".txt"), "new\n");

    fs::path feature = fs::path(env.home) / "worktrees" / "feature";
    tg::add_worktree(home->repo, {feature, "bench", "feature", "", home->base, false});
    for (int c = 0; c < 5; ++c) {
        for (int i = 0; i < 4; ++i)
            write(feature / file_name(c * 1000 + i * 7), "feature " + std::to_string(c) + "\n");
        git(env, feature, {"commit", "--quiet", "-am", "feature " + std::to_string(c)});
    }
    // main moves on elsewhere, so the check has a real three-way merge to do.
    write(dir / file_name(9999), "main moved\n");
    git(env, dir, {"commit", "--quiet", "-am", "main moves"});
    env.held = home;
    // The team whose agents `team spawn --worktree` gives worktrees of this repository.
    run_checked(env, {env.team, "create", "bench", "--repo", dir.string()});
}

GitHome& held(Env& env) {
    return *static_cast<GitHome*>(env.held.get());
}

Figure git_figure(std::string name, double goal, std::function<double(Env&)> sample, int max_runs) {
    Figure f{"git: " + std::move(name), goal, build_git_home, std::move(sample), nullptr, max_runs};
    f.shared_home = "git";
    return f;
}

}  // namespace

std::vector<Figure> git_figures(const std::string&) {
    std::vector<Figure> list;
    // Goal: 500 ms. One agent's worktree on 10k files, under the repository's lock, locked with
    // its reason, on a new branch (its removal after each run is not timed).
    list.push_back(git_figure(
        "worktree add, 10k files", 500.0,
        [](Env& env) {
            GitHome& h = held(env);
            std::string agent = "a" + std::to_string(h.added++);
            fs::path path = fs::path(env.home) / "worktrees" / agent;
            double start = now_ms();
            {
                tg::RepoLock lock(env.home, h.repo.common_dir);
                tg::add_worktree(h.repo, {path, "bench", agent, "", h.base, false});
            }
            double ms = now_ms() - start;
            git(env, h.repo.common_dir, {"worktree", "unlock", path.string()});
            git(env, h.repo.common_dir, {"worktree", "remove", path.string()});
            git(env, h.repo.common_dir, {"update-ref", "-d", "refs/heads/team/bench/" + agent});
            return ms;
        },
        30));
    // Goal: 150 ms. The uncommitted work of a 10k-file worktree (100 modified, 50 of them
    // staged, 100 untracked) kept as a commit under refs/team/snapshots/, the worktree untouched.
    list.push_back(git_figure(
        "snapshot, 10k files", 150.0,
        [](Env& env) {
            GitHome& h = held(env);
            double start = now_ms();
            tg::take_snapshot(h.repo, env.home, "bench", "dirty", h.dirty);
            return now_ms() - start;
        },
        60));
    // Goal: 20 ms. Whether a branch of 5 commits merges into a base that moved on
    // (merge-tree --write-tree: nothing checked out).
    list.push_back(git_figure(
        "merge check of a branch", 20.0,
        [](Env& env) {
            GitHome& h = held(env);
            double start = now_ms();
            tg::merge_check(h.repo, "main", "team/bench/feature");
            return now_ms() - start;
        },
        0));
    // A reference: one worktree's status (two reads without optional locks) at 10k files,
    // what `team agents` will pay per worktree agent.
    list.push_back(git_figure(
        "status of a worktree, 10k files", 0,
        [](Env& env) {
            GitHome& h = held(env);
            double start = now_ms();
            tg::worktree_status(h.repo, h.dirty, "main");
            return now_ms() - start;
        },
        60));
    // Goal: 500 ms. `team spawn --worktree` on the 10k-file repository, whole process: the
    // record, the worktree under the repository's lock, the pane and its supervisor confirming
    // the agent runs in it. (Its kill and `worktree rm` after each run are not timed.)
    list.push_back(git_figure(
        "spawn --worktree, 10k files", 500.0,
        [](Env& env) {
            GitHome& h = held(env);
            std::string agent = "s" + std::to_string(h.spawned++);
            double ms = time_run(env, {env.team, "--team", "bench", "spawn", agent, "--worktree",
                                       "--", "sleep", "1000"});
            run_checked(env, {env.team, "--team", "bench", "kill-agent", agent, "--force"});
            run_checked(env, {env.team, "--team", "bench", "worktree", "rm", agent});
            return ms;
        },
        20));
    // Goal: 300 ms. `team agents` of a team of 32 live worktree agents on the 10k-file
    // repository, every one's branch state asked of git (status, ahead/behind; a branch with
    // no commit of its own needs no merge check); the 32 are spawned before the first run.
    list.push_back(git_figure(
        "team agents, 32 worktree agents, 10k files", 300.0,
        [](Env& env) {
            GitHome& h = held(env);
            if (!h.many) {
                for (int i = 0; i < 32; ++i) {
                    run_checked(env, {env.team, "--team", "bench", "spawn", "m" + std::to_string(i),
                                      "--worktree", "--", "sleep", "1000"});
                }
                h.many = true;
            }
            return time_run(env, {env.team, "--team", "bench", "agents"});
        },
        30));
    // Goal: 3x. Issue 38's look: `team agents` of a team of 16 live worktree agents on the
    // 10k-file repository (each with an edit of its own, so every state says something), against
    // one `git status` of one of those worktrees, timed in turn within each sample; the sample
    // is the ratio of the two. Each agent's watcher keeps its worktree's state in the store
    // (team/worktree_watch.hpp), so the look is one read of it, not 16 runs of git. With a
    // `team` from before the watchers (--team), the same row times its git look.
    list.push_back(git_figure(
        "team agents of 16 worktree agents / one git status, 10k files", 3.0,
        [](Env& env) {
            GitHome& h = held(env);
            const std::string team = "look16";
            fs::path first = fs::path(env.home) / "worktrees" / team / "g0";
            if (!h.look16) {
                run_checked(env,
                            {env.team, "create", team, "--repo", h.repo.main_checkout.string()});
                for (int i = 0; i < 16; ++i) {
                    run_checked(env, {env.team, "--team", team, "spawn", "g" + std::to_string(i),
                                      "--worktree", "--", "sleep", "1000"});
                    fs::path wt =
                        fs::path(env.home) / "worktrees" / team / ("g" + std::to_string(i));
                    write(wt / file_name(i * 613), "edited by g" + std::to_string(i) + "\n");
                }
                // Until every watcher has recorded its edit (a team from before has none: then
                // its look asks git, and this waits no longer than its bound).
                double until = now_ms() + 20'000;
                while (now_ms() < until) {
                    auto out = run_checked(env, {env.team, "--team", team, "--json", "agents"});
                    size_t seen = 0;
                    for (size_t at = 0;
                         (at = out.find("\"source\":\"watcher\"", at)) != std::string::npos; ++at)
                        ++seen;
                    if (seen == 16 && out.find("\"modified\":0") == std::string::npos) break;
                }
                h.look16 = true;
            }
            double git_ms = time_run(env, {"git", "-C", first.string(), "status"});
            double look_ms = time_run(env, {env.team, "--team", team, "agents"});
            h.status_ms.push_back(git_ms);
            h.look_ms.push_back(look_ms);
            return look_ms / git_ms;
        },
        30));
    list.back().unit = "x";
    list.back().teardown = [](Env& env) {
        // The two times behind the ratio, for the record.
        GitHome& h = held(env);
        auto median = [](std::vector<double> v) {
            std::sort(v.begin(), v.end());
            return v.empty() ? 0.0 : v[v.size() / 2];
        };
        std::fprintf(stderr, "team agents of 16: median %.1f ms; one git status: median %.1f ms\n",
                     median(h.look_ms), median(h.status_ms));
        kill_tmux_server(env);
    };
    return list;
}

}  // namespace bench
