#include "shells/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "base/error.hpp"
#include "base/text.hpp"
#include "base/whole_file.hpp"
#include "proc/detach.hpp"

namespace team::shells {

namespace fs = std::filesystem;

OutputFile::OutputFile(fs::path path, std::int64_t limit) : path_(std::move(path)), limit_(limit) {
    open();
}

OutputFile::~OutputFile() {
    if (fd_ >= 0) ::close(fd_);
}

bool OutputFile::append(std::string_view chunk) {
    proc::write_all(fd_, chunk);
    size_ += static_cast<std::int64_t>(chunk.size());
    if (size_ <= 2 * limit_) return false;
    compact();
    bool first = !truncated_;
    truncated_ = true;
    return first;
}

void OutputFile::open() {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    struct stat st {};
    size_ = fd_ >= 0 && ::fstat(fd_, &st) == 0 ? st.st_size : 0;
}

void OutputFile::compact() {
    std::string tail(static_cast<size_t>(limit_), '\0');
    int in = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    ssize_t n = ::pread(in, tail.data(), tail.size(), size_ - limit_);
    ::close(in);
    tail.resize(n > 0 ? static_cast<size_t>(n) : 0);
    try {
        replace_file(path_, tail);
    } catch (const Error&) {
        // the disk refused: the file keeps growing past its limit rather than losing output
    }
    ::close(fd_);
    open();
}

std::pair<std::string, std::size_t> read_output_from(const std::string& path, std::size_t offset) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return {"", 0};
    struct stat st {};
    ::fstat(fd, &st);
    auto size = static_cast<std::size_t>(st.st_size);
    if (size < offset) offset = 0;
    std::string bytes(size - offset, '\0');
    ssize_t n = ::pread(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset));
    ::close(fd);
    bytes.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    return {bytes, offset + bytes.size()};
}

OutputRead read_output(const std::string& path, std::optional<std::int64_t> kept,
                       std::optional<std::size_t> limit) {
    OutputRead read;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return read;
    struct stat st {};
    ::fstat(fd, &st);
    auto size = static_cast<std::size_t>(st.st_size);
    // The file may hold up to twice --output-limit between compactions: never return more.
    if (kept && size > static_cast<std::size_t>(*kept)) {
        auto keep = static_cast<std::size_t>(*kept);
        limit = limit ? std::min(*limit, keep) : keep;
        read.truncated = true;
    }
    // Read a little more than the limit, so the cut can move to a character boundary.
    std::size_t want = limit ? std::min(size, *limit + 3) : size;
    read.output.resize(want);
    ssize_t n = ::pread(fd, read.output.data(), want, static_cast<off_t>(size - want));
    ::close(fd);
    read.output.resize(n > 0 ? static_cast<size_t>(n) : 0);
    if (limit && read.output.size() > *limit) {
        read.output = std::string(utf8_tail(read.output, *limit));
        read.truncated = true;
    } else if (limit && size > want) {
        read.truncated = true;
    }
    return read;
}

}  // namespace team::shells
