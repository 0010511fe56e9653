// A strict recording fake of the tmux client (ninja's StatTest style): each expected call is
// declared with the answer tmux would give; a call that was not expected, or comes out of order,
// fails the test at once. Unit tests of tmux/server drive it and check every argv byte for byte.
#pragma once

#include <catch2/catch.hpp>
#include <deque>
#include <string>
#include <vector>

#include "tmux/tmux.hpp"

namespace team::test {

class FakeTmux final : public tmux::Tmux {
  public:
    struct Call {
        std::vector<std::string> args;
        tmux::TmuxResult result;
        std::string input;  // what the call must get on stdin
    };

    // The next call must be exactly `args`; it gets `result`.
    FakeTmux& expect(std::vector<std::string> args, tmux::TmuxResult result = {},
                     std::string input = "") {
        expected_.push_back({std::move(args), std::move(result), std::move(input)});
        return *this;
    }

    tmux::TmuxResult run(const std::vector<std::string>& args, std::string_view input) override {
        calls_.push_back(args);
        if (expected_.empty()) {
            FAIL("unexpected tmux call: " << join(args));
        }
        Call next = expected_.front();
        expected_.pop_front();
        INFO("expected: " << join(next.args));
        INFO("actual:   " << join(args));
        REQUIRE(args == next.args);
        REQUIRE(std::string(input) == next.input);
        return next.result;
    }

    // Every expected call was made.
    bool done() const { return expected_.empty(); }
    const std::vector<std::vector<std::string>>& calls() const { return calls_; }

    static std::string join(const std::vector<std::string>& args) {
        std::string out;
        for (const auto& a : args) out += "[" + a + "] ";
        return out;
    }

  private:
    std::deque<Call> expected_;
    std::vector<std::vector<std::string>> calls_;
};

}  // namespace team::test
