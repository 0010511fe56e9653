#include "tests/support/pg.hpp"

#include "tests/support/process.hpp"

#include <catch2/catch.hpp>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string_view>
#include <vector>

namespace team::test {

namespace fs = std::filesystem;

namespace {

// Where Debian's PostgreSQL 15 programs are ($TEAM_PG_BINDIR overrides, as in scripts/pg-rig).
std::string pg_bindir() {
    const char* chosen = std::getenv("TEAM_PG_BINDIR");
    return chosen && *chosen ? chosen : "/usr/lib/postgresql/15/bin";
}

// The socket the rig's server listens on (scripts/pg-rig sets port 5432).
fs::path socket_file(const fs::path& dir) {
    return dir / ".s.PGSQL.5432";
}

std::string random_database_name() {
    std::random_device random;
    char hex[17];
    std::snprintf(hex, sizeof hex, "%08x%08x", random(), random());
    return std::string("t_") + hex;
}

RunResult pg_rig(const std::vector<std::string>& args) {
    std::vector<std::string> argv{(source_dir() / "scripts" / "pg-rig").string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return Child(argv, clean_env()).wait();
}

}  // namespace

std::optional<fs::path> test_pg_dir() {
    const char* dir = std::getenv("TEAM_TEST_PG");
    if (dir == nullptr || *dir == '\0') return std::nullopt;
    return fs::path(dir);
}

std::string pg_store_url(const fs::path& socket_dir, const std::string& name) {
    std::string host;
    for (unsigned char c : socket_dir.string()) {
        if (std::isalnum(c) ||
            std::string_view("/-._~").find(static_cast<char>(c)) != std::string_view::npos) {
            host += static_cast<char>(c);
        } else {
            char escaped[4];
            std::snprintf(escaped, sizeof escaped, "%%%02X", c);
            host += escaped;
        }
    }
    return "postgresql://team@/" + name + "?host=" + host;
}

Child psql_start(const fs::path& socket_dir, const std::string& db, const std::string& sql) {
    // clean_env leaves out libpq's own variables (PGHOST, ...): only these arguments count.
    return Child({pg_bindir() + "/psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h",
                  socket_dir.string(), "-U", "team", "-d", db, "-c", sql},
                 clean_env({{"PGCONNECT_TIMEOUT", "10"}}));
}

RunResult psql(const fs::path& socket_dir, const std::string& db, const std::string& sql) {
    return psql_start(socket_dir, db, sql).wait();
}

PgDatabase::PgDatabase()
    : PgDatabase([] {
          auto dir = test_pg_dir();
          if (!dir)
              FAIL(
                  "no PostgreSQL for this test: TEAM_TEST_PG is not set (ctest's `pg` tests set "
                  "it)");
          return *dir;
      }()) {}

PgDatabase::PgDatabase(fs::path socket_dir)
    : socket_dir_(std::move(socket_dir)), name_(random_database_name()) {
    auto r = psql(socket_dir_, "postgres", "CREATE DATABASE " + name_);
    if (r.exit_code != 0)
        FAIL("cannot create the database " << name_ << " on the cluster in " << socket_dir_ << ": "
                                           << r.err);
    // Its schema, as an administrator makes it once (`team store migrate`), from a home of its
    // own so that no test's home records the store before the test does.
    TempDir home;
    auto env = clean_env({{"TEAM_HOME", (home.path() / "home").string()}, {"TEAM_STORE", url()}});
    auto migrated = Child({team_binary(), "store", "migrate"}, env, "").wait();
    if (migrated.exit_code != 0)
        FAIL("team store migrate failed on " << name_ << ": " << migrated.err);
}

PgDatabase::~PgDatabase() {
    try {
        if (!fs::exists(socket_file(socket_dir_))) return;  // the server is down: nothing to drop
        auto r =
            psql(socket_dir_, "postgres", "DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
        if (r.exit_code != 0)
            std::fprintf(stderr, "pg: cannot drop the database %s: %s", name_.c_str(),
                         r.err.c_str());
    } catch (...) {
        std::fprintf(stderr, "pg: cannot drop the database %s\n", name_.c_str());
    }
}

int PgDatabase::terminate_sessions() const {
    auto r = psql(socket_dir_, "postgres",
                  "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity "
                  "WHERE datname = '" +
                      name_ + "' AND pid <> pg_backend_pid()");
    INFO("psql: " << r.err);
    REQUIRE(r.exit_code == 0);
    return std::stoi(r.out);
}

PgCluster::PgCluster() : dir_(tmp_.path() / "pg") {
    auto r = pg_rig({"start", dir_.string()});
    if (r.exit_code != 0) {
        pg_rig({"stop", dir_.string()});
        FAIL("scripts/pg-rig start " << dir_ << " failed: " << r.err);
    }
}

PgCluster::~PgCluster() {
    try {
        auto r = pg_rig({"stop", dir_.string()});
        if (r.exit_code != 0) std::fprintf(stderr, "pg: %s", r.err.c_str());
    } catch (...) {
        std::fprintf(stderr, "pg: cannot stop the cluster in %s\n", dir_.c_str());
    }
}

void PgCluster::down(const std::string& mode) const {
    auto r = pg_rig({"down", dir_.string(), mode});
    INFO("scripts/pg-rig down: " << r.err);
    REQUIRE(r.exit_code == 0);
}

void PgCluster::up() const {
    auto r = pg_rig({"up", dir_.string()});
    INFO("scripts/pg-rig up: " << r.err);
    REQUIRE(r.exit_code == 0);
}

}  // namespace team::test
