// A file replaced whole: written to a temporary file of its own beside it, then renamed over
// it, so a reader sees the old content or the new, never half of either. The temporary's name
// is unique (mkostemp), so writers in other processes or on other threads of this one (team
// serve's and team mcp's workers) never write into each other's temporary.
#pragma once

#include <filesystem>
#include <string_view>

namespace team {

// Replaces `path` with `content`, mode 0600. With `durable`, the content reaches the disk
// before the rename. Throws a general failure naming the path when it cannot; a temporary
// left by a failed write is removed.
void replace_file(const std::filesystem::path& path, std::string_view content,
                  bool durable = false);

}  // namespace team
