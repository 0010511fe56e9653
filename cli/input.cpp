#include "cli/input.hpp"

#include <unistd.h>

#include <cerrno>

#include "base/error.hpp"

namespace team::cli {

std::string text_argument(const std::string& value) {
    if (value != "-") return value;
    constexpr size_t kMax = (1 << 20) + 1;
    std::string text;
    char buf[65536];
    while (text.size() < kMax) {
        ssize_t n = ::read(STDIN_FILENO, buf, std::min(sizeof buf, kMax - text.size()));
        if (n == 0) break;
        if (n < 0) {
            if (errno == EINTR) continue;
            throw failed("cannot read standard input");
        }
        text.append(buf, static_cast<size_t>(n));
    }
    return text;
}

}  // namespace team::cli
