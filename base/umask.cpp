#include "base/umask.hpp"

#include <sys/stat.h>

namespace team {

namespace {
mode_t g_command_umask = 077;
}

void make_files_private() {
    g_command_umask = ::umask(077);
}

mode_t command_umask() {
    return g_command_umask;
}

}  // namespace team
