#include "base/whole_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "base/error.hpp"

namespace team {

void replace_file(const std::filesystem::path& path, std::string_view content, bool durable) {
    std::string tmp = path.string() + ".tmp.XXXXXX";
    int fd = ::mkostemp(tmp.data(), O_CLOEXEC);  // mode 0600
    if (fd < 0) {
        throw failed("cannot write " + quote(path.string()) + ": " + std::strerror(errno));
    }
    int error = 0;
    std::size_t done = 0;
    while (done < content.size() && error == 0) {
        ssize_t n = ::write(fd, content.data() + done, content.size() - done);
        if (n > 0) {
            done += static_cast<std::size_t>(n);
        } else if (n == 0 || errno != EINTR) {
            error = n == 0 ? EIO : errno;
        }
    }
    if (error == 0 && durable && ::fsync(fd) != 0) error = errno;
    if (::close(fd) != 0 && error == 0) error = errno;
    if (error == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) error = errno;
    if (error != 0) {
        ::unlink(tmp.c_str());
        throw failed("cannot write " + quote(path.string()) + ": " + std::strerror(error));
    }
}

}  // namespace team
