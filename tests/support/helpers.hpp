// Test support: small helpers every end-to-end test file uses.
#pragma once

#include <SQLiteCpp/SQLiteCpp.h>
#include <sys/types.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>

#include "proc/process_table.hpp"
#include "state/db.hpp"

namespace team::test {

// Whether the `team` under test is built with AddressSanitizer: these tests are (the unit tests
// of build-asan/), or $TEAM_TEST_SANITIZED says so (scripts/test --sanitize runs the plain
// build's end-to-end tests against build-asan/team). Every such process is some 40 times slower
// to start and end, so the load tests run a smaller load there (the full load runs in the plain
// build).
inline bool sanitized_under_test() {
#if defined(__SANITIZE_ADDRESS__)
    return true;
#else
    const char* flag = std::getenv("TEAM_TEST_SANITIZED");
    return flag && *flag && std::string(flag) != "0";
#endif
}
inline const bool kSanitized = sanitized_under_test();

// How much longer every bound of the tests is under AddressSanitizer, where every process is
// much slower to start and end.
inline const int kSanitizerSlowdown = kSanitized ? 4 : 1;

// A generous bound for "it happens" (never a measurement), in milliseconds.
inline int bound(int ms) {
    return ms * kSanitizerSlowdown;
}

// A bound in seconds for "it did not wait for something much longer" (a grace, a poll).
inline double slack(double seconds) {
    return seconds * kSanitizerSlowdown;
}

// Polls `done` every 10 ms for up to `ms` (by default 5 s, more under the sanitizers); true as
// soon as it holds. Tests never assert on time: deadlines here are generous bounds for "it
// happens", not measurements.
inline bool eventually(const std::function<bool()>& done, int ms = bound(5000)) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    for (;;) {
        if (done()) return true;
        if (std::chrono::steady_clock::now() >= deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

// The whole file (empty when it cannot be read).
inline std::string slurp(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// Single-quotes a path for sh.
inline std::string sq(const std::filesystem::path& p) {
    std::string out = "'";
    for (char c : p.string()) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

// Whether the process exists and is not a zombie.
inline bool alive(pid_t pid) {
    auto p = team::proc::read_process(pid);
    return p && !p->is_zombie();
}

// The first column of the first row of `sql` (SQLiteCpp's execAndGet, for a store's connection
// too): exec_and_get(store.db(), "SELECT count(*) FROM t").getInt().
struct Scalar {
    Scalar(team::Db& db, const std::string& sql) : statement(db, sql) { statement.executeStep(); }
    int getInt() const { return statement.getColumn(0).getInt(); }
    std::int64_t getInt64() const { return statement.getColumn(0).getInt64(); }
    std::string getString() const { return statement.getColumn(0).getString(); }
    team::Statement statement;
};
inline Scalar exec_and_get(team::Db& db, const std::string& sql) {
    return Scalar(db, sql);
}
inline SQLite::Column exec_and_get(SQLite::Database& db, const std::string& sql) {
    return db.execAndGet(sql);
}

// Every row the queries return, as text ("<null>" for NULL, '|' after each value, "--" after
// each query): a snapshot to compare before and after a command that must change nothing.
// Inserts a member of team `team_id` as a spawn leaves it once started (no pane, no supervisor),
// for the in-process tests of the core. The caller runs it in a transaction.
inline void insert_member(team::Db& db, std::int64_t team_id, const std::string& name,
                          const std::string& status, std::int64_t created_at) {
    team::Statement insert(db, R"sql(
        INSERT INTO agents (team_id, name, is_leader, status, created_at) VALUES (?, ?, 0, ?, ?)
    )sql");
    insert.bind(1, team_id);
    insert.bind(2, name);
    insert.bind(3, status);
    insert.bind(4, created_at);
    insert.exec();
}

// (On a store's connection, or on SQLiteCpp's for a test that opens team.db itself.)
template <class Database>
std::string rows_as_text(Database& db, std::initializer_list<const char*> queries) {
    using Select = std::conditional_t<std::is_base_of_v<team::Db, Database>, team::Statement,
                                      SQLite::Statement>;
    std::string out;
    for (const char* sql : queries) {
        Select select(db, sql);
        while (select.executeStep()) {
            for (int i = 0; i < select.getColumnCount(); ++i) {
                auto c = select.getColumn(i);
                out += c.isNull() ? std::string("<null>") : c.getString();
                out += '|';
            }
            out += '\n';
        }
        out += "--\n";
    }
    return out;
}

}  // namespace team::test
