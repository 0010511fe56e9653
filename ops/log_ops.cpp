// The operation of an agent's log (SPEC 4 `team logs`, and issue 18's readable screens): the
// pane's raw bytes, or, for a full-screen agent, what tmux renders of them (team/agent_screen).
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "acp/transcript.hpp"
#include "base/error.hpp"
#include "base/terminal_text.hpp"
#include "ops/operation.hpp"
#include "ops/table.hpp"
#include "state/acp_rows.hpp"
#include "state/change_watch.hpp"
#include "state/members.hpp"
#include "team/agent_screen.hpp"
#include "team/agents.hpp"

namespace team::ops {

namespace {

// After the pane's output wakes a screen follower, the moment it gives the program to finish
// drawing (one redraw is many writes), so a frame is a finished screen, not half of one.
constexpr auto kSettle = std::chrono::milliseconds(50);

std::string read_from(const std::string& path, std::size_t offset) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return {};
    in.seekg(static_cast<std::streamoff>(offset));
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// The last `lines` lines of `text`.
std::string last_lines(const std::string& text, long long lines) {
    if (lines <= 0) return text;
    size_t pos = text.size();
    if (pos > 0 && text[pos - 1] == '\n') --pos;
    for (long long n = 0; pos > 0; --pos) {
        if (text[pos - 1] == '\n' && ++n == lines) break;
    }
    return text.substr(pos);
}

void check_log_flags(const Args& args) {
    for (const char* other : {"screen", "plain"}) {
        if (args.flag(other) && args.flag("raw")) {
            throw usage_error(args.label(other) + " and " + args.label("raw") +
                              " ask for different things: give one");
        }
    }
}

nlohmann::json screen_doc(const AgentRecord& agent, const std::string& screen,
                          const std::string& source, bool plain) {
    return {{"name", agent.name},
            {"agentId", agent.id_string()},
            {"paneId", agent.pane_id ? nlohmann::json(*agent.pane_id) : nullptr},
            {"live", source == "pane"},
            {"source", source},
            {"screen", plain ? strip_escapes(screen) : screen}};
}

// The screen now (while the pane lives), else the rendering kept when the pane went.
std::optional<std::pair<std::string, std::string>> current_screen(tmux::Tmux& tmux,
                                                                  const AgentRecord& agent,
                                                                  bool history) {
    if (auto live = live_screen(tmux, agent, history)) return std::pair(*live, "pane");
    if (!agent.log_file) return std::nullopt;
    std::ifstream in(screen_file(*agent.log_file), std::ios::binary);
    if (!in) return std::nullopt;
    std::stringstream s;
    s << in.rdbuf();
    return std::pair(s.str(), "kept");
}

// --screen --follow: a frame (progress {screen...}) whenever the rendering changes, woken by the
// pane's output reaching the log, until the agent ends; then its kept rendering if that differs.
Result follow_screen(Request& r, const AgentRecord& agent, long long lines) {
    AskedWait asked;  // a follow: a stopping server ends it (base/cancel.hpp)
    tmux::Tmux& tmux = r.core.tmux();
    std::filesystem::path file(agent.log_file.value_or(""));
    ChangeWatch file_watch(file.parent_path(), file.filename().string());
    auto store_changes = r.core.watch_changes();
    std::string last;
    bool first = true;
    bool plain = r.args.flag("plain");
    auto emit = [&](const AgentRecord& now, const std::string& screen, const std::string& source) {
        std::string text = last_lines(screen, lines);
        if (!first && text == last) return;
        first = false;
        last = text;
        if (r.progress) r.progress(screen_doc(now, text, source, plain));
    };
    for (;;) {
        auto now = load_agent(r.core.store(), agent.id);
        if (!now) return Result(nullptr);
        auto screen = now->live() ? live_screen(tmux, *now, false) : std::nullopt;
        if (!screen) {
            if (auto kept = current_screen(tmux, *now, false)) emit(*now, kept->first, "kept");
            return Result(nullptr);
        }
        emit(*now, *screen, "pane");
        if (file_watch.wait_until(r.core.clock().steady() + std::chrono::seconds(5),
                                  {store_changes->fd()})) {
            std::this_thread::sleep_for(kSettle);
        }
    }
}

// --follow of the raw log: each fresh chunk as a progress event {output} until the agent has
// ended; no document: the stream was the answer.
Result follow_raw(Request& r, const AgentRecord& agent, const std::string& all, long long lines) {
    std::string path = agent.log_file.value_or("");
    std::size_t offset = all.size();
    // --plain (not --raw): each chunk without its escapes. A chunk may end inside an escape;
    // strip_escapes drops an unfinished one, so a sequence cut in two may leave its tail.
    bool plain = r.args.flag("plain") && !r.args.flag("raw");
    auto emit = [&](const std::string& chunk) {
        if (chunk.empty() || !r.progress) return;
        r.progress({{"output", plain ? strip_escapes(chunk) : chunk}});
    };
    emit(last_lines(all, lines));
    AskedWait asked;  // a follow: a stopping server ends it (base/cancel.hpp)
    std::filesystem::path file(path);
    ChangeWatch file_watch(file.parent_path(), file.filename().string());
    auto store_changes = r.core.watch_changes();
    for (;;) {
        std::string fresh = read_from(path, offset);
        offset += fresh.size();
        emit(fresh);
        auto now = load_agent(r.core.store(), agent.id);
        if (!now || !now->live()) {
            emit(read_from(path, offset));
            return Result(nullptr);
        }
        file_watch.wait_until(r.core.clock().steady() + std::chrono::seconds(5),
                              {store_changes->fd()});
    }
}

// An ACP agent's transcript (SPEC 15), as the store keeps it: readable, and as records for
// --json; --follow: what is added, as progress {output, records}, until the agent has ended.
Result acp_transcript_logs(Request& r, const AgentRecord& agent, long long lines) {
    auto read = [&] { return acp_transcript(r.core.store(), agent.id); };
    if (!r.args.flag("follow")) {
        nlohmann::json records = read();
        return Result({{"agentId", agent.id_string()},
                       {"output", last_lines(acp::render_records(records), lines)},
                       {"records", records},
                       {"source", "transcript"}});
    }
    AskedWait asked;  // a follow: a stopping server ends it (base/cancel.hpp)
    auto store_changes = r.core.watch_changes();
    std::vector<std::string> seen;  // each record as last sent
    std::string drawn;              // the text sent so far
    bool first = true;
    for (;;) {
        auto now = load_agent(r.core.store(), agent.id);
        nlohmann::json records = read();
        nlohmann::json changed = nlohmann::json::array();
        for (std::size_t i = 0; i < records.size(); ++i) {
            std::string text = records[i].dump();
            if (i < seen.size() && seen[i] == text) continue;
            if (i >= seen.size()) seen.resize(i + 1);
            seen[i] = text;
            nlohmann::json record = records[i];
            record["seq"] = i;
            changed.push_back(record);
        }
        std::string text = acp::render_records(records);
        std::string fresh;
        if (first)
            fresh = last_lines(text, lines);
        else if (text.compare(0, drawn.size(), drawn) == 0)
            fresh = text.substr(drawn.size());
        else
            for (const auto& c : changed) fresh += acp::render_record(c);
        drawn = text;
        first = false;
        if (r.progress && (!fresh.empty() || !changed.empty()))
            r.progress({{"output", fresh}, {"records", changed}});
        if (!now || !now->live()) return Result(nullptr);
        store_changes->wait_until(std::chrono::steady_clock::now() + std::chrono::seconds(5));
    }
}

// What the agent's pane showed. Plain: the log as it is when it prints lines; when it draws a
// screen, tmux's rendering of it (the pane's history, or the one kept when the pane went).
// --raw: the log's bytes always. --screen: the screen as tmux renders it now.
Result agent_logs(Request& r) {
    Agents agents(r.core.store(), r.core.clock(), r.core.tmux());
    AgentRecord agent = agents.find(*r.team, r.args.string("name"), true);
    long long lines = r.args.integer("lines").value_or(0);
    bool follow = r.args.flag("follow");
    if (!r.args.flag("screen") && !r.args.flag("raw") && load_acp_session(r.core.store(), agent.id))
        return acp_transcript_logs(r, agent, lines);
    tmux::Tmux& tmux = r.core.tmux();
    if (r.args.flag("screen")) {
        if (follow) return follow_screen(r, agent, lines);
        auto screen = current_screen(tmux, agent, false);
        if (!screen) {
            throw refused("agent " + quote(agent.name) +
                          " has no pane and no screen of it was kept; see team logs " + agent.name);
        }
        return Result(screen_doc(agent, last_lines(screen->first, lines), screen->second,
                                 r.args.flag("plain")));
    }
    std::string path = agent.log_file.value_or("");
    std::string all = read_from(path, 0);
    bool raw = r.args.flag("raw");
    if (follow) {
        // A full-screen agent followed as lines would be its raw redraws: follow its screen.
        if (!raw && agent.live() && draws_screen(all)) {
            return follow_screen(r, agent, lines);
        }
        return follow_raw(r, agent, all, lines);
    }
    ReadableLog log = raw ? ReadableLog{all, "raw"} : readable_log(tmux, agent, all);
    std::string output = last_lines(log.text, lines);
    if (r.args.flag("plain") && !raw) output = strip_escapes(output);
    return Result({{"agentId", agent.id_string()},
                   {"logFile", path},
                   {"output", output},
                   {"source", log.source}});
}

}  // namespace

const Operation agent_logs_op{
    .name = "agent_logs",
    .command = "logs",
    .tool = "agent_logs",
    .routes = {{"GET", "/api/teams/{team}/agents/{name}/logs"}},
    .summary =
        "what the agent's pane showed, readable; kept after the pane is gone (an ACP "
        "agent: its transcript; --json: its records)",
    .params =
        {
            {.name = "name",
             .help = "the agent (the newest one of that name, live or not)",
             .placeholder = "NAME",
             .required = true,
             .positional = true,
             .kind = Kind::agent},
            {.name = "lines",
             .type = Type::integer,
             .help = "only the last LINES lines",
             .placeholder = "LINES",
             .min = 1,
             .alias = "-n"},
            {.name = "follow",
             .type = Type::boolean,
             .help = "keep printing what the pane shows, until the agent ends"},
            {.name = "screen",
             .type = Type::boolean,
             .help = "the agent's screen as tmux renders it (colours kept); with --follow, "
                     "again on every change"},
            {.name = "raw",
             .type = Type::boolean,
             .help = "the pane's raw bytes, terminal escapes included, even of a full-screen "
                     "agent"},
            {.name = "plain",
             .type = Type::boolean,
             .help = "text without terminal escapes: no colours (the command line asks for it "
                     "when its output has none: --no-color, NO_COLOR, not a terminal)"},
        },
    .access = Access::read,
    .waits = true,
    .reconcile = true,
    .agent_param = "name",
    .validate = check_log_flags,
    .body = agent_logs,
};

}  // namespace team::ops
