#include "state/home.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>

#include "base/error.hpp"

namespace team {

namespace fs = std::filesystem;

namespace {

std::optional<std::string> env(const char* name) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return std::nullopt;
    return std::string(v);
}

}  // namespace

fs::path resolve_home(const std::optional<std::string>& flag) {
    fs::path home;
    if (flag && !flag->empty()) {
        home = *flag;
    } else if (auto v = env("TEAM_HOME")) {
        home = *v;
    } else if (auto xdg = env("XDG_STATE_HOME"); xdg && xdg->front() == '/') {
        // The XDG spec: a relative value is invalid and is ignored.
        home = fs::path(*xdg) / "team";
    } else if (auto h = env("HOME")) {
        home = fs::path(*h) / ".local" / "state" / "team";
    } else {
        throw usage_error("cannot find a home for team's state: set --home or TEAM_HOME");
    }
    if (home.is_relative()) home = fs::absolute(home);
    return home.lexically_normal();
}

void ensure_home(const fs::path& home) {
    struct stat st {};
    if (::stat(home.c_str(), &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            throw failed("home " + quote(home.string()) + " is not a directory");
        return;
    }
    // Create missing parents 0700 as well (XDG asks that of ~/.local/state), then the home.
    fs::path partial;
    for (const auto& part : home) {
        partial /= part;
        if (::mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST) {
            throw failed("cannot create home " + quote(home.string()) + ": " +
                         std::strerror(errno));
        }
    }
    // mkdir applies the umask; the home itself must be exactly 0700.
    if (::chmod(home.c_str(), 0700) != 0) {
        throw failed("cannot set permissions on " + quote(home.string()) + ": " +
                     std::strerror(errno));
    }
}

}  // namespace team

namespace team {

std::string home_id(const fs::path& home) {
    fs::path path = home / "id";
    auto read = [&]() -> std::string {
        std::ifstream in(path);
        std::string id;
        std::getline(in, id);
        return id;
    };
    if (std::string id = read(); !id.empty()) return id;
    // hostname:16 random hex digits, written to a file of its own and linked into place, so
    // that of two processes making it at once one wins and both read the winner's.
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    std::random_device random;
    char suffix[17];
    std::snprintf(suffix, sizeof suffix, "%08x%08x", random(), random());
    std::string id = std::string(host) + ":" + suffix;
    fs::path tmp = home / ("id.tmp." + std::to_string(::getpid()));
    {
        std::ofstream out(tmp, std::ios::trunc);
        out << id << '\n';
        if (!out.flush()) throw failed("cannot write " + quote(tmp.string()));
    }
    bool linked = ::link(tmp.c_str(), path.c_str()) == 0;
    ::unlink(tmp.c_str());
    if (linked) return id;
    if (std::string winner = read(); !winner.empty()) return winner;
    throw failed("cannot write " + quote(path.string()) + ": " + std::strerror(errno));
}

}  // namespace team
