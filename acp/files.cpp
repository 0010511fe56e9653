#include "acp/files.hpp"

#include <fstream>
#include <sstream>

#include "base/error.hpp"

namespace team::acp {

namespace fs = std::filesystem;

Roots::Roots(const std::vector<fs::path>& roots) {
    for (const fs::path& root : roots) {
        std::error_code ec;
        if (!root.is_absolute() || !fs::is_directory(root, ec))
            throw usage_error("root " + quote(root.string()) + " is not an absolute directory");
        roots_.push_back(fs::canonical(root));
    }
}

bool Roots::inside(const fs::path& resolved) const {
    for (const fs::path& root : roots_) {
        auto r = root.begin();
        auto p = resolved.begin();
        for (; r != root.end() && p != resolved.end() && *r == *p; ++r, ++p) {
        }
        if (r == root.end()) return true;
    }
    return false;
}

fs::path Roots::resolve(std::string_view text, bool for_write) const {
    fs::path path(text);
    if (!path.is_absolute()) throw usage_error("path " + quote(text) + " is not absolute");
    for (const fs::path& part : path)
        if (part == "..") throw usage_error("path " + quote(text) + " has a '..' component");
    std::error_code ec;
    fs::path resolved;
    if (fs::exists(path, ec)) {
        resolved = fs::canonical(path, ec);
    } else {
        if (!for_write) throw not_found("no file " + quote(text));
        // The nearest existing ancestor, resolved, with the rest of the path below it.
        fs::path existing = path;
        fs::path rest;
        while (!existing.empty() && !fs::exists(existing, ec)) {
            rest = rest.empty() ? existing.filename() : existing.filename() / rest;
            existing = existing.parent_path();
        }
        resolved = fs::canonical(existing, ec) / rest;
    }
    if (ec) throw failed("cannot resolve " + quote(text) + ": " + ec.message());
    if (!inside(resolved)) throw refused("path " + quote(text) + " is outside the agent's roots");
    return resolved.lexically_normal();
}

std::string read_text_file(const Roots& roots, std::string_view text,
                           std::optional<std::uint32_t> line, std::optional<std::uint32_t> limit) {
    fs::path path = roots.resolve(text, false);
    std::error_code ec;
    if (fs::is_directory(path, ec)) throw usage_error("path " + quote(text) + " is a directory");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw not_found("cannot read " + quote(text));
    std::ostringstream whole;
    whole << in.rdbuf();
    std::string all = whole.str();
    if (!line && !limit) return all;
    std::uint32_t first = line.value_or(1) == 0 ? 1 : line.value_or(1);
    std::string out;
    std::uint32_t number = 1, taken = 0;
    std::size_t start = 0;
    while (start < all.size()) {
        std::size_t end = all.find('\n', start);
        std::size_t next = end == std::string::npos ? all.size() : end + 1;
        if (number >= first) {
            if (limit && taken >= *limit) break;
            out.append(all, start, next - start);
            ++taken;
        }
        ++number;
        start = next;
    }
    return out;
}

void write_text_file(const Roots& roots, std::string_view text, const std::string& content) {
    fs::path path = roots.resolve(text, true);
    std::error_code ec;
    if (fs::is_directory(path, ec)) throw usage_error("path " + quote(text) + " is a directory");
    fs::create_directories(path.parent_path(), ec);
    if (ec) throw failed("cannot create the folder of " + quote(text) + ": " + ec.message());
    fs::path temporary = path;
    temporary += ".team-acp-write";
    {
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        out << content;
        if (!out.flush()) throw failed("cannot write " + quote(text));
    }
    fs::rename(temporary, path, ec);
    if (ec) {
        fs::remove(temporary, ec);
        throw failed("cannot write " + quote(text));
    }
}

}  // namespace team::acp
