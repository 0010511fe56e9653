#include "cli/input.hpp"

#include <unistd.h>

#include <cerrno>

#include "base/error.hpp"

#include <string>

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
    if (!text.empty() && text.back() == '\n') text.pop_back();
    return text;
}

CLI::Validator whole_number(long long min) {
    return CLI::Validator(
        [min](std::string& value) -> std::string {
            bool digits = !value.empty() && value.size() <= 18 &&
                          value.find_first_not_of("0123456789") == std::string::npos;
            if (!digits || std::stoll(value) < min) {
                return "must be a whole number of at least " + std::to_string(min) + ", not " +
                       quote(value);
            }
            return {};
        },
        "", "whole_number");
}

}  // namespace team::cli
