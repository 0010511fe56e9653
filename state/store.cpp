#include "state/store.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/error.hpp"
#include "state/home.hpp"
#include "state/pg_db.hpp"
#include "state/pg_schema.hpp"
#include "state/schema.hpp"
#include "state/sqlite_db.hpp"

namespace team {

namespace fs = std::filesystem;

namespace {

bool is_sqlite(const std::string& url) {
    return url.empty() || url == "sqlite";
}

std::unique_ptr<Db> open_store(const fs::path& home, const std::string& url) {
    if (is_sqlite(url)) return open_sqlite(home);
    if (url.rfind("postgresql:", 0) == 0 || url.rfind("postgres:", 0) == 0) {
        return open_postgresql(url);
    }
    throw usage_error("unknown store " + quote(redact_store_url(url)) +
                      ": give a PostgreSQL connection string (postgresql://…) or sqlite");
}

// The `store = …` line of <home>/config, if any.
std::optional<std::string> configured_store(const fs::path& home) {
    std::ifstream in(home / "config");
    std::string line;
    while (std::getline(in, line)) {
        auto eq = line.find('=');
        if (eq == std::string::npos) continue;
        auto trim = [](std::string s) {
            auto b = s.find_first_not_of(" \t");
            auto e = s.find_last_not_of(" \t\r");
            return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
        };
        if (trim(line.substr(0, eq)) == "store") return trim(line.substr(eq + 1));
    }
    return std::nullopt;
}

}  // namespace

std::string resolve_store_url(const fs::path& home) {
    const char* env = std::getenv("TEAM_STORE");
    auto configured = configured_store(home);
    if (!env || !*env) return configured && !is_sqlite(*configured) ? *configured : "";
    std::string named = is_sqlite(env) ? "" : env;
    std::string recorded = configured && !is_sqlite(*configured) ? *configured : "";
    if (!configured) {
        // Recorded in a home that exists (a command that makes none, `doctor`, leaves it be: the
        // first to open the store there records it).
        if (!named.empty() && fs::is_directory(home)) record_store_url(home, named);
        return named;
    }
    if (named != recorded) {
        throw refused("the home " + quote(home.string()) + " uses the store " +
                      quote(recorded.empty() ? "sqlite" : redact_store_url(recorded)) +
                      " (its config), not " +
                      quote(named.empty() ? "sqlite" : redact_store_url(named)) +
                      ": run `team store use` to move it, or use another home");
    }
    return named;
}

void record_store_url(const fs::path& home, const std::string& url) {
    // Written whole to a new file and renamed over the config: a reader never sees half of it.
    fs::path path = home / "config";
    std::ostringstream text;
    {
        std::ifstream in(path);
        std::string line;
        while (std::getline(in, line)) {
            auto eq = line.find('=');
            std::string key = eq == std::string::npos ? "" : line.substr(0, eq);
            key.erase(0, key.find_first_not_of(" \t"));
            key.erase(key.find_last_not_of(" \t") + 1);
            if (key != "store") text << line << '\n';
        }
    }
    text << "store = " << (is_sqlite(url) ? "sqlite" : url) << '\n';
    fs::path tmp = home / ("config.tmp." + std::to_string(::getpid()));
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) throw failed("cannot write " + quote(path.string()) + ": " + std::strerror(errno));
    std::string body = text.str();
    bool ok = ::write(fd, body.data(), body.size()) == static_cast<ssize_t>(body.size());
    ok = ::fsync(fd) == 0 && ok;
    ::close(fd);
    if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
        int error = errno;
        ::unlink(tmp.c_str());
        throw failed("cannot write " + quote(path.string()) + ": " + std::strerror(error));
    }
}

Store::Store(const fs::path& home) : Store(home, resolve_store_url(home)) {}

Store::Store(const fs::path& home, const std::string& url, bool check_schema)
    : home_(home), url_(is_sqlite(url) ? "" : url), db_(open_store(home, url_)) {
    if (!check_schema || db_->engine() != Db::Engine::postgresql) return;
    int version = pg_schema_version(*db_);
    if (version == kSchemaVersion) return;
    std::string store = "the store " + quote(redact_store_url(url_));
    if (version == 0) {
        throw refused(store + " has no team schema yet: run `team store migrate` once");
    }
    if (version < kSchemaVersion) {
        throw refused(store + " has schema " + std::to_string(version) +
                      ", older than this team's " + std::to_string(kSchemaVersion) +
                      ": run `team store migrate`");
    }
    throw refused(store + " has schema " + std::to_string(version) + ", newer than this team's " +
                  std::to_string(kSchemaVersion) + ": upgrade team on this machine");
}

Store::~Store() = default;

std::string Store::shown() const {
    return url_.empty() ? db_path().string() : redact_store_url(url_);
}

const std::string& Store::home_id() {
    if (home_id_.empty()) home_id_ = team::home_id(home_);
    return home_id_;
}

bool Store::await_writer() {
    if (db_->engine() == Db::Engine::sqlite) return sqlite_await_writer(*db_);
    // The writers' lock taken shared for an instant: it waits for the write under way (which
    // holds it exclusively to its commit), e.g. the one that signalled this process from inside
    // its transaction.
    try {
        db_->exec("BEGIN; SET LOCAL lock_timeout = " + std::to_string(kBusyTimeoutMs) +
                  "; SELECT pg_advisory_xact_lock_shared(" + std::to_string(kPgWriteLockKey) +
                  "); COMMIT");
        return true;
    } catch (const StoreError&) {
        db_->rollback_write();
        return false;
    }
}

void rethrow_store_error(const std::exception& e) {
    if (auto* error = dynamic_cast<const Error*>(&e)) throw *error;
    if (auto* store = dynamic_cast<const StoreError*>(&e)) {
        switch (store->kind()) {
            case StoreError::Kind::constraint:
            case StoreError::Kind::other:
                throw failed(std::string("store error: ") + store->what());
            default:
                throw failed(store->what());
        }
    }
    throw failed(e.what());
}

}  // namespace team
