// Cutting byte strings that may hold UTF-8 without breaking a character.
#pragma once

#include <cstddef>
#include <string_view>

namespace team {

// The last at most `max` bytes of `text`, starting on a UTF-8 character boundary (so possibly
// a few bytes fewer). Bytes that are not UTF-8 at all are cut where they fall.
std::string_view utf8_tail(std::string_view text, std::size_t max);

}  // namespace team
