// A model of the home's tmux server for unit tests of the domain (spawn, kill-agent, teardown):
// unlike FakeTmux, which checks each argv of tmux/server byte for byte, it answers whatever
// tmux/server asks (split-window, new-session, list-panes, kill-pane, kill-session, typing) from
// a table of sessions and panes. Each pane's first process is a fake process
// (tests/support/fake_processes.hpp); `on_open` lets the test play the pane's supervisor (the
// `team __agent` a real pane runs) as soon as the pane exists.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tests/support/fake_processes.hpp"
#include "tmux/tmux.hpp"

namespace team::test {

class FakeTmuxServer final : public tmux::Tmux {
  public:
    struct Pane {
        std::string id;
        pid_t pid = 0;
        std::string session;
        std::vector<std::string> argv;  // what the pane runs
        std::string typed;              // what was typed into it
    };

    explicit FakeTmuxServer(FakeProcesses& processes) : processes_(processes) {}

    // Called with each new pane, after tmux would have started its command.
    std::function<void(const Pane&)> on_open;
    // While set, every pane creation fails with this message (a window too small).
    std::string fail_open;
    // The next this many pane creations fail (a passing failure).
    int fail_next_opens = 0;

    const std::map<std::string, Pane>& panes() const { return panes_; }
    bool has_pane(const std::string& id) const { return panes_.count(id) > 0; }
    int calls() const { return calls_; }

    tmux::TmuxResult run(const std::vector<std::string>& args, std::string_view input) override {
        ++calls_;
        // A paste (load-buffer ... ; paste-buffer ...): one command after the other, as tmux
        // runs them; the first that fails ends the chain. (A pane's opening chains its setup
        // the same way; open() reads that chain whole.)
        auto separator = std::find(args.begin(), args.end(), ";");
        if (args.at(0) == "load-buffer" && separator != args.end()) {
            auto first = one(std::vector<std::string>(args.begin(), separator), input);
            if (first.exit_code != 0) return first;
            --calls_;
            return run(std::vector<std::string>(separator + 1, args.end()), {});
        }
        return one(args, input);
    }

  private:
    tmux::TmuxResult one(const std::vector<std::string>& args, std::string_view input) {
        const std::string& verb = args.at(0);
        if (verb == "split-window" || verb == "new-session") return open(args);
        if (verb == "list-panes") {
            std::string out;
            for (const auto& [id, p] : panes_) {
                out += id + " " + std::to_string(p.pid) + " " + p.session + "\n";
            }
            if (panes_.empty()) return no_server();
            return {0, out, ""};
        }
        if (verb == "kill-pane") {
            auto it = panes_.find(args.at(2));
            if (it == panes_.end()) return {1, "", "can't find pane: " + args.at(2) + "\n"};
            processes_.end(it->second.pid);
            panes_.erase(it);
            return {};
        }
        if (verb == "kill-session") {
            std::string session = args.at(2).substr(1);  // =NAME
            bool found = false;
            for (auto it = panes_.begin(); it != panes_.end();) {
                if (it->second.session == session) {
                    processes_.end(it->second.pid);
                    it = panes_.erase(it);
                    found = true;
                } else {
                    ++it;
                }
            }
            return found ? tmux::TmuxResult{} : no_server();
        }
        if (verb == "send-keys" || verb == "paste-buffer") {
            auto target = std::find(args.begin(), args.end(), "-t");
            auto it = panes_.find(*(target + 1));
            if (it == panes_.end()) return {1, "", "can't find pane\n"};
            it->second.typed += verb == "send-keys" ? args.back() : buffer_;
            return {};
        }
        if (verb == "load-buffer") {
            buffer_ = std::string(input);
            return {};
        }
        if (verb == "capture-pane") {  // a pane shows what was typed into it, as a tty echoes
            auto target = std::find(args.begin(), args.end(), "-t");
            auto it = panes_.find(*(target + 1));
            if (it == panes_.end()) return {1, "", "can't find pane\n"};
            return {0, it->second.typed, ""};
        }
        return {};  // has-session, select-pane, set-option...: nothing to model
    }

    static tmux::TmuxResult no_server() { return {1, "", "no server running on /fake\n"}; }

    tmux::TmuxResult open(const std::vector<std::string>& args) {
        bool split = args[0] == "split-window";
        std::string session = split ? args.at(2).substr(1, args.at(2).size() - 2) : args.at(3);
        bool exists = false;
        for (const auto& [id, p] : panes_) exists = exists || p.session == session;
        if (split && !exists) return {1, "", "can't find session: " + session + "\n"};
        if (!split && exists) return {1, "", "duplicate session: " + session + "\n"};
        if (!fail_open.empty()) return {1, "", fail_open + "\n"};
        if (fail_next_opens > 0) {
            --fail_next_opens;
            return {1, "", "create pane failed: no space for new pane\n"};
        }
        Pane pane;
        pane.id = "%" + std::to_string(next_pane_++);
        pane.pid = processes_.spawn();
        pane.session = session;
        auto dashes = std::find(args.begin(), args.end(), "--");
        for (auto it = dashes + 1; it != args.end() && *it != ";"; ++it) pane.argv.push_back(*it);
        panes_[pane.id] = pane;
        if (on_open) on_open(pane);
        return {0, pane.id + " " + std::to_string(pane.pid) + "\n", ""};
    }

    FakeProcesses& processes_;
    std::map<std::string, Pane> panes_;
    std::string buffer_;
    int next_pane_ = 0;
    int calls_ = 0;
};

}  // namespace team::test
