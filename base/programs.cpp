#include "base/programs.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "base/error.hpp"

namespace team {

bool is_executable_file(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
           ::access(path.c_str(), X_OK) == 0;
}

std::optional<std::string> find_program(const std::string& program, const std::string& path,
                                        const std::string& cwd) {
    if (program.empty()) return std::nullopt;
    if (program.find('/') != std::string::npos) {
        std::string full = program[0] == '/' || cwd.empty() ? program : cwd + "/" + program;
        if (is_executable_file(full)) return full;
        return std::nullopt;
    }
    std::string dirs = path.empty() ? "/usr/local/bin:/usr/bin:/bin" : path;
    for (size_t start = 0; start <= dirs.size();) {
        size_t end = dirs.find(':', start);
        if (end == std::string::npos) end = dirs.size();
        std::string dir = dirs.substr(start, end - start);
        std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
        if (is_executable_file(candidate)) return candidate;
        start = end + 1;
    }
    return std::nullopt;
}

namespace {

bool same_bytes(const std::string& a, const std::string& b) {
    std::error_code ec;
    if (std::filesystem::equivalent(a, b, ec)) return true;
    auto size = std::filesystem::file_size(a, ec);
    if (ec || size != std::filesystem::file_size(b, ec) || ec) return false;
    std::ifstream x(a, std::ios::binary), y(b, std::ios::binary);
    if (!x || !y) return false;
    return std::equal(std::istreambuf_iterator<char>(x), std::istreambuf_iterator<char>(),
                      std::istreambuf_iterator<char>(y));
}

}  // namespace

std::string installed_or_self(const std::string& program, const std::string& self,
                              const std::string& path) {
    const char* env = std::getenv("PATH");
    auto found = find_program(program, path.empty() && env ? std::string(env) : path);
    if (found && (*found)[0] == '/' && same_bytes(*found, self)) return *found;
    return self;
}

std::string own_binary() {
    std::error_code ec;
    auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) throw failed("cannot find team's own binary (/proc/self/exe): " + ec.message());
    return path.string();
}

}  // namespace team
