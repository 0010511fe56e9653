// The version, given by CMakeLists.txt (project VERSION) to this file alone, so a new version
// recompiles one file.
#include "cli/app.hpp"

#ifndef TEAM_VERSION
#error "TEAM_VERSION is defined by CMakeLists.txt"
#endif

namespace team::cli {

const char* version() {
    return TEAM_VERSION;
}

}  // namespace team::cli
