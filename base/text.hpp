// Byte strings that hold UTF-8: cutting them without breaking a character, and checking them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace team {

// The last at most `max` bytes of `text`, starting on a UTF-8 character boundary (so possibly
// a few bytes fewer). Bytes that are not UTF-8 at all are cut where they fall.
std::string_view utf8_tail(std::string_view text, std::size_t max);

// True when `text` is well-formed UTF-8 (no overlong forms, no surrogates, nothing past
// U+10FFFF), so it can be stored and shown as JSON text.
bool is_valid_utf8(std::string_view text);

// The end of a command's output read in chunks, kept without holding more than about twice
// `limit` bytes: keep_tail appends a chunk and drops what is far enough from the end; cut_tail
// makes the exact cut once the output is complete (on a UTF-8 boundary). Either sets
// `truncated` when it dropped something. (`run`'s and `session exec`'s results.)
void keep_tail(std::string& kept, std::string_view chunk, std::size_t limit, bool& truncated);
void cut_tail(std::string& kept, std::size_t limit, bool& truncated);

// Throws a usage error unless `text` is valid UTF-8 of at most `max` bytes without a NUL byte
// (which a program reading it as a C string would cut at); `what` names it in
// the message ("the text", "--description").
void check_text(std::string_view text, std::size_t max, std::string_view what);

// `text` as one single-quoted word of sh or bash, whatever it holds: 'it'\''s'.
std::string shell_quote(std::string_view text);

}  // namespace team
