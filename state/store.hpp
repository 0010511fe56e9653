// The store of one home (SPEC 2 and 16): the SQLite file in the home (the default, no server) or
// a PostgreSQL database that several homes, on several machines, share. Which one: --store or
// $TEAM_STORE (a libpq connection string, postgresql://…), else the home's config
// (<home>/config, `store = …`), else SQLite. Every repository of state/ speaks to it through
// db(); every read-check-write goes through write(), one transaction in which no other writer
// runs, so concurrent processes never interleave a check and its write.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "state/db.hpp"

namespace team {

class Store {
  public:
    // Opens the home's store (see above), creating and migrating a SQLite one if needed. The
    // home must exist (see ensure_home).
    explicit Store(const std::filesystem::path& home);
    // Opens the store at `url` ("" for the home's SQLite file). A PostgreSQL store whose schema
    // is not this program's is refused (a message that says which is older and what to run),
    // unless `check_schema` is false (`team store migrate` and `check`).
    Store(const std::filesystem::path& home, const std::string& url, bool check_schema = true);
    ~Store();
    Store(const Store&) = delete;
    Store& operator=(const Store&) = delete;

    const std::filesystem::path& home() const { return home_; }
    std::filesystem::path db_path() const { return home_ / "team.db"; }
    Db& db() { return *db_; }
    Db::Engine engine() const { return db_->engine(); }
    // The store's connection string ("" for SQLite), and the same fit to show (no password).
    const std::string& url() const { return url_; }
    std::string shown() const;
    // This home's id (state/home.hpp), read once.
    const std::string& home_id();

    // Runs fn() in one write transaction (Db::begin_write) in its turn, alone unless said
    // (Db::Turn: a claim's is shared): committed when fn returns, rolled back when it throws.
    // Returns what fn returns. A commit wakes every ChangeWatch of the store.
    template <class Fn>
    auto write(Fn&& fn) -> decltype(fn()) {
        return write(Db::Turn::alone, std::forward<Fn>(fn));
    }
    template <class Fn>
    auto write(Db::Turn turn, Fn&& fn) -> decltype(fn()) {
        db_->begin_write(turn);
        try {
            if constexpr (std::is_void_v<decltype(fn())>) {
                fn();
                db_->commit_write();
                run_after_commit();
            } else {
                auto result = fn();
                db_->commit_write();
                run_after_commit();
                return result;
            }
        } catch (...) {
            after_commit_.clear();
            db_->rollback_write();
            throw;
        }
    }

    // Inside a write(): runs `fn` once that write has committed (never when it rolls back), in
    // this thread, before write() returns: what the write decided that must not happen unless
    // it is kept (a notify command run for an agent's end). `fn` must not throw.
    void after_commit(std::function<void()> fn) { after_commit_.push_back(std::move(fn)); }

    // Waits until the write under way, if any, has ended, so that its commit is visible to
    // this process. SQLite: the writers' turn taken shared for an instant (sqlite_db.hpp);
    // PostgreSQL: the writers' advisory lock taken shared for an instant. False when it cannot
    // be known. Never from inside a write() of this store.
    bool await_writer();

    // How long a SQLite connection waits for another process's write lock before failing.
    static constexpr int kBusyTimeoutMs = 10'000;

  private:
    std::filesystem::path home_;
    std::string url_;
    void run_after_commit() {
        auto pending = std::move(after_commit_);
        after_commit_.clear();
        for (auto& fn : pending) fn();
    }

    std::unique_ptr<Db> db_;
    std::string home_id_;
    std::vector<std::function<void()>> after_commit_;
};

// The store the home uses: --store/$TEAM_STORE when set (non-empty), else the home's config
// (`store = …` in <home>/config), else "" (SQLite). "sqlite" counts as "". A store named
// explicitly that differs from the one the home's config records is refused, since the
// processes the home starts (supervisors, hosts) would use the config's; an explicit store in a
// home without one is recorded there, for them.
std::string resolve_store_url(const std::filesystem::path& home);

// Records `url` ("" for SQLite) as the home's store in its config (0600).
void record_store_url(const std::filesystem::path& home, const std::string& url);

// Turns a store's errors into the project's (busy -> a clear message, read-only home -> a clear
// message), leaving team::Error as it is. Call from the top-level handler.
[[noreturn]] void rethrow_store_error(const std::exception& e);

}  // namespace team
