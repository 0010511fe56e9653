#include "base/text.hpp"

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

}  // namespace team
