#include "base/json_skim.hpp"

#include <charconv>
#include <cstring>
#include <nlohmann/json.hpp>

namespace team {

namespace {

nlohmann::json parse(std::string_view text) {
    return nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
}

}  // namespace

bool JsonSkim::string(std::string& out) {
    std::string_view raw;
    std::size_t from = i_;
    if (!raw_string(raw)) return false;
    if (raw.find('\\') == std::string_view::npos) {
        out.assign(raw);
        return true;
    }
    nlohmann::json decoded = parse(s_.substr(from, i_ - from));
    if (!decoded.is_string()) return false;
    out = decoded.get<std::string>();
    return true;
}

bool JsonSkim::number(std::int64_t& out) {
    std::size_t from = i_;
    while (i_ < s_.size() && std::strchr("+-0123456789.eE", s_[i_]) != nullptr) ++i_;
    if (from == i_) return false;
    const char* first = s_.data() + from;
    const char* last = s_.data() + i_;
    if (auto [end, error] = std::from_chars(first, last, out); error == std::errc() && end == last)
        return true;
    nlohmann::json n = parse(s_.substr(from, i_ - from));  // a fraction or an exponent
    if (!n.is_number()) return false;
    out = static_cast<std::int64_t>(n.get<double>());
    return true;
}

void JsonSkim::ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\r' || s_[i_] == '\n'))
        ++i_;
}

bool JsonSkim::take(char c) {
    if (i_ >= s_.size() || s_[i_] != c) return false;
    ++i_;
    return true;
}

bool JsonSkim::raw_string(std::string_view& out) {
    if (!take('"')) return false;
    for (std::size_t at = i_;;) {
        const void* q = std::memchr(s_.data() + at, '"', s_.size() - at);
        if (q == nullptr) return false;
        std::size_t end = static_cast<std::size_t>(static_cast<const char*>(q) - s_.data());
        std::size_t slashes = 0;
        while (end - slashes > i_ && s_[end - slashes - 1] == '\\') ++slashes;
        if (slashes % 2 == 0) {
            out = s_.substr(i_, end - i_);
            i_ = end + 1;
            return true;
        }
        at = end + 1;
    }
}

bool JsonSkim::skip(int depth) {
    if (depth > 256 || i_ >= s_.size()) return false;
    std::string_view ignored;
    switch (s_[i_]) {
        case '"':
            return raw_string(ignored);
        case '{':
        case '[': {
            char close = s_[i_] == '{' ? '}' : ']';
            ++i_;
            ws();
            if (take(close)) return true;
            for (;;) {
                ws();
                if (close == '}') {
                    if (!raw_string(ignored)) return false;
                    ws();
                    if (!take(':')) return false;
                    ws();
                }
                if (!skip(depth + 1)) return false;
                ws();
                if (take(close)) return true;
                if (!take(',')) return false;
            }
        }
        default: {
            std::size_t from = i_;
            while (i_ < s_.size() && std::strchr(",}] \t\r\n", s_[i_]) == nullptr) ++i_;
            return i_ > from;
        }
    }
}

}  // namespace team
