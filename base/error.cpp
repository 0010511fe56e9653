#include "base/error.hpp"

#include "base/states.hpp"

namespace team {

std::string quote(std::string_view value) {
    constexpr size_t kMax = 80;
    std::string out = "'";
    size_t shown = 0;
    for (unsigned char c : value) {
        if (shown == kMax) {
            out += "...";
            break;
        }
        if (c == '\n') {
            out += "\\n";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c < 0x20 || c == 0x7f) {
            static const char* hex = "0123456789abcdef";
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        } else {
            out += static_cast<char>(c);
        }
        ++shown;
    }
    out += "'";
    return out;
}

void unknown_stored_state(std::string_view what, std::string_view text) {
    throw failed("the store holds an unknown " + std::string(what) + " " + quote(text) +
                 ": it was written by a newer team, or is damaged");
}

}  // namespace team
