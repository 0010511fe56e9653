// team logs NAME [-n LINES] [--follow]
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "base/error.hpp"
#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "cli/input.hpp"
#include "state/change_watch.hpp"
#include "team/agents.hpp"

namespace team::cli {

namespace {

std::string read_from(const std::string& path, std::size_t offset) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return {};
    in.seekg(static_cast<std::streamoff>(offset));
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// The last `lines` lines of `text`.
std::string last_lines(const std::string& text, long lines) {
    if (lines <= 0) return text;
    size_t pos = text.size();
    if (pos > 0 && text[pos - 1] == '\n') --pos;
    for (long n = 0; pos > 0; --pos) {
        if (text[pos - 1] == '\n' && ++n == lines) break;
    }
    return text.substr(pos);
}

}  // namespace

void add_logs_command(CLI::App& app) {
    struct Options {
        std::string name;
        long lines = 0;
        bool follow = false;
    };
    auto o = std::make_shared<Options>();
    auto* cmd = add_command(
        app, "logs", "what the agent's pane showed; kept after the pane is gone",
        [o](Context& ctx) {
            TeamRecord team = ctx.team();
            Agents agents(ctx.store(), ctx.clock(), ctx.tmux());
            agents.reconcile(team);
            AgentRecord agent = agents.find(team, o->name, true);
            std::string path = agent.log_file.value_or("");
            std::string all = read_from(path, 0);
            std::string text = last_lines(all, o->lines);
            std::size_t offset = all.size();
            if (!o->follow) {
                if (ctx.out().json()) {
                    ctx.out().print_json(
                        {{"agentId", agent.id_string()}, {"logFile", path}, {"output", text}});
                } else {
                    std::fwrite(text.data(), 1, text.size(), stdout);
                }
                return 0;
            }
            auto emit = [&](const std::string& chunk) {
                if (chunk.empty()) return;
                if (ctx.out().json()) {
                    ctx.out().print_json({{"output", chunk}});
                } else {
                    std::fwrite(chunk.data(), 1, chunk.size(), stdout);
                    std::fflush(stdout);
                }
            };
            emit(text);
            std::filesystem::path file(path);
            ChangeWatch file_watch(file.parent_path(), file.filename().string());
            ChangeWatch store_watch(ctx.store().home());
            for (;;) {
                std::string fresh = read_from(path, offset);
                offset += fresh.size();
                emit(fresh);
                auto now = load_agent(ctx.store(), agent.id);
                if (!now || !now->live()) {
                    emit(read_from(path, offset));
                    return 0;
                }
                file_watch.wait_until(std::chrono::steady_clock::now() + std::chrono::seconds(5),
                                      {store_watch.fd()});
            }
        });
    cmd->add_option("NAME", o->name, "the agent (the newest one of that name, live or not)")
        ->required();
    cmd->add_option("-n,--lines", o->lines, "only the last LINES lines")
        ->type_name("LINES")
        ->check(whole_number(1));
    cmd->add_flag("--follow", o->follow, "keep printing what the pane shows, until the agent ends");
    cmd->footer(
        "The log is the raw pane output, terminal escapes included, as the pane showed it.\n"
        "Example: team logs worker-1 -n 50");
}

}  // namespace team::cli
