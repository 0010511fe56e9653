// Test support: the scripted ACP agent of tests/acp (node and the official TypeScript SDK), which
// the e2e tests of ACP agents spawn with `team spawn --acp`.
#pragma once

#include <catch2/catch.hpp>
#include <filesystem>

#include "tests/support/process.hpp"

namespace team::test {

// tests/acp/agent.mjs in the source tree.
inline std::filesystem::path acp_peer() {
    return source_dir() / "tests" / "acp" / "agent.mjs";
}

// True when the scripted agent can run; otherwise the line ctest's SKIP_REGULAR_EXPRESSION looks
// for, and the test returns (counted as skipped).
inline bool acp_peer_ready() {
    if (std::filesystem::exists(source_dir() / "tests" / "acp" / "node_modules" /
                                "@agentclientprotocol" / "sdk" / "package.json"))
        return true;
    WARN("acp: skipped, tests/acp/node_modules is missing (scripts/setup installs it)");
    return false;
}

}  // namespace team::test
