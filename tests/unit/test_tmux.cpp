// tmux/server against the strict fake: the exact tmux commands team sends, and how it reads
// tmux's answers. (The same code runs on real tmux in tests/e2e/test_agents.cpp.)
#include <catch2/catch.hpp>

#include "tests/support/fake_tmux.hpp"
#include "tmux/capture.hpp"
#include "tmux/server.hpp"

using team::test::FakeTmux;
using namespace team::tmux;

namespace {
TmuxResult ok(std::string out = "") {
    return {0, std::move(out), ""};
}
TmuxResult fail(std::string err) {
    return {1, "", std::move(err)};
}
}  // namespace

TEST_CASE("a new pane joins the session in one call, focus given back", "[tmux]") {
    FakeTmux fake;
    fake.expect({"split-window",
                 "-t",
                 "=web:",
                 "-P",
                 "-F",
                 "#{pane_id} #{pane_pid}",
                 "-c",
                 "/src",
                 "--",
                 "/bin/team",
                 "__agent",
                 "--home",
                 "/h",
                 "7",
                 ";",
                 "select-pane",
                 "-T",
                 "w1",
                 ";",
                 "pipe-pane",
                 "-o",
                 "exec cat >> '/h/logs/it'\\''s.log'",
                 ";",
                 "select-layout",
                 "-t",
                 "=web:",
                 "tiled",
                 ";",
                 "last-pane",
                 "-t",
                 "=web:"},
                ok("%3 4242\n"));
    TmuxServer server(fake);
    auto pane = server.open_pane("web", {"/bin/team", "__agent", "--home", "/h", "7"}, "/src", "w1",
                                 "/h/logs/it's.log");
    CHECK(pane.id == "%3");
    CHECK(pane.pid == 4242);
    CHECK(fake.done());
}

TEST_CASE("the first pane creates the session", "[tmux]") {
    FakeTmux fake;
    std::vector<std::string> tail{"-P",  "-F",  "#{pane_id} #{pane_pid}", "-c", "/", "--",
                                  "cmd", "a\\;"};
    std::vector<std::string> split{"split-window", "-t", "=web:"};
    split.insert(split.end(), tail.begin(), tail.end());
    split.insert(split.end(),
                 {";", "select-pane", "-T", "w", ";", "pipe-pane", "-o", "exec cat >> '/l'", ";",
                  "select-layout", "-t", "=web:", "tiled", ";", "last-pane", "-t", "=web:"});
    std::vector<std::string> create{"new-session", "-d", "-s", "web", "-n", "web"};
    create.insert(create.end(), tail.begin(), tail.end());
    create.insert(create.end(), {";", "select-pane", "-t", "=web:", "-T", "w", ";", "pipe-pane",
                                 "-t", "=web:", "-o", "exec cat >> '/l'"});
    fake.expect(split, fail("no server running on /h/tmux.sock\n")).expect(create, ok("%0 99\n"));
    TmuxServer server(fake);
    // An argument ending in ';' would end the tmux command: it is escaped.
    auto pane = server.open_pane("web", {"cmd", "a;"}, "/", "w", "/l");
    CHECK(pane.id == "%0");
    CHECK(fake.done());
}

TEST_CASE("a tmux failure is an error with tmux's own message", "[tmux]") {
    FakeTmux fake;
    fake.expect({"kill-pane", "-t", "%1"}, fail("can't find pane: %1\n"));
    fake.expect({"kill-pane", "-t", "%2"}, fail("open terminal failed: not a terminal\n"));
    fake.expect({"kill-pane", "-t", "%2"}, fail("open terminal failed: not a terminal\n"));
    fake.expect({"kill-pane", "-t", "%2"}, fail("open terminal failed: not a terminal\n"));
    TmuxServer server(fake);
    CHECK_FALSE(server.kill_pane("%1"));  // already gone: not an error
    CHECK_THROWS_WITH(server.kill_pane("%2"), Catch::Contains("not a terminal"));
    CHECK(fake.done());
}

TEST_CASE("a server that exits by itself during a kill is no error", "[tmux]") {
    // exit-empty: the last pane gone, the server goes, maybe while a kill talks to it.
    FakeTmux fake;
    fake.expect({"kill-session", "-t", "=web"}, fail("server exited unexpectedly\n"));
    fake.expect({"kill-session", "-t", "=api"}, fail("lost server\n"));
    fake.expect({"kill-session", "-t", "=api"}, fail("no server running on /x/tmux.sock\n"));
    fake.expect({"list-panes", "-a", "-F", "#{pane_id} #{pane_pid} #{session_name}"},
                fail("lost server\n"));
    fake.expect({"list-panes", "-a", "-F", "#{pane_id} #{pane_pid} #{session_name}"},
                ok("%3 100 web\n"));
    TmuxServer server(fake);
    CHECK_FALSE(server.kill_session("web"));
    CHECK_FALSE(server.kill_session("api"));
    auto panes = server.list_panes();  // the second answer counts
    REQUIRE(panes.size() == 1);
    CHECK(panes[0].id == "%3");
    CHECK(fake.done());
}

TEST_CASE("list-panes output is read field by field", "[tmux]") {
    FakeTmux fake;
    const std::string format = "#{pane_id} #{pane_pid} #{session_name}";
    fake.expect({"list-panes", "-a", "-F", format},
                ok("%0 100 web\n%1 101 web\nnot a pane\n%2 102 api\n"));
    fake.expect({"list-panes", "-a", "-F", format}, fail("no server running on /h/tmux.sock\n"));
    TmuxServer server(fake);
    auto panes = server.list_panes();
    REQUIRE(panes.size() == 3);
    CHECK(panes[0].id == "%0");
    CHECK(panes[0].pid == 100);
    CHECK(panes[0].session == "web");
    CHECK(panes[1].pid == 101);
    CHECK(panes[2].id == "%2");
    CHECK(panes[2].session == "api");
    CHECK(server.list_panes().empty());  // no server: no panes
}

TEST_CASE("text is pasted from a buffer in one tmux call, bracketed, Enter once it shows",
          "[tmux]") {
    // The buffer name is random: a plain recorder checks the shape of the calls. Its pane shows
    // the text from the second look on (a program that draws the paste a moment later).
    struct Recorder final : team::tmux::Tmux {
        std::vector<std::vector<std::string>> calls;
        std::vector<std::string> inputs;
        std::string pasted;
        int looks = 0;
        TmuxResult run(const std::vector<std::string>& args, std::string_view input) override {
            calls.push_back(args);
            inputs.emplace_back(input);
            if (args[0] == "load-buffer") pasted = input;
            if (args[0] == "capture-pane") {
                return {0, "earlier: reason;\n" + (++looks > 2 ? pasted : std::string()), ""};
            }
            return {};
        }
    };
    const std::vector<std::string> look{"capture-pane", "-p", "-J", "-t", "%2"};
    for (std::string text : {std::string("one\ntwo reason;\n"), std::string(4095, 'a') + "é;"}) {
        Recorder recorder;
        TmuxServer pasting(recorder);
        pasting.type_text("%2", text, true);
        REQUIRE(recorder.calls.size() == 5);  // look, paste, look (not yet), look (shown), Enter
        CHECK(recorder.calls[0] == look);
        const auto& paste = recorder.calls[1];
        REQUIRE(paste.size() == 12);
        CHECK(paste[0] == "load-buffer");
        CHECK(paste[3] == "-");
        CHECK(recorder.inputs[1] == text);  // the bytes as given: no key names, no escaping
        auto buffer = paste[2];
        CHECK(std::vector<std::string>(paste.begin() + 4, paste.end()) ==
              std::vector<std::string>{";", "paste-buffer", "-p", "-d", "-b", buffer, "-t", "%2"});
        CHECK(recorder.calls[2] == look);
        CHECK(recorder.calls[3] == look);
        CHECK(recorder.calls[4] == std::vector<std::string>{"send-keys", "-t", "%2", "Enter"});
    }
    // Without Enter nothing is looked at; an empty text is just the Enter.
    Recorder quiet;
    TmuxServer(quiet).type_text("%2", "no enter", false);
    CHECK(quiet.calls.size() == 1);
    Recorder enter;
    TmuxServer(enter).type_text("%2", "", true);
    REQUIRE(enter.calls.size() == 1);
    CHECK(enter.calls[0][0] == "send-keys");
}

TEST_CASE("a long home gets a named socket instead of a path", "[tmux]") {
    CHECK(TmuxServer::socket_args("/tmp/h") == std::vector<std::string>{"-S", "/tmp/h/tmux.sock"});
    auto args = TmuxServer::socket_args("/tmp/" + std::string(120, 'x'));
    REQUIRE(args.size() == 2);
    CHECK(args[0] == "-L");
    CHECK(args[1].rfind("team-", 0) == 0);
    CHECK(args == TmuxServer::socket_args("/tmp/" + std::string(120, 'x')));  // stable
}

TEST_CASE("capture-pane: the screen or the history, colours kept, blanks at the ends left out",
          "[tmux]") {
    FakeTmux fake;
    fake.expect({"capture-pane", "-p", "-e", "-J", "-t", "%3"},
                ok("\x1b[31mred\x1b[39m   \n  indented  \n\n\n\n"));
    fake.expect({"capture-pane", "-p", "-e", "-J", "-t", "%3", "-S", "-"}, ok("old\nnew\n"));
    fake.expect({"capture-pane", "-p", "-e", "-J", "-t", "%3"}, ok("\n\n\n"));
    fake.expect({"capture-pane", "-p", "-e", "-J", "-t", "%9"}, fail("can't find pane: %9\n"));
    fake.expect({"capture-pane", "-p", "-e", "-J", "-t", "%3"}, fail("no server running on /s\n"));
    fake.expect({"capture-pane", "-p", "-e", "-J", "-t", "%3"}, fail("something else\n"));
    CHECK(capture_pane(fake, "%3", false) == "\x1b[31mred\x1b[39m\n  indented\n");
    CHECK(capture_pane(fake, "%3", true) == "old\nnew\n");
    CHECK(capture_pane(fake, "%3", false) == "");
    CHECK_FALSE(capture_pane(fake, "%9", false));
    CHECK_FALSE(capture_pane(fake, "%3", false));
    CHECK_THROWS_WITH(capture_pane(fake, "%3", false), Catch::Contains("something else"));
    CHECK(fake.done());
}
