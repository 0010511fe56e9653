#include "http/assets.hpp"

#include <fstream>
#include <sstream>

namespace team::http {

std::string_view mime_type(std::string_view path) {
    struct Type {
        std::string_view ext, mime;
    };
    static constexpr Type kTypes[] = {
        {".html", "text/html; charset=utf-8"},
        {".js", "text/javascript; charset=utf-8"},
        {".mjs", "text/javascript; charset=utf-8"},
        {".css", "text/css; charset=utf-8"},
        {".json", "application/json"},
        {".svg", "image/svg+xml"},
        {".png", "image/png"},
        {".ico", "image/x-icon"},
        {".txt", "text/plain; charset=utf-8"},
        {".woff2", "font/woff2"},
    };
    for (const auto& t : kTypes) {
        if (path.size() >= t.ext.size() && path.substr(path.size() - t.ext.size()) == t.ext) {
            return t.mime;
        }
    }
    return "application/octet-stream";
}

std::optional<std::string> find_asset(std::string_view path,
                                      const std::optional<std::filesystem::path>& root) {
    std::string wanted = path == "/" ? "/index.html" : std::string(path);
    // No way out of the root: no "..", no backslash, no NUL.
    if (wanted.find("..") != std::string::npos || wanted.find('\\') != std::string::npos ||
        wanted.find('\0') != std::string::npos) {
        return std::nullopt;
    }
    if (root) {
        auto file = *root / wanted.substr(1);
        if (!std::filesystem::is_regular_file(file)) return std::nullopt;
        std::ifstream in(file, std::ios::binary);
        if (!in) return std::nullopt;
        std::stringstream s;
        s << in.rdbuf();
        return s.str();
    }
    for (const auto& a : embedded_assets()) {
        if (a.path == wanted) return std::string(a.data);
    }
    return std::nullopt;
}

}  // namespace team::http
