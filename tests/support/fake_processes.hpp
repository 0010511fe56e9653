// A fake of the processes seam (proc/processes.hpp): processes that exist only in the test,
// born and ended as it says, in trees, with their process groups and environment markers. A
// handle to one (live()) is an eventfd that becomes readable when the fake process ends, so
// the code under test waits on it with poll() exactly as on a pidfd. Signals are recorded, and
// end a process unless it ignores them (a TERM-ignoring agent).
#pragma once

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "proc/processes.hpp"

namespace team::test {

class FakeProcesses final : public proc::Processes {
  public:
    struct Process {
        pid_t pid = 0;
        pid_t ppid = 0;
        pid_t pgid = 0;
        std::uint64_t start = 0;
        std::vector<std::string> env;
        bool alive = true;
        bool ignores_term = false;
        std::vector<int> signals;  // received, in order
        int event_fd = -1;
    };

    FakeProcesses() = default;
    FakeProcesses(const FakeProcesses&) = delete;
    FakeProcesses& operator=(const FakeProcesses&) = delete;
    ~FakeProcesses() override {
        for (auto& [pid, p] : table_) ::close(p.event_fd);
    }

    // A new live process below `parent` (0: none), in its own group unless `pgid` is given.
    pid_t spawn(pid_t parent = 0, std::vector<std::string> env = {}, pid_t pgid = 0) {
        Process p;
        p.pid = next_pid_++;
        p.ppid = parent;
        p.pgid = pgid ? pgid : p.pid;
        p.start = 5000 + static_cast<std::uint64_t>(p.pid);
        p.env = std::move(env);
        p.event_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        table_[p.pid] = p;
        return p.pid;
    }

    // Called once as each process ends (with the signal that ended it, 0 when it exited):
    // the test plays whoever waits for it (an agent's pane supervisor).
    std::function<void(pid_t, int)> on_end;

    // The process ends by itself (an agent exits), or by `signal`.
    void end(pid_t pid, int signal = 0) {
        auto& p = table_.at(pid);
        if (!p.alive) return;
        p.alive = false;
        std::uint64_t one = 1;
        [[maybe_unused]] auto n = ::write(p.event_fd, &one, sizeof one);
        if (on_end) on_end(pid, signal);
    }

    Process& at(pid_t pid) { return table_.at(pid); }
    bool is_alive(pid_t pid) const { return table_.at(pid).alive; }
    std::uint64_t start_of(pid_t pid) const { return table_.at(pid).start; }
    int terminate_calls() const { return terminate_calls_; }

    std::optional<proc::Pidfd> live(std::optional<std::int64_t> pid,
                                    std::optional<std::int64_t> start_time) override {
        if (!pid) return std::nullopt;
        auto it = table_.find(static_cast<pid_t>(*pid));
        if (it == table_.end() || !it->second.alive) return std::nullopt;
        if (start_time && *start_time != 0 &&
            static_cast<std::uint64_t>(*start_time) != it->second.start) {
            return std::nullopt;  // the pid was reused
        }
        return proc::Pidfd::adopt(::dup(it->second.event_fd), it->second.pid);
    }

    std::optional<proc::Pidfd> open(pid_t pid) override {
        auto it = table_.find(pid);
        if (it == table_.end()) return std::nullopt;
        return proc::Pidfd::adopt(::dup(it->second.event_fd), it->second.pid);
    }

    std::optional<std::uint64_t> start_time(pid_t pid) override {
        auto it = table_.find(pid);
        if (it == table_.end() || !it->second.alive) return std::nullopt;
        return it->second.start;
    }

    std::vector<proc::ProcessInfo> find_trees(
        const std::vector<proc::TreeTarget>& targets) override {
        std::vector<proc::ProcessInfo> out;
        for (auto& [pid, p] : table_) {
            if (!p.alive) continue;
            for (const auto& t : targets) {
                if (in_tree(p, t)) {
                    out.push_back(info(p));
                    break;
                }
            }
        }
        return out;
    }

    proc::TerminateOutcome terminate_trees(const std::vector<proc::TreeTarget>& targets, int sig,
                                           std::chrono::milliseconds, bool force) override {
        ++terminate_calls_;
        proc::TerminateOutcome outcome;
        for (const auto& found : find_trees(targets)) {
            auto& p = table_.at(found.pid);
            p.signals.push_back(sig);
            ++outcome.signalled;
            if (sig == SIGKILL || !(sig == SIGTERM && p.ignores_term)) end(p.pid, sig);
        }
        for (const auto& left : find_trees(targets)) {
            if (force) {
                table_.at(left.pid).signals.push_back(SIGKILL);
                end(left.pid, SIGKILL);
                outcome.force_killed = true;
            } else {
                ++outcome.survivors;
            }
        }
        return outcome;
    }

  private:
    static proc::ProcessInfo info(const Process& p) {
        proc::ProcessInfo i;
        i.pid = p.pid;
        i.ppid = p.ppid;
        i.pgid = p.pgid;
        i.sid = p.pgid;
        i.state = 'S';
        i.start_time = p.start;
        return i;
    }

    bool below(const Process& p, pid_t root) const {
        for (pid_t up = p.ppid; up != 0;) {
            if (up == root) return true;
            auto it = table_.find(up);
            if (it == table_.end()) return false;
            up = it->second.ppid;
        }
        return false;
    }

    bool in_tree(const Process& p, const proc::TreeTarget& t) const {
        bool root_ok = t.root != 0;
        if (root_ok && t.root_start) {
            auto it = table_.find(t.root);
            root_ok = it != table_.end() && it->second.start == t.root_start;
        }
        if (root_ok && (below(p, t.root) || (t.include_root && p.pid == t.root))) return true;
        if (t.pgid != 0 && p.pgid == t.pgid) return true;
        if (!t.marker.empty()) {
            bool all = true;
            for (const auto& m : t.marker) {
                all = all && std::find(p.env.begin(), p.env.end(), m) != p.env.end();
            }
            if (all) return true;
        }
        return false;
    }

    std::map<pid_t, Process> table_;
    pid_t next_pid_ = 900001;
    int terminate_calls_ = 0;
};

}  // namespace team::test
