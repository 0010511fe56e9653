// A JSON text skimmed for a few fields: values of no interest are stepped over (a string with
// memchr) rather than parsed. For records whose lines are mostly content nobody reads (an
// agent's transcript: team/usage_records), where parsing every line whole is three times slower.
// Every step checks its bounds; a text that is not JSON makes it fail, never read past its end.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace team {

class JsonSkim {
  public:
    explicit JsonSkim(std::string_view text) : s_(text) {}

    // Walks the object at the position; `on_key(key)` is called at each key with the position
    // at its value, and either reads that value (string(), number(), object(): returns what it
    // returned) or returns false to have it stepped over. False when the text is not JSON.
    template <class OnKey>
    bool object(OnKey&& on_key) {
        ws();
        if (!take('{')) return false;
        ws();
        if (take('}')) return true;
        for (;;) {
            std::string_view key;
            ws();
            if (!raw_string(key)) return false;
            ws();
            if (!take(':')) return false;
            ws();
            if (!on_key(key) && !skip(0)) return false;
            ws();
            if (take('}')) return true;
            if (!take(',')) return false;
        }
    }

    // The string at the position, unescaped.
    bool string(std::string& out);
    // The number at the position (a fraction cut off).
    bool number(std::int64_t& out);

  private:
    std::string_view s_;
    std::size_t i_ = 0;

    void ws();
    bool take(char c);
    // A string's text between its quotes, escapes left as they are.
    bool raw_string(std::string_view& out);
    // Steps over the value at the position (`depth`: how deep in values being stepped over).
    bool skip(int depth);
};

}  // namespace team
