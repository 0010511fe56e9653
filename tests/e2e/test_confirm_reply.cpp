// The reply to a shutdown confirm is written before the agent's tree is signalled (issue 24):
// `team mcp`, started by the agent itself (so a process of the tree its supervisor ends), is
// asked `shutdown_respond {action: confirm}` and must answer every time, as the command line's
// `team shutdown confirm` must print its answer. Real tmux, real panes, real processes; the
// agent is a bash script that speaks JSON-RPC to its `team mcp` child through a coprocess and
// ignores SIGTERM itself, so it lives to write down the answer (or the end of the stream, had
// its server been killed first) in a file outside the pane.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/agents_home.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/probe.hpp"

using team::test::bound;
using team::test::eventually;
using team::test::sq;
using Json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// The agent: waits for its shutdown request, starts `team mcp` (default SIGTERM, as any
// harness's server has it), confirms through it, writes the line that answers the confirm (or
// "EOF") to `out`, and exits.
std::string mcp_confirmer(const fs::path& out, const fs::path& ready) {
    std::string init =
        R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":)"
        R"("2025-06-18","capabilities":{},"clientInfo":{"name":"confirmer","version":"1"}}})";
    std::string call =
        R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"shutdown_respond",)"
        R"("arguments":{"action":"confirm"}}})";
    return "trap '' TERM; touch " + sq(ready) +
           "; while ! \"$TEAM_BIN\" inbox --type shutdown_request --unread --json | grep -q "
           "requestId; do sleep 0.05; done; "
           "coproc MCP { trap - TERM; exec \"$TEAM_BIN\" mcp; }; "
           "printf '%s\\n' " + sq(init) + " >&${MCP[1]}; read -r line <&${MCP[0]}; "
           "printf '%s\\n' " + sq(call) + " >&${MCP[1]}; answer=EOF; "
           "while read -r line <&${MCP[0]}; do "
           "case \"$line\" in *'\"id\":2'*) answer=$line; break;; esac; done; "
           "printf '%s\\n' \"$answer\" > " + sq(out.string() + ".part") + " && mv " +
           sq(out.string() + ".part") + " " + sq(out) + "; exit 0";
}

}  // namespace

TEST_CASE("shutdown: shutdown_respond confirm through the agent's own team mcp always gets its "
          "reply",
          "[shutdown][mcp]") {
    team::test::AgentsHome h("sd-confirm-reply");
    constexpr int kAgents = 20;
    std::vector<fs::path> answers;
    for (int i = 0; i < kAgents; ++i) {
        std::string name = "c" + std::to_string(i);
        auto out = h.env.dir() / (name + ".answer");
        auto ready = h.env.dir() / (name + ".ready");
        answers.push_back(out);
        h.spawn(name, {"bash", "-c", mcp_confirmer(out, ready)},
                {{"TEAM_BIN", team::test::team_binary()}});
        REQUIRE(eventually([&] { return fs::exists(ready); }));
    }
    for (int i = 0; i < kAgents; ++i) {
        auto r = h.ok({"kill-agent", "c" + std::to_string(i)});
        CHECK(r["phase"] == "requested");
    }
    for (int i = 0; i < kAgents; ++i) {
        std::string name = "c" + std::to_string(i);
        INFO("agent " << name);
        REQUIRE(eventually([&] { return fs::exists(answers[i]); }, bound(20000)));
        auto line = read_file(answers[i]);
        INFO("its answer: " << line);
        REQUIRE(line != "EOF\n");
        auto reply = Json::parse(line);
        CHECK(reply["id"] == 2);
        REQUIRE(reply.contains("result"));
        CHECK(reply["result"]["isError"] == false);
        CHECK(reply["result"]["structuredContent"]["phase"] == "confirmed");
        auto a = h.wait_terminated(name, 20000);
        CHECK(a["exitReason"] == "confirmed");
    }
    h.check_nothing_left();
    h.finish();
}
