// A strict recording fake of the git runner (ninja's StatTest style, like fake_tmux.hpp): each
// expected call is declared with its argv, its directory and the answer git would give; a call
// that was not expected, or comes out of order, fails the test at once.
#pragma once

#include <catch2/catch.hpp>
#include <deque>
#include <string>
#include <vector>

#include "git/runner.hpp"

namespace team::test {

class FakeGit final : public git::Git {
  public:
    struct Call {
        std::vector<std::string> args;
        std::filesystem::path cwd;
        git::GitResult result;
    };

    // The next call must be exactly `args` in `cwd`; it gets `result`.
    FakeGit& expect(std::vector<std::string> args, std::filesystem::path cwd,
                    git::GitResult result = {}) {
        expected_.push_back({std::move(args), std::move(cwd), std::move(result)});
        return *this;
    }

    git::GitResult run(const git::GitCall& call) override {
        calls_.push_back(call);
        if (expected_.empty()) FAIL("unexpected git call: " << join(call.args));
        Call next = expected_.front();
        expected_.pop_front();
        INFO("expected: " << join(next.args) << " in " << next.cwd);
        INFO("actual:   " << join(call.args) << " in " << call.cwd);
        REQUIRE(call.args == next.args);
        REQUIRE(call.cwd == next.cwd);
        return next.result;
    }

    bool done() const { return expected_.empty(); }
    const std::vector<git::GitCall>& calls() const { return calls_; }

    static std::string join(const std::vector<std::string>& args) {
        std::string out;
        for (const auto& a : args) out += "[" + a + "] ";
        return out;
    }

  private:
    std::deque<Call> expected_;
    std::vector<git::GitCall> calls_;
};

}  // namespace team::test
