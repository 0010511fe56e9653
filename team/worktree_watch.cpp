#include "team/worktree_watch.hpp"

#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <system_error>
#include <vector>

#include "base/time.hpp"
#include "git/repository.hpp"
#include "git/runner.hpp"
#include "git/status.hpp"
#include "proc/pidfd.hpp"
#include "proc/process_table.hpp"
#include "state/activity.hpp"
#include "state/members.hpp"
#include "state/worktree_rows.hpp"

namespace team {

namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

// A burst of changes is looked at once quiet for kQuiet, and at most kLongest after its first.
constexpr milliseconds kQuiet{100};
constexpr milliseconds kLongest{400};
// A look that failed is tried again this long after.
constexpr milliseconds kRetry{250};
constexpr std::uint32_t kEvents = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_CREATE | IN_DELETE |
                                  IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF;

// Directories watched by one inotify descriptor; a directory made in a watched tree is watched
// as it comes.
class Inotify {
  public:
    Inotify() : fd_(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {}
    ~Inotify() {
        if (fd_ >= 0) ::close(fd_);
    }
    Inotify(const Inotify&) = delete;
    Inotify& operator=(const Inotify&) = delete;

    int fd() const { return fd_; }
    // False once a watch could not be added for want of watches (ENOSPC) or of the descriptor.
    bool complete() const { return fd_ >= 0 && complete_; }

    // `dir`, and with `tree` every directory below it but `.git`.
    void add(const fs::path& dir, bool tree) {
        if (fd_ < 0) return;
        int wd = ::inotify_add_watch(fd_, dir.c_str(), kEvents | IN_ONLYDIR);
        if (wd < 0) {
            if (errno == ENOSPC || errno == ENOMEM) complete_ = false;
            return;  // gone meanwhile, or not a directory: nothing to watch
        }
        dirs_[wd] = {dir, tree};
        if (!tree) return;
        std::error_code ec;
        for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
            if (it->path().filename() == ".git") continue;
            if (it->is_directory(ec) && !it->is_symlink(ec)) add(it->path(), true);
        }
    }

    // Reads what is pending; true when anything changed. A directory made in a watched tree is
    // watched from now on.
    bool drain() {
        bool changed = false;
        alignas(inotify_event) char buf[16384];
        for (;;) {
            ssize_t n = ::read(fd_, buf, sizeof buf);
            if (n <= 0) return changed;
            for (ssize_t at = 0; at < n;) {
                auto* e = reinterpret_cast<inotify_event*>(buf + at);
                at += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
                changed = true;
                auto dir = dirs_.find(e->wd);
                if (e->mask & IN_IGNORED) {
                    if (dir != dirs_.end()) dirs_.erase(dir);
                    continue;
                }
                if (dir == dirs_.end() || !dir->second.tree || !(e->mask & IN_ISDIR)) continue;
                if (e->len == 0 || !(e->mask & (IN_CREATE | IN_MOVED_TO))) continue;
                std::string name = e->name;
                if (name != ".git") add(dir->second.path / name, true);
            }
        }
    }

  private:
    struct Dir {
        fs::path path;
        bool tree = false;
    };
    int fd_ = -1;
    bool complete_ = true;
    std::map<int, Dir> dirs_;
};

// The worktree's own git directory: what its `.git` file names ("gitdir: DIR").
fs::path admin_dir(const fs::path& worktree) {
    std::ifstream in(worktree / ".git");
    std::string line;
    std::getline(in, line);
    if (line.rfind("gitdir: ", 0) != 0) return {};
    fs::path dir = line.substr(8);
    return dir.is_absolute() ? dir : worktree / dir;
}

// What the watcher last computed: the heads its merge check and changed files were for.
struct Seen {
    bool looked = false;
    std::string head, into_head;
    git::MergeCheck check;
    std::vector<std::string> changed;
    nlohmann::json recorded;  // the state last written (without its time)
};

class Watcher {
  public:
    Watcher(Store& store, WorktreeRow row, const AgentRecord& agent)
        : store_(store), row_(std::move(row)), agent_(agent) {
        repo_ = git::resolve_repository(git_, row_.repo);
        into_ = row_.base_name.empty() ? row_.base : row_.base_name;
    }

    // Adds the watches; false when they cannot all be had.
    bool watch(Inotify& inotify) {
        inotify.add(row_.path, true);
        if (fs::path admin = admin_dir(row_.path); !admin.empty()) {
            inotify.add(admin, false);
            inotify.add(admin / "logs", false);
        }
        inotify.add(repo_.common_dir, false);
        inotify.add(repo_.common_dir / "refs" / "heads", true);
        return inotify.complete();
    }

    // Asks git once and records what changed.
    void look() {
        git::WorktreeStatus st = git::worktree_status(repo_, row_.path, row_.base);
        nlohmann::json doc = {{"missing", st.missing}};
        bool moved = false;
        if (!st.missing) {
            std::string into_head = git::commit_of(repo_, into_);
            if (!seen_.looked || st.head != seen_.head || into_head != seen_.into_head) {
                // A branch moved: the merge check into the base's branch as it is now (where a
                // merge would go), and the files the branch changed since the base.
                moved = !seen_.looked || st.head != seen_.head;
                seen_.check = git::MergeCheck{};
                seen_.check.clean = true;  // no commit of its own: nothing to merge
                seen_.changed.clear();
                if (st.ahead > 0) {
                    seen_.check = git::merge_check(repo_, into_, row_.branch);
                    seen_.changed = git::changed_files(repo_, row_.base, row_.branch);
                }
                seen_.head = st.head;
                seen_.into_head = into_head;
                seen_.looked = true;
            }
            doc.update({{"ahead", st.ahead},
                        {"behind", st.behind},
                        {"staged", st.staged},
                        {"modified", st.modified},
                        {"untracked", st.untracked},
                        {"unmerged", st.unmerged},
                        {"clean", st.clean()},
                        {"mergesCleanly", seen_.check.clean},
                        {"mergeConflicts", seen_.check.files},
                        {"head", st.head},
                        {"changed", seen_.changed}});
        }
        doc["watcher"] = {{"pid", ::getpid()},
                          {"start", proc::start_time_of(::getpid()).value_or(0)}};
        if (doc != seen_.recorded) {
            EpochMs now = clock_.now();
            store_.write([&] {
                record_git_state(store_, row_.id, doc, now);
                nlohmann::json details = {{"agentId", agent_.id_string()},
                                          {"agent", agent_.name},
                                          {"branch", row_.branch}};
                for (const char* key : {"missing", "ahead", "staged", "modified", "untracked",
                                        "unmerged", "mergesCleanly"}) {
                    if (doc.contains(key)) details[key] = doc[key];
                }
                append_activity(store_.db(), row_.team_id, now, "team", "worktree_state", details);
            });
            seen_.recorded = doc;
        }
        if (moved) conflicts();
    }

    // The conflicts between this branch and the other watched ones, for the pairs whose changed
    // files overlap, written on both sides.
    void conflicts() {
        struct Other {
            WorktreeRow row;
            std::vector<std::string> files;  // conflicting; empty: none
        };
        std::vector<Other> others;
        for (auto& other : team_worktrees(store_, row_.team_id)) {
            if (other.id == row_.id || other.repo != row_.repo) continue;
            if (!other.git_state.is_object() || !other.agent_id) continue;
            auto agent = load_agent(store_, *other.agent_id);
            if (!agent || !agent->live()) continue;
            Other o{std::move(other), {}};
            auto theirs = o.row.git_state.value("changed", std::vector<std::string>{});
            std::vector<std::string> both;
            std::set_intersection(seen_.changed.begin(), seen_.changed.end(), theirs.begin(),
                                  theirs.end(), std::back_inserter(both));
            if (!both.empty()) {
                try {
                    auto check = git::merge_check(repo_, row_.branch, o.row.branch);
                    if (!check.clean) o.files = check.files;
                } catch (const std::exception&) {
                    // unknown: not claimed
                }
            }
            others.push_back(std::move(o));
        }
        store_.write([&] {
            nlohmann::json mine = nlohmann::json::array();
            for (const auto& o : others) {
                // Read again inside the write: its own watcher may have written meanwhile.
                auto now = load_worktree(store_, o.row.id);
                if (!now) continue;
                nlohmann::json theirs = nlohmann::json::array();
                for (const auto& c : now->git_conflicts) {
                    if (c.value("worktree", std::int64_t{0}) != row_.id) theirs.push_back(c);
                }
                if (!o.files.empty()) {
                    mine.push_back({{"agent", o.row.agent},
                                    {"branch", o.row.branch},
                                    {"files", o.files},
                                    {"worktree", o.row.id}});
                    theirs.push_back({{"agent", row_.agent},
                                      {"branch", row_.branch},
                                      {"files", o.files},
                                      {"worktree", row_.id}});
                }
                if (theirs != now->git_conflicts) record_git_conflicts(store_, o.row.id, theirs);
            }
            record_git_conflicts(store_, row_.id, mine);
            append_activity(store_.db(), row_.team_id, clock_.now(), "team", "worktree_state",
                            {{"agentId", agent_.id_string()},
                             {"agent", agent_.name},
                             {"branch", row_.branch},
                             {"conflicts", mine.size()}});
        });
    }

  private:
    Store& store_;
    WorktreeRow row_;
    AgentRecord agent_;
    SystemClock clock_;
    git::GitProcess git_;
    git::Repository repo_;
    std::string into_;
    Seen seen_;
};

}  // namespace

int watch_worktree(Store& store, std::int64_t agent_id) {
    auto parent = proc::Pidfd::open(::getppid(), proc::start_time_of(::getppid()).value_or(0));
    auto agent = load_agent(store, agent_id);
    auto row = worktree_of_agent(store, agent_id);
    if (!parent || !agent || !agent->live() || !row || !row->kept()) return 0;
    Watcher watcher(store, *row, *agent);
    Inotify inotify;
    if (!watcher.watch(inotify)) {
        // Out of watches: a look asks git, as before.
        store.write([&] { record_git_state(store, row->id, nullptr, SystemClock().now()); });
        return 1;
    }
    bool pending = false;  // a burst not yet looked at, since `first`, its latest at `last`
    SteadyClock::time_point first{}, last{};
    auto look = [&] {
        try {
            watcher.look();
        } catch (const std::exception&) {
            // git or the store failed this once (a lock held, a busy store): looked at again
            // shortly, as a burst of its own, rather than left stale until the next change.
            first = last = SteadyClock::now() + kRetry - kQuiet;
            pending = true;
        }
    };
    look();
    for (;;) {
        int wait_ms = -1;
        auto due = std::min(last + kQuiet, first + kLongest);
        if (pending) {
            auto left = std::chrono::duration_cast<milliseconds>(due - SteadyClock::now());
            wait_ms = static_cast<int>(std::max<long long>(0, left.count()));
        }
        pollfd fds[2] = {{inotify.fd(), POLLIN, 0}, {parent->fd(), POLLIN, 0}};
        int n = ::poll(fds, 2, wait_ms);
        if (n < 0 && errno != EINTR) return 1;
        if (fds[1].revents) return 0;  // the pane supervisor ended
        if (n > 0 && (fds[0].revents & POLLIN) && inotify.drain()) {
            last = SteadyClock::now();
            if (!pending) first = last;
            pending = true;
        }
        if (pending && SteadyClock::now() >= std::min(last + kQuiet, first + kLongest)) {
            pending = false;
            look();
        }
    }
}

}  // namespace team
