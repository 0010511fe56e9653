// A background shell's output file (<home>/shells/ID.out): written by its supervisor, keeping
// only the end past --output-limit, and read by anyone while the shell runs and after it ends.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace team::shells {

// Appends output to the file, keeping at most the last `limit` bytes: when the file grows past
// twice the limit, its end is copied to a new file that replaces it.
class OutputFile {
  public:
    OutputFile(std::filesystem::path path, std::int64_t limit);
    ~OutputFile();
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;
    // True when this write dropped older output for the first time.
    bool append(std::string_view chunk);

  private:
    void open();
    void compact();

    std::filesystem::path path_;
    std::int64_t limit_;
    int fd_ = -1;
    std::int64_t size_ = 0;
    bool truncated_ = false;
};

struct OutputRead {
    std::string output;
    bool truncated = false;
};

// What the file holds: all of it, or the last `limit` bytes cut on a UTF-8 boundary; never
// more than `kept` (the shell's output limit: the file may hold up to twice that between
// compactions). `truncated` when anything was left out. Empty when the file cannot be read.
OutputRead read_output(const std::string& path, std::optional<std::int64_t> kept,
                       std::optional<std::size_t> limit);

// For followers: the file's bytes from `offset` on, and its size now. When the file is smaller
// than `offset` (the output limit dropped its start), from its start.
std::pair<std::string, std::size_t> read_output_from(const std::string& path, std::size_t offset);

}  // namespace team::shells
