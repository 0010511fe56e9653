#include "state/pg_db.hpp"

#include <libpq-fe.h>

#include <charconv>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "base/error.hpp"
#include "base/store_clock.hpp"
#include "state/pg_statement.hpp"
#include "state/pg_text.hpp"

namespace team {

namespace {

using Kind = StoreError::Kind;
using Result = PgResult;

// A connection keeps at most this many distinct SQL texts; beyond, statements run unnamed.
constexpr std::size_t kMaxPrepared = 1000;

std::string field(const PGresult* r, int code) {
    const char* value = r ? PQresultErrorField(r, code) : nullptr;
    return value ? value : "";
}

class PgDb final : public Db, public PgConnection {
  public:
    PgDb(PGconn* conn, const std::string& url) : conn_(conn), url_(url) {
        redacted_ = pg_redact_url(url, secrets_);
        name_ = quote(redacted_);
        try {
            set_up_session();
        } catch (...) {
            PQfinish(conn_);
            throw;
        }
    }
    ~PgDb() override { PQfinish(conn_); }

    Engine engine() const override { return Engine::postgresql; }
    std::unique_ptr<StatementImpl> prepare(std::string_view sql) override {
        return make_pg_statement(*this, sql);
    }
    void exec(const std::string& sql) override {
        retried([&] {
            reconnect_if_lost();
            check(PQexec(conn_, sql.c_str()), When::statement);
            return 0;
        });
    }

    // The writers' lock, taken shared for a shared turn (Db::Turn), whose appenders' lock
    // waits for its first row of a log read by cursor (run_once).
    void begin_write(Turn turn) override {
        static const std::string alone =
            "BEGIN; SET LOCAL lock_timeout = " + std::to_string(kPgLockTimeoutMs) +
            "; SELECT pg_advisory_xact_lock(" + std::to_string(kPgWriteLockKey) + ")";
        static const std::string shared =
            "BEGIN; SET LOCAL lock_timeout = " + std::to_string(kPgLockTimeoutMs) +
            "; SELECT pg_advisory_xact_lock_shared(" + std::to_string(kPgWriteLockKey) + ")";
        begin_with(turn == Turn::shared ? shared : alone);
        append_turn_due_ = turn == Turn::shared;
    }
    void commit_write() override {
        // One literal (GCC 12 takes a string built from the channel's name for an overflow).
        static constexpr const char* commit = "NOTIFY team_changes; COMMIT";
        static constexpr const char* commit_messages =
            "NOTIFY team_changes; NOTIFY team_messages; COMMIT";
        static_assert(std::string_view(kPgChangeChannel) == "team_changes");
        static_assert(std::string_view(kPgMessageChannel) == "team_messages");
        if (lost_) throw error(nullptr, When::statement);  // the write went with the connection
        // The inboxes' channel when the messages repository said this write stores one.
        check(PQexec(conn_, changes(Change::messages) ? commit_messages : commit), When::commit);
        in_write_ = false;
        append_turn_due_ = false;
        forget_changes();
    }
    void rollback_write() noexcept override {
        in_write_ = false;
        append_turn_due_ = false;
        forget_changes();
        if (!lost_ && PQstatus(conn_) == CONNECTION_OK &&
            PQtransactionStatus(conn_) != PQTRANS_IDLE) {
            PQclear(PQexec(conn_, "ROLLBACK"));
        }
    }

    // Runs a statement, its parameters in text: unnamed the first time the connection runs its
    // SQL (one round trip, as a command that runs it once wants), prepared from the second on
    // (one round trip more, once; then each run costs about half, see prepared()).
    Result run(const std::string& sql, const std::vector<const char*>& values) override {
        return retried([&] { return run_once(sql, values); });
    }

    Result run_once(const std::string& sql, const std::vector<const char*>& values) {
        reconnect_if_lost();
        if (append_turn_due_ && (changes(Change::activity) || changes(Change::messages))) {
            // A shared write's first statement once a repository said it appends to a log read
            // by id as a cursor: the appenders' lock, held to the commit, so that those rows
            // commit in the order of their ids.
            static const std::string append =
                "SELECT pg_advisory_xact_lock(" + std::to_string(kPgAppendLockKey) + ")";
            check(PQexec(conn_, append.c_str()), When::statement);
            append_turn_due_ = false;
        }
        int n = static_cast<int>(values.size());
        const char* name = prepared(sql, n);
        PGresult* r =
            name ? PQexecPrepared(conn_, name, n, values.data(), nullptr, nullptr, 0)
                 : PQexecParams(conn_, sql.c_str(), n, nullptr, values.data(), nullptr, nullptr, 0);
        if (name && field(r, PG_DIAG_SQLSTATE) == "26000") prepared_.erase(sql);  // gone
        return check(r, When::statement);
    }

    // The number of columns sql's rows have, asked of the server before it runs.
    int columns(const std::string& sql, int parameters) override {
        reconnect_if_lost();
        auto it = prepared_.find(sql);
        const char* name =
            it != prepared_.end() && !it->second.empty() ? it->second.c_str() : nullptr;
        if (!name) {
            check(PQprepare(conn_, "", sql.c_str(), parameters, nullptr), When::statement);
            name = "";
        }
        return PQnfields(check(PQdescribePrepared(conn_, name), When::statement).get());
    }

    const std::string& name() const override { return name_; }

    bool share() {
        if (shared_) return false;
        shared_ = true;
        return true;
    }
    void unshare() { shared_ = false; }
    const std::string& url() const { return url_; }
    unsigned resets() const { return resets_; }

    PGconn* connection() {
        if (in_write_) return nullptr;
        try {
            reconnect_if_lost();
        } catch (const StoreError&) {
            return nullptr;
        }
        return conn_;
    }

  private:
    enum class When { begin, statement, commit };

    void begin_with(const std::string& begin) {
        reconnect_if_lost();
        in_write_ = true;
        forget_changes();
        Result r(PQexec(conn_, begin.c_str()), &PQclear);
        if (ok(r.get())) return;
        StoreError e = error(r.get(), When::begin);
        rollback_write();
        throw e;
    }

    static bool ok(const PGresult* r) {
        auto status = PQresultStatus(r);
        return r && (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK ||
                     status == PGRES_EMPTY_QUERY);
    }
    Result check(PGresult* raw, When when) {
        Result r(raw, &PQclear);
        if (!ok(r.get())) throw error(r.get(), when);
        return r;
    }

    // The server's name for sql, prepared now if it runs for the second time; nullptr: run it
    // unnamed. A one-row SELECT by key over a unix socket: 47-53 us unnamed (parse, plan and
    // run each time), 26-28 us prepared.
    const char* prepared(const std::string& sql, int parameters) {
        auto it = prepared_.find(sql);
        if (it == prepared_.end()) {
            if (prepared_.size() < kMaxPrepared) prepared_.emplace(sql, "");  // seen once
            return nullptr;
        }
        if (it->second.empty()) {
            std::string name = "s" + std::to_string(++prepared_count_);
            check(PQprepare(conn_, name.c_str(), sql.c_str(), parameters, nullptr),
                  When::statement);
            it->second = std::move(name);
        }
        return it->second.c_str();
    }

    void set_up_session() {
        prepared_.clear();
        // And the server's clock, in the same round trip: the store's time (base/store_clock.hpp).
        std::int64_t sent = machine_wall_ms();
        Result clock =
            check(PQexec(conn_,
                         "SET client_min_messages = warning; "
                         "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint"),
                  When::statement);
        std::int64_t received = machine_wall_ms();
        if (PQntuples(clock.get()) == 1) {
            std::int64_t server = 0;
            const char* text = PQgetvalue(clock.get(), 0, 0);
            if (std::from_chars(text, text + std::strlen(text), server).ec == std::errc()) {
                measure_store_clock(server, sent, received);
            }
        }
    }

    // fn(), and once more after a reconnect when it found the connection lost outside a write:
    // a long-lived process (a waiting reader, a server) whose store restarted reads on, as its
    // listener does (pg_listen.hpp). Inside a write the transaction went with the connection.
    template <class Fn>
    auto retried(Fn&& fn) -> decltype(fn()) {
        try {
            return fn();
        } catch (const StoreError& e) {
            if (in_write_ || e.kind() != Kind::unreachable) throw;
            return fn();
        }
    }

    // After a lost connection, the next statement reconnects once; not inside a write, whose
    // transaction went with the connection.
    void reconnect_if_lost() {
        if (!lost_ && PQstatus(conn_) == CONNECTION_OK) return;
        if (in_write_) throw error(nullptr, When::statement);
        PQreset(conn_);
        ++resets_;  // a listener sharing the connection lost its LISTEN (pg_resets)
        if (PQstatus(conn_) != CONNECTION_OK) throw error(nullptr, When::statement);
        lost_ = false;
        set_up_session();
    }

    // The one translation of a failed result (or connection) into the store's kinds.
    StoreError error(const PGresult* r, When when) {
        std::string state = field(r, PG_DIAG_SQLSTATE);
        std::string message = field(r, PG_DIAG_MESSAGE_PRIMARY);
        if (message.empty()) message = PQerrorMessage(conn_);
        message = pg_scrub_message(message, url_, secrets_, redacted_);
        if (message.empty()) message = "unknown error";
        std::string store = "the store " + name_;
        // No SQLSTATE: libpq's own failure, which is the connection's (a server that died
        // mid-query can leave PQstatus OK until the next call).
        if (PQstatus(conn_) != CONNECTION_OK || state.empty() || state.starts_with("08") ||
            state == "57P01" || state == "57P02" || state == "57P03") {
            lost_ = true;
            return StoreError(
                Kind::unreachable,
                "lost the connection to " + store + ": " + message +
                    (when == When::commit ? "; the change may or may not have been made"
                                          : "; nothing was changed"));
        }
        if (state.starts_with("23")) return StoreError(Kind::constraint, message);
        if (state == "25006" || state == "42501") {
            return StoreError(Kind::read_only,
                              "cannot write " + store + ": " + message + "; nothing was changed");
        }
        if (state == "53100") {
            return StoreError(Kind::full, "cannot write " + store +
                                              ": the server's disk is full; nothing was changed");
        }
        if (state == "55P03") {
            return StoreError(Kind::busy,
                              store + " is busy: another team command held it for more than " +
                                  std::to_string(kPgLockTimeoutMs / 1000) + "s; try again");
        }
        if (state == "40001" || state == "40P01") {
            return StoreError(Kind::busy, store + " is busy: " + message + "; try again");
        }
        if (state == "42P01") {
            return StoreError(Kind::damaged,
                              store + " is not a team store, or its schema is missing (" + message +
                                  "): run `team store migrate`");
        }
        return StoreError(Kind::other, message);
    }

    PGconn* conn_;
    std::string url_;
    std::string redacted_;
    std::string name_;  // redacted_, quoted
    std::vector<std::string> secrets_;
    bool in_write_ = false;
    bool append_turn_due_ = false;  // a shared write that has not appended to a log yet
    bool shared_ = false;           // a listener shares the connection (pg_share)
    unsigned resets_ = 0;           // reconnections so far (PQreset)
    bool lost_ = false;             // an error said the connection is gone
    std::unordered_map<std::string, std::string> prepared_;  // SQL -> name ("": run once)
    int prepared_count_ = 0;
};

}  // namespace

pg_conn* connect_postgresql(const std::string& url, std::string* reason) {
    // Defaults first: a setting of the expanded URL (dbname, last) overrides them.
    const char* const keys[] = {"connect_timeout",  "keepalives",
                                "keepalives_idle",  "keepalives_interval",
                                "keepalives_count", "tcp_user_timeout",
                                "application_name", "client_encoding",
                                "dbname",           nullptr};
    const char* const values[] = {"5",     "1",    "5",    "2",         "3",
                                  "10000", "team", "UTF8", url.c_str(), nullptr};
    PGconn* conn = PQconnectdbParams(keys, values, 1);
    if (conn && PQstatus(conn) == CONNECTION_OK) {
        PQsetNoticeProcessor(
            conn, [](void*, const char*) {}, nullptr);
        return conn;
    }
    if (reason) {
        std::vector<std::string> secrets;
        std::string redacted = pg_redact_url(url, secrets);
        *reason =
            conn ? pg_scrub_message(PQerrorMessage(conn), url, secrets, redacted) : "out of memory";
    }
    PQfinish(conn);
    return nullptr;
}

std::unique_ptr<Db> open_postgresql(const std::string& url) {
    std::string reason;
    PGconn* conn = connect_postgresql(url, &reason);
    if (!conn) {
        throw StoreError(Kind::cannot_open,
                         "cannot reach the store " + quote(redact_store_url(url)) + ": " + reason);
    }
    return std::make_unique<PgDb>(conn, url);
}

pg_conn* pg_connection(Db& db) {
    return static_cast<PgDb&>(db).connection();
}

bool pg_share(Db& db) {
    return static_cast<PgDb&>(db).share();
}

void pg_unshare(Db& db) {
    static_cast<PgDb&>(db).unshare();
}

unsigned pg_resets(const Db& db) {
    return static_cast<const PgDb&>(db).resets();
}

const std::string& pg_url(const Db& db) {
    return static_cast<const PgDb&>(db).url();
}

std::string pg_store_name(const Db& db) {
    const auto* pg = dynamic_cast<const PgDb*>(&db);
    return pg ? "the store " + pg->name() : "the store";
}

}  // namespace team
