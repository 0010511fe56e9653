#include "base/terminal_text.hpp"

namespace team {

namespace {

constexpr char kEsc = '\x1b';

// Where the sequence that starts at raw[i] (an ESC) ends, one past its last byte; and, for a
// CSI, its parameters and final byte.
struct Sequence {
    std::size_t end = 0;
    bool csi = false;
    std::string_view params;  // CSI only: between '[' and the final byte
    char final = 0;           // CSI: the final byte; two-byte escapes: the second byte
};

Sequence read_sequence(std::string_view raw, std::size_t i) {
    Sequence s;
    std::size_t n = raw.size();
    if (i + 1 >= n) {
        s.end = n;
        return s;
    }
    char kind = raw[i + 1];
    if (kind == '[') {
        std::size_t j = i + 2;
        while (j < n && !(raw[j] >= 0x40 && raw[j] <= 0x7e)) ++j;
        s.csi = true;
        s.params = raw.substr(i + 2, j - (i + 2));
        s.final = j < n ? raw[j] : 0;
        s.end = j < n ? j + 1 : n;
        return s;
    }
    if (kind == ']' || kind == 'P' || kind == '_' || kind == '^' || kind == 'X') {
        // A string: ends with BEL (OSC) or ST (ESC \).
        std::size_t j = i + 2;
        while (j < n && raw[j] != '\a' && !(raw[j] == kEsc && j + 1 < n && raw[j + 1] == '\\')) {
            ++j;
        }
        s.end = j >= n ? n : raw[j] == '\a' ? j + 1 : j + 2;
        return s;
    }
    // ESC ( B and the like: intermediates 0x20-0x2f, then one final byte.
    std::size_t j = i + 1;
    while (j < n && raw[j] >= 0x20 && raw[j] <= 0x2f) ++j;
    s.final = j < n ? raw[j] : 0;
    s.end = j < n ? j + 1 : n;
    return s;
}

bool is_drawing(const Sequence& s) {
    if (!s.csi) return s.final == '7' || s.final == '8';  // cursor save/restore
    switch (s.final) {
        case 'A':  // cursor up
        case 'B':  // cursor down
        case 'E':  // next line
        case 'F':  // previous line
        case 'H':  // position
        case 'f':
        case 'd':  // line position
        case 'J':  // erase display
        case 'r':  // scroll region
        case 'S':  // scroll up
        case 'T':  // scroll down
            return true;
        case 'h':
        case 'l':
            // The alternate screen: ?47, ?1047, ?1049.
            return s.params == "?1049" || s.params == "?1047" || s.params == "?47";
        default:
            return false;
    }
}

}  // namespace

bool draws_screen(std::string_view raw) {
    for (std::size_t i = raw.find(kEsc); i != std::string_view::npos; i = raw.find(kEsc, i)) {
        Sequence s = read_sequence(raw, i);
        if (is_drawing(s)) return true;
        i = s.end;
    }
    return false;
}

std::string strip_escapes(std::string_view raw) {
    std::string out;
    out.reserve(raw.size());
    std::size_t line_start = 0;  // where the current line begins in `out`
    for (std::size_t i = 0; i < raw.size();) {
        char c = raw[i];
        if (c == kEsc) {
            i = read_sequence(raw, i).end;
            continue;
        }
        if (c == '\n') {
            out += '\n';
            line_start = out.size();
        } else if (c == '\r') {
            if (i + 1 < raw.size() && raw[i + 1] != '\n' && raw[i + 1] != '\r') {
                out.resize(line_start);
            }
        } else if (c == '\b') {
            // Back over one UTF-8 character of the current line.
            while (out.size() > line_start &&
                   (static_cast<unsigned char>(out.back()) & 0xc0) == 0x80) {
                out.pop_back();
            }
            if (out.size() > line_start) out.pop_back();
        } else if (c == '\t' || static_cast<unsigned char>(c) >= 0x20) {
            if (c != '\x7f') out += c;
        }
        ++i;
    }
    return out;
}

}  // namespace team
