#include "tmux/capture.hpp"

#include <vector>

#include "base/error.hpp"
#include "tmux/server.hpp"

namespace team::tmux {

namespace {

// A capture without what -J keeps at the ends of lines (trailing blanks) and without the empty
// rows below the last one drawn.
std::string trim_capture(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        std::size_t last = end;
        while (last > start && text[last - 1] == ' ') --last;
        out.append(text, start, last - start);
        out += '\n';
        start = end + 1;
    }
    while (out.size() >= 2 && out[out.size() - 1] == '\n' && out[out.size() - 2] == '\n') {
        out.pop_back();
    }
    if (out == "\n") out.clear();
    return out;
}

}  // namespace

std::optional<std::string> capture_pane(Tmux& tmux, const std::string& pane_id, bool history) {
    std::vector<std::string> args{"capture-pane", "-p", "-e", "-J", "-t", pane_id};
    if (history) args.insert(args.end(), {"-S", "-"});
    TmuxResult r = tmux.run(args);
    if (r.ok()) return trim_capture(r.out);
    if (is_no_server(r)) return std::nullopt;
    std::string err = r.err;
    while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.pop_back();
    throw failed("tmux capture-pane failed: " +
                 (err.empty() ? "exit " + std::to_string(r.exit_code) : err));
}

}  // namespace team::tmux
