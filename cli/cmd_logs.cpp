// team logs NAME [-n LINES] [--follow] [--screen | --raw]
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>

#include "base/terminal_text.hpp"
#include "cli/commands.hpp"
#include "cli/op_command.hpp"
#include "ops/table.hpp"

namespace team::cli {

namespace {

void write_raw(const std::string& text) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
}

// A rendering (tmux's: text and SGR colours only) as this terminal takes it: without the
// colours when colour is off, and ending in a newline.
std::string for_reader(const Context& ctx, const std::string& text) {
    std::string out = ctx.out().color() ? text : strip_escapes(text);
    if (!out.empty() && out.back() != '\n') out += '\n';
    // tmux resets attributes where the next cell needs it, so the last may still be set.
    if (ctx.out().color() && out.find('\x1b') != std::string::npos) out += "\x1b[0m";
    return out;
}

}  // namespace

void add_logs_command(CLI::App& app) {
    // Frames of --screen --follow printed so far (the separator counts them).
    auto frames = std::make_shared<int>(0);
    auto* cmd = add_operation(
        app, ops::agent_logs_op,
        [](Context& ctx, const ops::Result& r) {
            if (!r.doc.is_object()) return;
            if (r.doc.contains("screen")) {
                write_raw(for_reader(ctx, r.doc["screen"].get<std::string>()));
            } else if (r.doc["source"] == "log" || r.doc["source"] == "raw") {
                // The log as it is (plain when this output has no colour), or --raw.
                write_raw(r.doc["output"].get<std::string>());
            } else {
                write_raw(for_reader(ctx, r.doc["output"].get<std::string>()));
            }
        },
        [frames](Context& ctx, const nlohmann::json& event) {
            // --follow: each chunk or frame as it comes (--json: one JSON line each).
            if (ctx.out().json()) {
                ctx.out().print_json(event);
            } else if (!event.contains("screen")) {
                write_raw(event["output"].get<std::string>());
            } else if (::isatty(STDOUT_FILENO)) {
                // A terminal shows the screen in place: clear it, then draw the frame.
                write_raw("\x1b[H\x1b[2J" + for_reader(ctx, event["screen"].get<std::string>()));
            } else {
                // A file or a pipe gets every frame, one after the other, each with a header.
                write_raw("--- frame " + std::to_string(++*frames) + " (" +
                          event["source"].get<std::string>() + ") ---\n" +
                          for_reader(ctx, event["screen"].get<std::string>()));
            }
        },
        [](const Context& ctx, nlohmann::json& values) {
            // No colour asked (--no-color, NO_COLOR): no escapes in the text, --json included.
            // A person's view has none off a terminal either; JSON keeps the colours as data
            // unless asked. --raw asks for the bytes as they are.
            bool plain = ctx.out().json() ? ctx.options().no_color : !ctx.out().color();
            if (plain && !values.value("raw", false)) values["plain"] = true;
        });
    cmd->footer(
        "A full-screen agent's log (cursor movement, the alternate screen) is shown as tmux\n"
        "renders it: its pane's history while it lives, and the rendering kept when the pane\n"
        "closed once it has ended. --raw prints the log's bytes as the pane received them.\n"
        "--screen prints the screen as it is now; with --follow it is drawn again on every\n"
        "change (in place on a terminal; otherwise frame after frame, each under a\n"
        "'--- frame N ---' line). --json: {name, agentId, paneId, live, source, screen}.\n"
        "Example: team logs worker-1 -n 50; team logs worker-1 --screen --follow");
}

}  // namespace team::cli
