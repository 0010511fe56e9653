// One tools/call of `team mcp` on a test's home, as the identity the home's environment gives
// (the leader's): the call's result, or a test failure when the server gave none. The server
// answers what it took before its input's end, so one process per call.
#pragma once

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/agents_home.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/process.hpp"

namespace team::test {

// The first request of a session, and a tools/call (its id 2).
inline nlohmann::json mcp_initialize() {
    return {{"jsonrpc", "2.0"},
            {"id", 1},
            {"method", "initialize"},
            {"params",
             {{"protocolVersion", "2025-06-18"},
              {"capabilities", nlohmann::json::object()},
              {"clientInfo", {{"name", "e2e"}, {"version", "1"}}}}}};
}
inline nlohmann::json mcp_tool_call(const std::string& tool, const nlohmann::json& arguments) {
    return {{"jsonrpc", "2.0"},
            {"id", 2},
            {"method", "tools/call"},
            {"params", {{"name", tool}, {"arguments", arguments}}}};
}

inline nlohmann::json mcp_call(const AgentsHome& h, const std::string& tool,
                               const nlohmann::json& arguments) {
    using Json = nlohmann::json;
    Json init = mcp_initialize();
    Json call = mcp_tool_call(tool, arguments);
    Child mcp({team_binary(), "mcp"}, h.env.environment(h.extra({})),
              init.dump() + "\n" + call.dump() + "\n");
    auto r = mcp.wait();
    INFO("mcp: exit " << r.exit_code << " stderr " << r.err);
    for (const auto& line : lines_of(r.out)) {
        auto message = Json::parse(line, nullptr, false);
        if (message.is_object() && message.value("id", Json()) == 2)
            return message.value("result", Json());
    }
    FAIL("no answer to the call: " << r.out);
    return nullptr;
}

}  // namespace team::test
