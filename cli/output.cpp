#include "cli/output.hpp"

#include <cstdio>

namespace team::cli {

namespace {

bool is_continuation(unsigned char c) {
    return (c & 0xC0) == 0x80;
}

// Visible width: bytes that start a UTF-8 character, outside ESC [ ... m sequences.
size_t visible_width(const std::string& s) {
    size_t width = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\x1b') {
            while (i < s.size() && s[i] != 'm') ++i;
            continue;
        }
        if (!is_continuation(static_cast<unsigned char>(s[i]))) ++width;
    }
    return width;
}

}  // namespace

void Output::print_json(const nlohmann::json& doc) const {
    // Invalid UTF-8 (from a pane or a process) is replaced, never allowed to throw.
    std::string text = doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    text += '\n';
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
}

void Output::line(const std::string& text) const {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
}

std::string Output::paint(const char* code, const std::string& s) const {
    if (!color_) return s;
    return std::string("\x1b[") + code + "m" + s + "\x1b[0m";
}

std::string cell(const std::string& text, size_t max) {
    std::string out;
    size_t shown = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        unsigned char c = static_cast<unsigned char>(text[i]);
        if (!is_continuation(c)) {
            if (shown == max) {
                out += "…";
                break;
            }
            ++shown;
        }
        if (c == '\n') {
            out += "\\n";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c < 0x20 || c == 0x7f) {
            out += '?';
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

void Table::print(const Output& out) const {
    std::vector<size_t> widths(headers_.size());
    for (size_t i = 0; i < headers_.size(); ++i) widths[i] = visible_width(headers_[i]);
    for (const auto& row : rows_) {
        for (size_t i = 0; i < row.size() && i < widths.size(); ++i) {
            widths[i] = std::max(widths[i], visible_width(row[i]));
        }
    }
    auto render = [&](const std::vector<std::string>& row, bool header) {
        size_t last = row.size();
        while (last > 1 && row[last - 1].empty()) --last;  // no trailing blanks
        std::string line;
        for (size_t i = 0; i < last && i < widths.size(); ++i) {
            std::string value = header ? out.bold(row[i]) : row[i];
            line += value;
            if (i + 1 < last) line += std::string(widths[i] - visible_width(row[i]) + 2, ' ');
        }
        out.line(line);
    };
    render(headers_, true);
    for (const auto& row : rows_) render(row, false);
}

}  // namespace team::cli
