#include "team/env_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "base/whole_file.hpp"

namespace team {

namespace fs = std::filesystem;

fs::path env_file_path(const fs::path& home, std::int64_t agent_id, std::int64_t spawner) {
    return home / "spawn" / (std::to_string(agent_id) + "-" + std::to_string(spawner) + ".env");
}

void write_env_file(const fs::path& home, std::int64_t agent_id,
                    const std::vector<std::string>& entries) {
    fs::path dir = home / "spawn";
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
        throw failed("cannot make " + quote(dir.string()) + ": " + std::strerror(errno));
    replace_file(env_file_path(home, agent_id, ::getpid()), nlohmann::json(entries).dump());
}

std::vector<std::string> take_env_file(const fs::path& home, std::int64_t agent_id,
                                       std::int64_t spawner) {
    fs::path path = env_file_path(home, agent_id, spawner);
    std::ifstream in(path, std::ios::binary);
    if (!in) return {};
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ::unlink(path.c_str());
    auto parsed = nlohmann::json::parse(text, nullptr, false);
    std::vector<std::string> entries;
    if (!parsed.is_array()) return entries;
    for (const auto& e : parsed) {
        if (e.is_string()) entries.push_back(e.get<std::string>());
    }
    return entries;
}

void drop_env_file(const fs::path& home, std::int64_t agent_id, std::int64_t spawner) {
    ::unlink(env_file_path(home, agent_id, spawner).c_str());
}

std::vector<std::string> env_names(const std::vector<std::string>& entries) {
    std::vector<std::string> names;
    for (const auto& kv : entries) names.push_back(kv.substr(0, kv.find('=')));
    return names;
}

}  // namespace team
