#include "http/auth.hpp"

#include <sys/random.h>

#include <fstream>

#include "base/error.hpp"
#include "base/whole_file.hpp"

namespace team::http {

namespace {

std::string trim(std::string_view s) {
    auto b = s.find_first_not_of(" \t");
    if (b == std::string_view::npos) return {};
    auto e = s.find_last_not_of(" \t");
    return std::string(s.substr(b, e - b + 1));
}

bool is_token(const std::string& s) {
    return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace

std::string load_or_create_token(const std::filesystem::path& home) {
    auto path = home / "serve.token";
    // One string for both returns: returned in place, never moved (GCC 12's -Warray-bounds
    // misreads the move of a string it knows holds 64 characters).
    std::string token;
    {
        std::ifstream in(path);
        if (in && std::getline(in, token) && is_token(token)) return token;
    }
    unsigned char bytes[32];
    if (::getrandom(bytes, sizeof bytes, 0) != sizeof bytes) throw failed("getrandom failed");
    static const char* hex = "0123456789abcdef";
    token.clear();
    for (unsigned char b : bytes) {
        token.push_back(hex[b >> 4]);
        token.push_back(hex[b & 15]);
    }
    replace_file(path, token + "\n", true);
    return token;
}

bool same_token(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    unsigned char diff = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        diff |= static_cast<unsigned char>(a[i] ^ b[i]);
    }
    // volatile-free but branch-free until here; the compiler cannot shortcut an OR over all.
    return diff == 0;
}

std::optional<std::string> bearer_token(std::string_view authorization) {
    auto value = trim(authorization);
    if (value.size() < 7) return std::nullopt;
    std::string scheme = value.substr(0, 7);
    for (auto& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (scheme != "bearer ") return std::nullopt;
    return trim(std::string_view(value).substr(7));
}

std::optional<std::string> cookie_value(std::string_view cookie_header, std::string_view name) {
    std::size_t i = 0;
    while (i < cookie_header.size()) {
        auto end = cookie_header.find(';', i);
        if (end == std::string_view::npos) end = cookie_header.size();
        auto pair = cookie_header.substr(i, end - i);
        auto eq = pair.find('=');
        if (eq != std::string_view::npos && trim(pair.substr(0, eq)) == name) {
            return trim(pair.substr(eq + 1));
        }
        i = end + 1;
    }
    return std::nullopt;
}

bool host_allowed(std::string_view host, std::string_view listen_host) {
    std::string h = trim(host);
    // Strip the port: after the last ':' unless it is inside an IPv6 literal's brackets.
    if (!h.empty() && h.front() == '[') {
        auto close = h.find(']');
        if (close == std::string::npos) return false;
        h = h.substr(0, close + 1);
    } else if (auto colon = h.rfind(':'); colon != std::string::npos) {
        h = h.substr(0, colon);
    }
    for (auto& c : h) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (h == "localhost" || h == "127.0.0.1" || h == "[::1]") return true;
    return !listen_host.empty() && h == listen_host;
}

}  // namespace team::http
