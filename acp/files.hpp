// fs/read_text_file and fs/write_text_file, only inside the allowed roots (the session's cwd and
// the directories it was given): paths must be absolute, a `..` component is refused, and
// symlinks are resolved before the check, so a link inside a root cannot lead outside it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace team::acp {

class Roots {
  public:
    // Each root is resolved (symlinks followed) once, here. Throws team::Error (usage) for a
    // root that is not an existing absolute directory.
    explicit Roots(const std::vector<std::filesystem::path>& roots);

    // The resolved path `path` names, when it is inside a root. For a write the file may not
    // exist yet (its nearest existing ancestor is resolved instead). Throws team::Error:
    // usage for a relative path or `..`, refused for a path outside every root.
    std::filesystem::path resolve(std::string_view path, bool for_write) const;
    const std::vector<std::filesystem::path>& paths() const { return roots_; }

  private:
    bool inside(const std::filesystem::path& resolved) const;
    std::vector<std::filesystem::path> roots_;
};

// The file's text from 1-based `line` (1 when absent), at most `limit` lines (all when absent).
// Throws team::Error: not_found for a missing file, and as Roots::resolve does.
std::string read_text_file(const Roots& roots, std::string_view path,
                           std::optional<std::uint32_t> line, std::optional<std::uint32_t> limit);

// Writes the whole file (created with its missing parent directories, inside the roots), by a
// temporary file renamed over it. Throws as Roots::resolve does, or failed on an I/O error.
void write_text_file(const Roots& roots, std::string_view path, const std::string& content);

}  // namespace team::acp
