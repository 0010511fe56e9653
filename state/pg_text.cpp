#include "state/pg_text.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace team {

namespace {

// The first line of a libpq or server message, without the severities libpq puts in it
// ("...failed: FATAL:  database \"x\" does not exist") and trailing space.
std::string first_line(std::string_view message) {
    std::size_t start = message.find_first_not_of(" \t\r\n");
    if (start == std::string_view::npos) return "";
    std::string text(message.substr(start, message.find('\n', start) - start));
    for (std::string severity : {"ERROR:  ", "FATAL:  ", "PANIC:  "}) {
        for (std::size_t at = text.find(severity); at != std::string::npos;
             at = text.find(severity, at)) {
            text.erase(at, severity.size());
        }
    }
    text.erase(text.find_last_not_of(" \t\r") + 1);
    return text;
}

bool is_uri(std::string_view url) {
    return url.starts_with("postgresql://") || url.starts_with("postgres://");
}

std::string percent_decoded(std::string_view text) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        int byte = 0;
        if (text[i] == '%' && i + 2 < text.size() &&
            std::from_chars(text.data() + i + 1, text.data() + i + 3, byte, 16).ptr ==
                text.data() + i + 3) {
            out += static_cast<char>(byte);
            i += 2;
        } else {
            out += text[i];
        }
    }
    return out;
}

}  // namespace

std::string pg_redact_url(const std::string& url, std::vector<std::string>& secrets) {
    std::string out = url;
    auto hide = [&](std::size_t from, std::size_t to) {
        if (to <= from) return;
        secrets.push_back(out.substr(from, to - from));
        secrets.push_back(percent_decoded(secrets.back()));
        out.replace(from, to - from, "***");
    };
    bool uri = is_uri(out);
    if (uri) {
        // user:password@: libpq takes the user part up to the first '@' before any '/'; a
        // password with a raw '/' or '@' in it reaches the last '@' before the query.
        std::size_t start = out.find("://") + 3;
        std::size_t libpq = out.find_first_of("@/", start);
        std::size_t query = out.find('?', start);
        std::size_t last = out.rfind('@', query == std::string::npos ? query : query - 1);
        std::size_t at = std::string::npos;
        if (libpq != std::string::npos && out[libpq] == '@') at = libpq;
        if (last != std::string::npos && last >= start && (at == std::string::npos || last > at)) {
            at = last;
        }
        if (at != std::string::npos) {
            std::size_t colon = out.find(':', start);
            if (colon < at) hide(colon + 1, at);
        }
    }
    // password=... as a query parameter (up to '&') or a key=value pair (a word or '...').
    const std::string key = "password";
    for (std::size_t i = 0; i + key.size() <= out.size(); ++i) {
        bool boundary = i == 0 || out[i - 1] == '?' || out[i - 1] == '&' ||
                        std::isspace(static_cast<unsigned char>(out[i - 1]));
        if (!boundary) continue;
        bool match = std::equal(key.begin(), key.end(), out.begin() + static_cast<long>(i),
                                [](char a, char b) { return std::tolower(a) == b; });
        if (!match) continue;
        std::size_t j = out.find_first_not_of(' ', i + key.size());
        if (j == std::string::npos || out[j] != '=') continue;
        std::size_t from = uri ? j + 1 : out.find_first_not_of(' ', j + 1);
        if (from == std::string::npos) break;
        std::size_t to = from;
        if (uri) {
            to = std::min(out.find_first_of("&#", from), out.size());
        } else if (out[from] == '\'') {
            for (to = from + 1; to < out.size() && out[to] != '\''; ++to) {
                if (out[to] == '\\') ++to;
            }
            to = std::min(to + 1, out.size());
        } else {
            while (to < out.size() && !std::isspace(static_cast<unsigned char>(out[to]))) ++to;
        }
        hide(from, to);
        i = from + 2;
    }
    return out;
}

std::string redact_store_url(const std::string& url) {
    std::vector<std::string> secrets;
    return pg_redact_url(url, secrets);
}

std::string pg_scrub_message(std::string_view message, const std::string& url,
                             const std::vector<std::string>& secrets, const std::string& redacted) {
    std::string text = first_line(message);
    auto replace_all = [&](const std::string& what, const std::string& with) {
        if (what.empty()) return;
        for (std::size_t at = text.find(what); at != std::string::npos;
             at = text.find(what, at + with.size())) {
            text.replace(at, what.size(), with);
        }
    };
    replace_all(url, redacted);
    for (const std::string& secret : secrets) replace_all(secret, "***");
    return text;
}

namespace {

bool is_word(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// At sql[i], `INDEXED BY name` (any case, any spaces): moves i past it and returns true.
bool skip_indexed_by(std::string_view sql, std::size_t& i) {
    auto word = [&](std::size_t at, std::string_view w) {
        if (at + w.size() > sql.size()) return false;
        for (std::size_t k = 0; k < w.size(); ++k) {
            if (std::toupper(static_cast<unsigned char>(sql[at + k])) != w[k]) return false;
        }
        return at + w.size() == sql.size() || !is_word(sql[at + w.size()]);
    };
    auto spaces = [&](std::size_t at) {
        while (at < sql.size() && std::isspace(static_cast<unsigned char>(sql[at]))) ++at;
        return at;
    };
    if (!word(i, "INDEXED")) return false;
    std::size_t at = spaces(i + 7);
    if (at == i + 7 || !word(at, "BY")) return false;
    std::size_t name = spaces(at + 2);
    std::size_t end = name;
    while (end < sql.size() && is_word(sql[end])) ++end;
    if (name == at + 2 || end == name) return false;
    i = end;
    return true;
}

}  // namespace

std::string pg_translate_parameters(std::string_view sql, int* parameters) {
    std::string out;
    out.reserve(sql.size() + 16);
    int highest = 0;
    std::size_t i = 0;
    auto copy_through = [&](std::size_t end) {  // copies sql[i, end) and moves i there
        end = std::min(end, sql.size());
        out.append(sql.substr(i, end - i));
        i = end;
    };
    while (i < sql.size()) {
        char c = sql[i];
        char next = i + 1 < sql.size() ? sql[i + 1] : '\0';
        if (c == '\'' || c == '"') {  // '' inside a string reads as two strings back to back
            std::size_t close = sql.find(c, i + 1);
            copy_through(close == std::string_view::npos ? close : close + 1);
        } else if (c == '-' && next == '-') {
            copy_through(sql.find('\n', i));
        } else if (c == '/' && next == '*') {
            std::size_t close = sql.find("*/", i + 2);
            copy_through(close == std::string_view::npos ? close : close + 2);
        } else if ((c == 'I' || c == 'i') && (i == 0 || !is_word(sql[i - 1])) &&
                   skip_indexed_by(sql, i)) {
            // SQLite's index hint (`INDEXED BY name`): PostgreSQL's planner has statistics.
        } else if (c == '?') {
            std::size_t end = i + 1;
            while (end < sql.size() && sql[end] >= '0' && sql[end] <= '9') ++end;
            int number = highest + 1;
            if (end > i + 1) std::from_chars(sql.data() + i + 1, sql.data() + end, number);
            highest = std::max(highest, number);
            out += '$';
            out += std::to_string(number);
            i = end;
        } else {
            out += c;
            ++i;
        }
    }
    if (parameters) *parameters = highest;
    return out;
}

}  // namespace team
