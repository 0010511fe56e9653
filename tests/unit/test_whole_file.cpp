// base/whole_file: a file replaced whole, by many writers at once (team serve's and team mcp's
// threads write the home's tmux.conf; processes write a preset's settings).
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/error.hpp"
#include "base/whole_file.hpp"
#include "tests/support/process.hpp"

namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

TEST_CASE("a file replaced whole by threads at once holds one writer's content", "[whole_file]") {
    team::test::TempDir dir;
    fs::path file = dir.path() / "tmux.conf";
    std::vector<std::thread> writers;
    std::vector<std::string> failures(16);
    for (int i = 0; i < 16; ++i) {
        writers.emplace_back([&, i] {
            try {
                for (int round = 0; round < 50; ++round) {
                    team::replace_file(file, std::string(1000, static_cast<char>('a' + i)));
                }
            } catch (const std::exception& e) {
                failures[i] = e.what();
            }
        });
    }
    for (auto& t : writers) t.join();
    for (const auto& f : failures) CHECK(f.empty());
    std::string content = read(file);
    REQUIRE(content.size() == 1000);
    CHECK(content == std::string(1000, content[0]));
    // Nothing left beside it, and only its user may read it.
    CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()) == 1);
    struct stat st {};
    REQUIRE(::stat(file.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
}

TEST_CASE("a file that cannot be written is a failure naming it, with nothing left",
          "[whole_file]") {
    team::test::TempDir dir;
    fs::path file = dir.path() / "missing" / "serve.json";
    try {
        team::replace_file(file, "{}", true);
        FAIL("no error");
    } catch (const team::Error& e) {
        CHECK(e.code() == team::ErrorCode::failed);
        CHECK(std::string(e.what()).find("missing/serve.json") != std::string::npos);
    }
    CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()) == 0);
}
