// The dashboard's files (web/), embedded in the binary at build time (http/embed_web.cmake), or
// read from a directory with `team serve --web-root DIR` while working on the page.
#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace team::http {

struct Asset {
    std::string_view path;  // "/index.html"
    std::string_view data;
};

// Every file of web/ as it was when the binary was built (generated web_assets.cpp).
std::span<const Asset> embedded_assets();

// The media type of a file by its extension (text types in UTF-8).
std::string_view mime_type(std::string_view path);

// The file for a request path ("/" is /index.html): from `root` when given (never outside it),
// else the embedded copy. None when there is no such file.
std::optional<std::string> find_asset(std::string_view path,
                                      const std::optional<std::filesystem::path>& root);

}  // namespace team::http
