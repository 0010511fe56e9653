#include "base/text.hpp"

#include <string>

#include "base/error.hpp"

namespace team {

std::string_view utf8_tail(std::string_view text, std::size_t max) {
    if (text.size() <= max) return text;
    std::size_t start = text.size() - max;
    // Skip at most three continuation bytes (10xxxxxx): a character is at most four bytes.
    for (int i = 0;
         i < 3 && start < text.size() && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80;
         ++i) {
        ++start;
    }
    return text.substr(start);
}

bool is_valid_utf8(std::string_view text) {
    const auto* p = reinterpret_cast<const unsigned char*>(text.data());
    const auto* end = p + text.size();
    while (p < end) {
        unsigned char c = *p;
        if (c < 0x80) {
            ++p;
            continue;
        }
        int extra;
        char32_t cp, min;
        if ((c & 0xE0) == 0xC0) {
            extra = 1, cp = c & 0x1F, min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            extra = 2, cp = c & 0x0F, min = 0x800;
        } else if ((c & 0xF8) == 0xF0) {
            extra = 3, cp = c & 0x07, min = 0x10000;
        } else {
            return false;
        }
        if (end - p <= extra) return false;
        for (int i = 1; i <= extra; ++i) {
            if ((p[i] & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (p[i] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
        p += extra + 1;
    }
    return true;
}

void check_text(std::string_view text, std::size_t max, std::string_view what) {
    if (text.size() > max) {
        throw usage_error(std::string(what) + " is " + std::to_string(text.size()) +
                          " bytes long; at most " + std::to_string(max) + " are allowed");
    }
    if (!is_valid_utf8(text)) throw usage_error(std::string(what) + " is not valid UTF-8");
    if (text.find('\0') != std::string_view::npos) {
        throw usage_error(std::string(what) + " holds a NUL byte");
    }
}

std::string shell_quote(std::string_view text) {
    std::string out = "'";
    for (char c : text) {
        if (c == '\'') {
            out += "'\\''";
        } else {
            out += c;
        }
    }
    return out + "'";
}

void keep_tail(std::string& kept, std::string_view chunk, std::size_t limit, bool& truncated) {
    kept.append(chunk);
    if (kept.size() > 2 * limit + 4) {
        kept.erase(0, kept.size() - limit - 4);
        truncated = true;
    }
}

void cut_tail(std::string& kept, std::size_t limit, bool& truncated) {
    if (kept.size() <= limit) return;
    kept = std::string(utf8_tail(kept, limit));
    truncated = true;
}

}  // namespace team
