// Agents' screens (issue 18) on real tmux: a full-screen agent (a small program that switches to
// the alternate screen, moves the cursor and draws in colour, or redraws lines in place as Ink
// does) is read as tmux renders it. `logs --screen` is the screen with its colours, plain `logs`
// is readable text with no cursor movement, live or after the agent ended, and `--raw` keeps the
// bytes. Each test has its own home, tmux server and team.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/helpers.hpp"
#include "tests/support/process.hpp"
#include "tests/support/team_home.hpp"

using team::test::bound;
using team::test::eventually;
using team::test::RunResult;
using team::test::slurp;
using team::test::sq;
using team::test::TeamHome;
using Json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

// A script in the test's directory, run by sh (printf's escapes are the drawing).
fs::path write_script(const TeamHome& h, const std::string& name, const std::string& body) {
    fs::path path = h.env.dir() / name;
    std::ofstream(path) << body;
    return path;
}

void spawn(const TeamHome& h, const std::string& name, const fs::path& script) {
    auto r = h.run({"spawn", name, "--json", "--env", h.mark.entry(), "--", "sh", script.string()});
    INFO("stdout: " << r.out << " stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
}

bool terminated(const TeamHome& h, const std::string& name) {
    return eventually([&] {
        auto r = h.run({"agents", "--all", "--json"});
        if (r.exit_code != 0) return false;
        for (const auto& a : r.json()) {
            if (a["name"] == name) return a["status"] == "terminated";
        }
        return false;
    });
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// No escape sequence and no control character but newline and tab: what a person can read.
bool plain_text(const std::string& text) {
    for (unsigned char c : text) {
        if (c < 0x20 && c != '\n' && c != '\t') return false;
    }
    return true;
}

// Draws in the alternate screen: a green title at row 5, a red word at row 7, then waits for
// `go` and ends without leaving the alternate screen (as a killed full-screen program does).
std::string alternate_screen_program(const fs::path& go) {
    return "printf 'before-the-screen\\n'\n"
           "printf '\\033[?1049h\\033[H\\033[2J'\n"
           "printf '\\033[5;10H\\033[1;32mGREEN-TITLE\\033[0m'\n"
           "printf '\\033[7;3Hstatus: \\033[31mworking\\033[0m'\n"
           "printf '\\033[9;1Hdrawn-all'\n"
           "while [ ! -e " +
           sq(go) + " ]; do sleep 0.05; done\n";
}

}  // namespace

TEST_CASE("logs of a full-screen agent: the screen with colours, readable text, raw bytes",
          "[agents][screens]") {
    TeamHome h("sc-alt");
    fs::path go = h.env.dir() / "go";
    spawn(h, "drawer", write_script(h, "drawer.sh", alternate_screen_program(go)));

    // --screen --json: the screen as tmux renders it, the colours as SGR escapes.
    Json doc;
    REQUIRE(eventually([&] {
        auto r = h.run({"logs", "drawer", "--screen", "--json"});
        if (r.exit_code != 0) return false;
        doc = r.json();
        return contains(doc["screen"].get<std::string>(), "drawn-all");
    }));
    std::string screen = doc["screen"];
    INFO("screen: " << Json(screen).dump());
    CHECK(doc["name"] == "drawer");
    CHECK(doc["agentId"] == "drawer@sc-alt");
    CHECK(doc["live"] == true);
    CHECK(doc["paneId"].is_string());
    CHECK(contains(screen, "GREEN-TITLE"));
    CHECK(contains(screen, "32m"));  // green, before the title
    CHECK(screen.find("32m") < screen.find("GREEN-TITLE"));
    CHECK(contains(screen, "31m"));
    CHECK_FALSE(contains(screen, "before-the-screen"));  // the alternate screen is what shows
    CHECK_FALSE(contains(screen, "\x1b[5;10H"));         // no cursor movement
    // The rows as drawn: the title on the fifth line, indented to column 10.
    auto human = h.run({"logs", "drawer", "--screen"});
    REQUIRE(human.exit_code == 0);
    std::string bare = human.out;
    CHECK(plain_text(bare));  // not a terminal: no colour
    std::vector<std::string> rows;
    {
        std::istringstream in(bare);
        for (std::string line; std::getline(in, line);) rows.push_back(line);
    }
    REQUIRE(rows.size() >= 9);
    CHECK(rows[4] == "         GREEN-TITLE");
    CHECK(rows[6] == "  status: working");

    // Plain logs: readable, no escape at all when not on a terminal.
    auto plain = h.run({"logs", "drawer"});
    REQUIRE(plain.exit_code == 0);
    CHECK(contains(plain.out, "GREEN-TITLE"));
    CHECK(plain_text(plain.out));
    auto plain_json = h.run({"logs", "drawer", "--json"}).json();
    CHECK(plain_json["source"] == "pane");
    // --raw: the bytes as the pane got them.
    auto raw = h.run({"logs", "drawer", "--raw"});
    REQUIRE(raw.exit_code == 0);
    CHECK(contains(raw.out, "\x1b[5;10H"));
    CHECK(contains(raw.out, "before-the-screen"));
    CHECK(h.run({"logs", "drawer", "--raw", "--screen"}).exit_code == 2);

    // Ended: the rendering kept when the pane closed.
    std::ofstream(go) << "";
    REQUIRE(terminated(h, "drawer"));
    auto ended = h.run({"logs", "drawer", "--json"});
    REQUIRE(ended.exit_code == 0);
    auto ended_doc = ended.json();
    CHECK(ended_doc["source"] == "kept");
    auto after = h.run({"logs", "drawer"});
    CHECK(contains(after.out, "GREEN-TITLE"));
    CHECK(plain_text(after.out));
    auto kept_screen = h.run({"logs", "drawer", "--screen", "--json"});
    REQUIRE(kept_screen.exit_code == 0);
    CHECK(kept_screen.json()["live"] == false);
    CHECK(kept_screen.json()["source"] == "kept");
    h.finish();
}

TEST_CASE("logs of an agent that redraws lines in place, as Ink does, after it ended",
          "[agents][screens][sanitize]") {
    TeamHome h("sc-ink");
    fs::path go = h.env.dir() / "go";
    spawn(h, "inky",
          write_script(
              h, "inky.sh",
              "printf 'header line\\nthinking one\\nthinking two\\n'\n"
              // up two lines, erase each and draw the answer over them
              "printf '\\033[2A\\033[2K\\033[33mANSWER-ONE\\033[0m\\n\\033[2Kanswer-two\\n'\n"
              "while [ ! -e " +
                  sq(go) + " ]; do sleep 0.05; done\n"));
    REQUIRE(eventually([&] { return contains(h.run({"logs", "inky"}).out, "answer-two"); }));
    auto live = h.run({"logs", "inky"});
    CHECK(plain_text(live.out));
    CHECK_FALSE(contains(live.out, "thinking"));  // drawn over, as the pane shows it
    CHECK(contains(live.out, "header line\nANSWER-ONE\nanswer-two"));

    std::ofstream(go) << "";
    REQUIRE(terminated(h, "inky"));
    auto ended = h.run({"logs", "inky", "--json"});
    REQUIRE(ended.exit_code == 0);
    auto doc = ended.json();
    CHECK(doc["source"] == "kept");
    std::string output = doc["output"];
    CHECK(contains(output, "ANSWER-ONE"));
    CHECK(contains(output, "33m"));  // the colours are kept for a terminal
    CHECK_FALSE(contains(output, "thinking"));
    auto human = h.run({"logs", "inky", "-n", "2"});
    CHECK(human.out == "ANSWER-ONE\nanswer-two\n");
    // Kept beside the log, private as the log is.
    fs::path kept = fs::path(doc["logFile"].get<std::string>()).replace_extension(".screen");
    CHECK(fs::exists(kept));
    CHECK((fs::status(kept).permissions() & fs::perms::all) ==
          (fs::perms::owner_read | fs::perms::owner_write));
    h.finish();
}

TEST_CASE("logs --screen --follow prints a frame on every change until the agent ends",
          "[agents][screens]") {
    TeamHome h("sc-follow");
    fs::path go = h.env.dir() / "go";
    fs::path done = h.env.dir() / "done";
    spawn(h, "frames",
          write_script(h, "frames.sh",
                       "printf '\\033[?1049h\\033[H\\033[2JFRAME-ONE'\n"
                       "while [ ! -e " +
                           sq(go) +
                           " ]; do sleep 0.05; done\n"
                           "printf '\\033[H\\033[2JFRAME-TWO'\n"
                           "while [ ! -e " +
                           sq(done) + " ]; do sleep 0.05; done\n"));
    REQUIRE(eventually([&] {
        return contains(h.run({"logs", "frames", "--screen"}).out, "FRAME-ONE");
    }));
    // The follower writes to a file (not a terminal: frame after frame), read as it grows.
    fs::path out = h.env.dir() / "follow.out";
    auto env = team::test::clean_env(h.extra({{"TEAM_HOME", h.env.home().string()}}));
    auto follower = team::test::Child({"/bin/sh", "-c",
                                       "exec /usr/bin/timeout 20 " + sq(team::test::team_binary()) +
                                           " logs frames --screen --follow > " + sq(out)},
                                      env);
    REQUIRE(eventually([&] { return contains(slurp(out), "FRAME-ONE"); }));
    std::ofstream(go) << "";
    REQUIRE(eventually([&] { return contains(slurp(out), "FRAME-TWO"); }));
    std::ofstream(done) << "";
    auto r = follower.wait();
    CHECK(r.exit_code == 0);
    std::string frames = slurp(out);
    INFO(frames);
    CHECK(contains(frames, "--- frame 1 (pane) ---\nFRAME-ONE\n"));
    CHECK(frames.find("FRAME-ONE") < frames.find("FRAME-TWO"));
    CHECK(plain_text(frames));
    h.finish();
}

// Issue 24: --no-color means no escape in what is printed, whatever the source: a program that
// prints in colour and ends at once (its log is printed as it is), and a screen as JSON.
TEST_CASE("logs --no-color: no colour codes in a short-lived program's log or in --screen --json",
          "[agents][screens]") {
    TeamHome h("sc-nocolor");
    spawn(h, "tint",
          write_script(h, "tint.sh", "printf '\\033[0m\\033[31mRED-WORD\\033[0m plain\\n'\n"));
    REQUIRE(terminated(h, "tint"));
    auto human = h.run({"logs", "tint", "--no-color"});
    REQUIRE(human.exit_code == 0);
    CHECK(human.out == "RED-WORD plain\n");
    auto json = h.run({"logs", "tint", "--json", "--no-color"}).json();
    CHECK(json["source"] == "log");
    CHECK(json["output"] == "RED-WORD plain\n");
    // JSON keeps the colours as data unless asked; NO_COLOR asks as --no-color does.
    CHECK(contains(h.run({"logs", "tint", "--json"}).json()["output"].get<std::string>(), "\x1b[31m"));
    auto env = h.run({"logs", "tint", "--json"}, {{"NO_COLOR", "1"}}).json();
    CHECK(env["output"] == "RED-WORD plain\n");
    // --raw is the bytes, and refuses --plain.
    auto raw = h.run({"logs", "tint", "--raw", "--json", "--no-color"}).json();
    CHECK(raw["source"] == "raw");
    CHECK(contains(raw["output"].get<std::string>(), "\x1b[31m"));
    CHECK(h.run({"logs", "tint", "--raw", "--plain"}).exit_code == 2);

    // A full-screen program's screen, kept after its end, as JSON without colour.
    // (It ends once its drawing is in its log, which the pane writes on its own time: a
    // screen is kept only for a log that draws one.)
    fs::path go = h.env.dir() / "go";
    spawn(h, "painter",
          write_script(h, "painter.sh",
                       "printf '\033[2J\033[H\033[32mGREEN-WORD\033[0m painted\n'\n"
                       "while [ ! -e " + sq(go) + " ]; do sleep 0.05; done\n"));
    REQUIRE(eventually(
        [&] { return contains(h.run({"logs", "painter", "--raw"}).out, "GREEN-WORD"); }));
    std::ofstream(go) << "";
    REQUIRE(terminated(h, "painter"));
    auto screen = h.run({"logs", "painter", "--screen", "--json", "--no-color"});
    INFO(screen.out << screen.err);
    REQUIRE(screen.exit_code == 0);
    CHECK(screen.json()["source"] == "kept");
    std::string text = screen.json()["screen"];
    CHECK(contains(text, "GREEN-WORD painted"));
    CHECK(plain_text(text));
    auto coloured = h.run({"logs", "painter", "--screen", "--json"}).json();
    CHECK(contains(coloured["screen"].get<std::string>(), "32m"));
    h.finish();
}
